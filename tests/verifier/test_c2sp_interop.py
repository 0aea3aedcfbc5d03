"""The guard's checkpoints against an existing, independent C2SP implementation: aics-tlog.

aics-tlog (PyPI, Apache-2.0) implements c2sp.org/signed-note with the C2SP Ed25519 key id,
c2sp.org/tlog-checkpoint and the RFC 9162 proof checks on its own. It is a test-only dependency
(tests/verifier/interop-requirements.txt, installed by ``make test``). Here it must parse our
vkey to the same key id, verify every guard checkpoint we accept, refuse what C2SP itself refuses,
sign byte-for-byte the same note as the guard from the same key, and accept our proofs.
Where our parser is deliberately stricter than C2SP, or aics-tlog's profile differs, the
vector is listed below with the reason, so a change on either side shows up here.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from audit.tlog import Checkpoint, leaf_hash, open_checkpoint, root_of, sign_checkpoint
from tests.audit.tlog_vectors import load

try:
    import aics_tlog
except ImportError:  # pragma: no cover - make test installs it
    pytest.fail(
        "aics-tlog is missing: run `make test` (or pip install --no-deps --ignore-requires-python "
        "--require-hashes -r tests/verifier/interop-requirements.txt)",
        pytrace=False,
    )

DOC = load("checkpoints.json")
PROOFS = load("proofs.json")
VKEY = DOC["vkey"]

# Vectors where aics-tlog's verdict differs from ours, and why (C2SP leaves room for both).
DIFFERS = {
    "valid-same-line-twice": "aics-tlog (AICS-1 section 6.2) refuses a repeated line by a known "
    "key; C2SP is silent and Go's sumdb/note ignores the repeat, as we do",
    "size-2-to-the-63": "our sizes stop below 2**63 (a signed 64-bit count); aics-tlog takes any",
    "extension-line": "tlog-checkpoint allows extension lines; our checkpoints have none",
    "missing-final-newline": "C2SP ends every signature line with a newline; aics-tlog does not ask",
    "del-in-text": "C2SP forbids controls below U+0020; we also refuse DEL (U+007F)",
    "101-signature-lines": "C2SP leaves the cap to the verifier (at least 16): ours is 100, "
    "aics-tlog's 1000",
}
# aics-tlog takes witnesses only as cosignature/v1 keys (type 0x04): a second note key (ours
# are type 0x01) cannot be given to it, so these vectors test nothing there.
NOT_APPLICABLE = {"known-witness-signature-bad", "valid-known-witness-key-verifies"}


def _note(vector: dict[str, Any]) -> bytes:
    if "noteBase64" in vector:
        return base64.b64decode(vector["noteBase64"])
    text: str = vector["note"]
    return text.encode("utf-8")


def _aics_verifies(vector: dict[str, Any]) -> bool:
    try:
        log_key = aics_tlog.parse_vkey(vector["keys"][0])
        note = aics_tlog.parse_note(_note(vector))
        result = aics_tlog.verify_checkpoint(note, log_key, expected_origin=vector.get("origin"))
    except ValueError:
        return False
    return bool(result.ok)


def test_aics_parses_our_vkey_to_the_c2sp_key_id() -> None:
    key = aics_tlog.parse_vkey(VKEY)
    name, key_id_hex, _ = VKEY.split("+", 2)
    assert key.name == name == DOC["origin"]
    assert key.key_id.hex() == key_id_hex
    assert key.key_type == 0x01
    assert aics_tlog.format_vkey(key) == VKEY


@pytest.mark.parametrize(
    "vector",
    [v for v in DOC["vectors"] if v["id"] not in NOT_APPLICABLE],
    ids=lambda v: v["id"],
)
def test_aics_reaches_our_verdict(vector: dict[str, Any]) -> None:
    ours = vector["expected"]["decision"] == "verified"
    if vector["id"] in DIFFERS:
        assert _aics_verifies(vector) is not ours, DIFFERS[vector["id"]]
    else:
        assert _aics_verifies(vector) is ours


def test_every_valid_guard_checkpoint_verifies_with_aics() -> None:
    valid = [
        v
        for v in DOC["vectors"]
        if v["expected"]["decision"] == "verified"
        and v["id"] not in DIFFERS.keys() | NOT_APPLICABLE
    ]
    assert len(valid) >= 6
    assert all(_aics_verifies(v) for v in valid)


def test_aics_signs_the_same_note_as_the_guard_and_the_guard_opens_it() -> None:
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(DOC["logSeedHex"]))
    root = root_of([leaf_hash(json.dumps({"seq": i}).encode()) for i in range(5)])
    theirs = aics_tlog.sign_checkpoint(
        aics_tlog.Checkpoint(DOC["origin"], 5, root), private, DOC["origin"]
    ).to_bytes()
    ours = sign_checkpoint(Checkpoint(DOC["origin"], 5, root), private.public_key(), private.sign)
    assert theirs == ours
    opened = open_checkpoint(theirs, {"log": private.public_key()}, origin=DOC["origin"])
    assert (opened.checkpoint.size, opened.checkpoint.root) == (5, root)


@pytest.mark.parametrize(
    "vector",
    [v for v in PROOFS["vectors"] if v["expected"]["decision"] == "valid"],
    ids=lambda v: v["id"],
)
def test_aics_accepts_our_valid_proofs(vector: dict[str, Any]) -> None:
    proof = json.loads(vector["file"])
    key = aics_tlog.parse_vkey(vector["keys"][0])

    def checkpoint(text: str) -> Any:
        note = aics_tlog.parse_note(text)
        assert aics_tlog.verify_checkpoint(note, key).ok
        return aics_tlog.parse_checkpoint(note.text)

    if proof["kind"] == "inclusion":
        cp = checkpoint(proof["checkpoint"])
        for entry in proof["entries"]:
            hashes = [base64.b64decode(h) for h in entry["hashes"]]
            assert aics_tlog.verify_leaf_inclusion(
                entry["line"].encode(), entry["leafIndex"], cp.size, hashes, cp.root
            )
    else:
        old, new = checkpoint(proof["old"]), checkpoint(proof["new"])
        hashes = [base64.b64decode(h) for h in proof["hashes"]]
        assert aics_tlog.verify_consistency(old.size, new.size, old.root, new.root, hashes)
