from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from guard.evidence import KeyStore, PublicKeyring, Signer, SqliteLedger


@dataclass
class Keys:
    store: KeyStore
    signer: Signer

    def keyring(self) -> PublicKeyring:
        return self.store.public_keyring()


@pytest.fixture
def keys(tmp_path: Path) -> Keys:
    store = KeyStore.open(tmp_path / "home")
    signer, _ = store.ensure_key()
    return Keys(store, signer)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[SqliteLedger]:
    db = SqliteLedger.open(tmp_path / "ledger.sqlite3")
    yield db
    db.close()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root
