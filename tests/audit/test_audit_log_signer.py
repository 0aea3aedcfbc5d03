"""A head signer that misbehaves is refused before anything is written.

Each refusal is a SignerError naming what was bad (``what``) and showing it (``value``);
the log and its head stay exactly as they were, and a good signer can carry on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import SignerError
from audit.log import AuditLog
from audit.verify import verify_log
from tests.audit.audit_testkit import FixedSigner, executed


class _Signer:
    """A signer whose parts are given one by one."""

    def __init__(self, key_id: Any, public_key: Any, sign: Any) -> None:
        self.key_id = key_id
        self.public_key = public_key
        self.sign = sign


def _cases(signer: FixedSigner) -> dict[str, tuple[_Signer, str, str]]:
    other = FixedSigner(b"\x05" * 32)
    return {
        "key id not text": (_Signer(5, signer.public_key, signer.sign), "key id", "5"),
        "key id of another form": (
            _Signer("rsa:123", signer.public_key, signer.sign),
            "key id",
            "rsa:123",
        ),
        "key id in upper case": (
            _Signer(signer.key_id.upper(), signer.public_key, signer.sign),
            "key id",
            signer.key_id.upper(),
        ),
        "no public key": (_Signer(signer.key_id, None, signer.sign), "public key", "None"),
        "public key as bytes": (
            _Signer(signer.key_id, b"\x00" * 4, signer.sign),
            "public key",
            repr(b"\x00" * 4),
        ),
        "key id of another key": (
            _Signer(other.key_id, signer.public_key, signer.sign),
            "key id (not the signer's public key)",
            other.key_id,
        ),
        "short signature": (
            _Signer(signer.key_id, signer.public_key, lambda message: b"x" * 10),
            "signature",
            "does not verify with the signer's public key",
        ),
        "signature by another key": (
            _Signer(signer.key_id, signer.public_key, other.sign),
            "signature",
            "does not verify with the signer's public key",
        ),
    }


@pytest.mark.parametrize(
    "case",
    [
        "key id not text",
        "key id of another form",
        "key id in upper case",
        "no public key",
        "public key as bytes",
        "key id of another key",
        "short signature",
        "signature by another key",
    ],
)
def test_a_bad_signer_is_refused_and_nothing_is_written(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey], case: str
) -> None:
    bad, what, value = _cases(signer)[case]
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("before"))
        content = log_path.read_bytes()
        head = log_path.with_name("audit.jsonl.head").read_bytes()
        log.use_signer(bad)
        with pytest.raises(SignerError) as err:
            log.append("tool.executed", executed("refused"))
        assert (err.value.what, err.value.value) == (what, value)
        assert str(err.value) == f"head signer returned a bad {what}: {value}"
        assert log_path.read_bytes() == content
        assert log_path.with_name("audit.jsonl.head").read_bytes() == head
        log.use_signer(signer)
        log.append("tool.executed", executed("after"))
    assert verify_log(log_path, keys).decision == "intact"
