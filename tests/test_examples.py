"""The documented monitor example really works against a pi-shaped session file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from guard import Guard

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "monitor_consume.py"
CALL = {"command": "rm -rf build"}


def test_monitor_example_consumes_once_from_a_session_file(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    with Guard.open(home) as guard:
        rec = guard.record(
            "bash",
            CALL,
            project,
            confirmed=True,
            tool_call_id="call_1",
            origin="runtime-ui-confirm",
        )
    assert rec.envelope is not None
    session = tmp_path / "session.jsonl"
    entries = [
        {"type": "session", "id": "s1"},
        {
            "type": "custom",
            "customType": "operator-confirmation-evidence",
            "data": rec.envelope.model_dump(mode="json"),
        },
    ]
    session.write_text("".join(json.dumps(e) + "\n" for e in entries))
    args = [
        sys.executable,
        str(EXAMPLE),
        "--session",
        str(session),
        "--tool-call-id",
        "call_1",
        "--tool",
        "bash",
        "--input",
        json.dumps(CALL),
        "--cwd",
        str(project),
        "--home",
        str(home),
    ]
    first = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["decision"] == "consumed"
    second = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert second.returncode == 3
    assert json.loads(second.stdout)["match"]["decision"] == "consumed"
    other = subprocess.run(
        [*args[:5], "call_2", *args[6:]], capture_output=True, text=True, timeout=60
    )
    assert other.returncode == 3
    assert json.loads(other.stdout)["match"]["decision"] == "missing"


def test_the_guides_hand_checked_proof_holds() -> None:
    """docs/examples/proof-inclusion.json verifies, and the hand values of docs/auditor.md are
    its own."""
    import base64
    import hashlib

    from audit.tlog import parse_vkeys, verify_proof

    docs = Path(__file__).resolve().parent.parent / "docs"
    proof = (docs / "examples" / "proof-inclusion.json").read_bytes()
    keys = parse_vkeys((docs / "examples" / "proof-inclusion.vkey").read_text())
    assert verify_proof(proof, keys).decision == "valid"
    entry = json.loads(proof)["entries"][0]
    leaf = hashlib.sha256(b"\x00" + entry["line"].encode()).hexdigest()
    left = base64.b64decode(entry["hashes"][0]).hex()
    root = hashlib.sha256(b"\x01" + bytes.fromhex(left) + bytes.fromhex(leaf)).digest()
    page = (docs / "auditor.md").read_text()
    for shown in (leaf, left, base64.b64encode(root).decode()):
        assert shown in page


def _hand_check() -> str:
    page = (Path(__file__).resolve().parent.parent / "docs" / "auditor.md").read_text()
    block = page.split("<!-- hand-check -->", 1)[1].split("<!-- /hand-check -->", 1)[0]
    return block.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_guides_hand_check_of_an_operator_signature_runs(tmp_path: Path) -> None:
    """The guide's few lines check a real passkey-signed envelope, and fail on a changed one."""
    import secrets

    from audit.wire import utc_now
    from guard._operator import enrolled_credential
    from tests.softauthn import SoftAuthenticator

    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    key = SoftAuthenticator()
    challenge = secrets.token_bytes(32)
    with Guard.open(home) as guard:
        guard.operators.enroll(
            enrolled_credential(
                key.register(challenge),
                challenge=challenge,
                rp_id=key.rp_id,
                origin=key.origin,
                label="hand",
                now=utc_now(),
            )
        )
        reservation = guard.operators.reserve("bash", CALL, project, tool_call_id="call_1")
        assert reservation is not None
        rec = guard.record("bash", CALL, project, confirmed=True, tool_call_id="call_1",
                           origin="runtime-ui-confirm",
                           signed=(reservation, key.sign_details(reservation.statement)))  # fmt: skip
    assert rec.envelope is not None
    envelope = rec.envelope.model_dump(mode="json")
    (tmp_path / "envelope.json").write_text(json.dumps(envelope))
    (tmp_path / "keyring.json").write_bytes((home / "keyring.json").read_bytes())
    run = [sys.executable, "-c", _hand_check()]
    ok = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("signed by hand sign count 1")
    envelope["details"]["toolCallId"] = "call_2"  # the statement of another call
    (tmp_path / "envelope.json").write_text(json.dumps(envelope))
    bad = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "AssertionError" in bad.stderr
