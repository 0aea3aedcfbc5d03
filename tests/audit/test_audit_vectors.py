"""The stored example log, checked twice: by ``verify_log`` and by an independent
re-implementation of the documented format (reference ``rfc8785``, ``hashlib`` and
``cryptography`` only), as an auditor in another language would.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from pathlib import Path

import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit.verify import build_report, read_records, verify_log

VECTORS = Path(__file__).parent.parent / "vectors" / "audit"


def _b64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _keyring() -> dict[str, Ed25519PublicKey]:
    data = json.loads((VECTORS / "keyring.json").read_text())
    return {
        k["keyId"]: Ed25519PublicKey.from_public_bytes(_b64(k["publicKey"])) for k in data["keys"]
    }


def test_vector_verifies_with_the_library() -> None:
    result = verify_log(VECTORS / "audit.jsonl", _keyring())
    assert (result.decision, result.records, result.last_seq) == ("intact", 8, 7)


def test_vector_verifies_with_an_independent_implementation() -> None:
    def sha(data: bytes) -> str:
        return "sha256:" + hashlib.sha256(data).hexdigest()

    raw = (VECTORS / "audit.jsonl").read_bytes()
    assert raw.endswith(b"\n")
    prev = None
    for seq, line in enumerate(raw[:-1].split(b"\n")):
        record = json.loads(line)
        assert rfc8785.dumps(record) == line
        assert record["seq"] == seq
        body = {k: v for k, v in record.items() if k != "hash"}
        assert record["hash"] == sha(rfc8785.dumps(body))
        if seq == 0:
            assert record["event"] == "log.created"
            genesis = b"pi-operator-guard/audit-genesis/v1\n" + record["data"]["logId"].encode()
            assert record["prev"] == sha(genesis)
        else:
            assert record["prev"] == prev
        prev = record["hash"]

    head = json.loads((VECTORS / "audit.jsonl.head").read_bytes())
    assert (head["seq"], head["hash"]) == (seq, prev)
    unsigned = {k: v for k, v in head.items() if k != "signature"}
    message = b"pi-operator-guard/audit-head/v1\n" + rfc8785.dumps(unsigned)
    _keyring()[head["keyId"]].verify(_b64(head["signature"]), message)


def test_vector_report() -> None:
    report = build_report(read_records(VECTORS / "audit.jsonl"))
    assert [(r.tool_call_id, r.classification, r.reason, r.consumption) for r in report.rows] == [
        ("call_1", "auditable", None, "consumed"),
        ("call_2", "audit-gap", "evidence-declined", None),
    ]
    assert b"ghp_" not in (VECTORS / "audit.jsonl").read_bytes()


@pytest.mark.parametrize(("cut", "fault"), [(1, "torn-line"), (0, "records-missing-at-end")])
def test_vector_copy_cut_at_the_end_is_caught(tmp_path: Path, cut: int, fault: str) -> None:
    for name in ("audit.jsonl", "audit.jsonl.head"):
        shutil.copy(VECTORS / name, tmp_path / name)
    lines = (tmp_path / "audit.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "audit.jsonl").write_bytes(b"".join(lines[:-1]) + lines[-1][: cut * 10])
    assert verify_log(tmp_path / "audit.jsonl", _keyring()).fault == fault
