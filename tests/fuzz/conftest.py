"""A guard world shared by the fuzz tests: keys, keyring, ledger, a signed-envelope factory.

Session-scoped (hypothesis runs many examples per test; rebuilding keys per example would
measure key generation, not the code under test). Every example mints its own envelope
with a fresh evidence id, so examples never interfere through the ledger.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from audit.wire import utc_now
from guard import ConsumeResult, Fingerprint
from guard._evidence.envelope import mint_envelope
from guard.evidence import (
    KeyStore,
    PublicKeyring,
    Signer,
    SqliteLedger,
    check_and_consume,
    compute_fingerprint,
)

TOOL_INPUT: dict[str, Any] = {"command": "rm -rf build"}


@dataclass
class World:
    """Everything a monitor consumer has, plus the signing key to mint test envelopes."""

    root: Path
    project: Path
    signer: Signer
    keyring: PublicKeyring
    ledger: SqliteLedger
    pending: Fingerprint

    def now(self) -> datetime:
        return utc_now()

    def mint(
        self, *, signer: Signer | None = None, ttl: int = 60, fingerprint: Fingerprint | None = None
    ) -> dict[str, Any]:
        """A fresh, validly signed envelope for the pending call, as wire JSON."""
        envelope = mint_envelope(
            signer or self.signer,
            fingerprint or self.pending,
            origin="runtime-ui-confirm",
            ttl_seconds=ttl,
            now=self.now() - timedelta(seconds=1),
        )
        dumped: dict[str, Any] = envelope.model_dump(mode="json")
        return dumped

    def consume(self, raw: Any) -> ConsumeResult:
        return check_and_consume(
            raw, self.pending, keyring=self.keyring, ledger=self.ledger, now=self.now()
        )


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("fuzz-world")
    project = root / "project"
    (project / "build").mkdir(parents=True)
    store = KeyStore.open(root / "home")
    signer, _ = store.ensure_key()
    ledger = SqliteLedger.open(root / "ledger.sqlite3")
    pending = compute_fingerprint("destructive", "bash", TOOL_INPUT, project)
    yield World(root, project, signer, store.public_keyring(), ledger, pending)
    ledger.close()
