"""``pi-guard evidence export ID --dsse`` and ``evidence verify-dsse FILE --key PUBKEY``."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from audit.wire import canonical_json
from guard import Guard
from guard._evidence.keys import KEYRING_FILE, KeyStore
from guard._home import AUDIT_LOG_FILE
from tests.cli_runner import Result, invoke

SECRET = "sk-proj-" + "Vb3nQ8rT2wXy7ZkLm4Pq9sJd"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def evidence_id(home: Path, tmp_path: Path) -> str:
    work = tmp_path / "work"
    work.mkdir()
    with Guard.open(home) as guard:
        result = guard.record(
            "bash", {"command": f"OPENAI_API_KEY={SECRET} rm -rf dist"}, str(work), confirmed=True
        )
    assert result.envelope is not None
    return result.envelope.details.evidence_id


@pytest.fixture
def pem(home: Path, evidence_id: str, tmp_path: Path) -> Path:
    public = KeyStore.open(home).load_signer().public_key
    path = tmp_path / "guard.pub"
    path.write_bytes(
        public.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return path


def export(home: Path, evidence_id: str, tmp_path: Path) -> Path:
    done = invoke("evidence", "export", evidence_id, "--dsse", home=home)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    out = tmp_path / "decision.dsse.json"
    out.write_text(done.stdout)
    return out


def verify(file: Path | str, key: Path) -> Result:
    return invoke("evidence", "verify-dsse", str(file), "--key", str(key))


def one_line(result: Result) -> str:
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr


def test_export_then_verify_with_the_pem_key_and_with_the_keyring(
    home: Path, evidence_id: str, pem: Path, tmp_path: Path
) -> None:
    file = export(home, evidence_id, tmp_path)
    assert SECRET not in file.read_text()
    assert SECRET not in base64.b64decode(json.loads(file.read_text())["payload"]).decode()
    for key in (pem, home / KEYRING_FILE):
        done = verify(file, key)
        assert done.returncode == 0, done.stderr
        check = json.loads(done.stdout)
        assert (check["decision"], check["reason"], check["evidenceId"]) == (
            "verified",
            "verified",
            evidence_id,
        )
    from_stdin = invoke("evidence", "verify-dsse", "-", "--key", str(pem), stdin=file.read_bytes())
    assert from_stdin.returncode == 0, from_stdin.stderr


def test_changed_payload_subject_or_signature_exit_3_with_one_line(
    home: Path, evidence_id: str, pem: Path, tmp_path: Path
) -> None:
    file = export(home, evidence_id, tmp_path)
    wire = json.loads(file.read_text())
    statement = json.loads(base64.b64decode(wire["payload"]))
    changed_subject = json.loads(json.dumps(statement))
    changed_subject["subject"][0]["digest"]["sha256"] = "0" * 64
    changed_payload = json.loads(json.dumps(statement))
    changed_payload["predicate"]["toolName"] = "read"
    sig = bytearray(base64.b64decode(wire["signatures"][0]["sig"]))
    sig[-1] ^= 0x80
    variants = {
        "payload": {**wire, "payload": base64.b64encode(canonical_json(changed_payload)).decode()},
        "subject": {**wire, "payload": base64.b64encode(canonical_json(changed_subject)).decode()},
        "signature": {
            **wire,
            "signatures": [{**wire["signatures"][0], "sig": base64.b64encode(sig).decode()}],
        },
        "payloadType": {**wire, "payloadType": "application/json"},
    }
    for name, variant in variants.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(variant))
        done = verify(path, pem)
        assert done.returncode == 3, (name, done.stderr)
        line = one_line(done)
        reason = "wrong-payload-type" if name == "payloadType" else "bad-signature"
        assert line.startswith(f"pi-guard: rejected: {reason}: "), line
        assert json.loads(done.stdout)["decision"] == "rejected"


def test_a_wrong_key_exit_3(home: Path, evidence_id: str, tmp_path: Path) -> None:
    file = export(home, evidence_id, tmp_path)
    other = tmp_path / "other"
    with Guard.open(other):
        pass
    done = verify(file, other / KEYRING_FILE)
    assert done.returncode == 3
    assert one_line(done).startswith("pi-guard: rejected: wrong-key: ")


def test_bad_input_is_one_line_and_exit_2(
    home: Path, evidence_id: str, pem: Path, tmp_path: Path
) -> None:
    file = export(home, evidence_id, tmp_path)
    not_json = tmp_path / "not.json"
    not_json.write_text("DSSEv1 not json")
    garbage_key = tmp_path / "garbage.pub"
    garbage_key.write_text("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
    text_key = tmp_path / "text.pub"
    text_key.write_text("hello")
    rsa_like = tmp_path / "private.pem"
    rsa_like.write_bytes((home / "signing.key").read_bytes())
    for args in (
        ("evidence", "verify-dsse", str(not_json), "--key", str(pem)),
        ("evidence", "verify-dsse", str(tmp_path / "missing.json"), "--key", str(pem)),
        ("evidence", "verify-dsse", str(file), "--key", str(tmp_path / "missing.pub")),
        ("evidence", "verify-dsse", str(file), "--key", str(garbage_key)),
        ("evidence", "verify-dsse", str(file), "--key", str(text_key)),
        ("evidence", "verify-dsse", str(file), "--key", str(rsa_like)),
        ("evidence", "verify-dsse", str(file)),
        ("evidence", "export", evidence_id),
        ("evidence", "export", "oce_" + "B" * 22, "--dsse"),
    ):
        done = invoke(*args, home=home)
        assert done.returncode == 2, (args, done.stderr)
        assert one_line(done).startswith("pi-guard"), done.stderr
        assert done.stdout == ""


def test_export_without_a_home_exit_2(tmp_path: Path) -> None:
    done = invoke("evidence", "export", "oce_" + "C" * 22, "--dsse", home=tmp_path / "none")
    assert done.returncode == 2
    assert "no guard home here" in one_line(done)


def test_export_of_a_tampered_log_exit_4(home: Path, evidence_id: str) -> None:
    log = home / AUDIT_LOG_FILE
    log.write_text(
        log.read_text().replace('"actionKind":"destructive"', '"actionKind":"protected"')
    )
    done = invoke("evidence", "export", evidence_id, "--dsse", home=home)
    assert done.returncode == 4, done.stderr
    assert one_line(done).startswith("pi-guard: audit integrity failure: ")
    assert done.stdout == ""
