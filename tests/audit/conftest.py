from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from tests.audit.audit_testkit import FixedSigner, keyring


@pytest.fixture
def signer() -> FixedSigner:
    return FixedSigner(bytes(range(32)))


@pytest.fixture
def other_signer() -> FixedSigner:
    return FixedSigner(bytes(range(1, 33)))


@pytest.fixture
def keys(signer: FixedSigner) -> dict[str, Ed25519PublicKey]:
    return keyring(signer)


@pytest.fixture
def log_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "audit.jsonl"
