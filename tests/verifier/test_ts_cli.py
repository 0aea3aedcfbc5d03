"""``node verifier/src/cli.ts``: exit codes and one JSON object on stdout, like the guard's CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.audit.tlog_vectors import load as load_tlog
from tests.guard.evidence.envelope_vectors import load as load_envelopes
from tools.pi.harness import ensure_pi

# Node >= 22 comes from npm (.cache/node) when the machine's is older: not in make check.
pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "verifier" / "src" / "cli.ts"
PROOFS = {v["id"]: v for v in load_tlog("proofs.json")["vectors"]}
CHECKPOINTS = {v["id"]: v for v in load_tlog("checkpoints.json")["vectors"]}
ENVELOPES = load_envelopes()
VKEY = load_tlog("proofs.json")["vkey"]


@pytest.fixture(scope="module")
def node() -> Path:
    return ensure_pi(REPO, "current").node


def _cli(node: Path, *args: str, stdin: str | None = None) -> tuple[int, Any, str]:
    done = subprocess.run(
        [str(node), str(CLI), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    out = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, out, done.stderr


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("vector", "code"),
    [
        ("inclusion-valid-every-record", 0),
        ("consistency-valid-3-to-8", 0),
        ("inclusion-hash-flipped", 4),
        ("consistency-rollback", 4),
        ("inclusion-two-bad-entries", 4),
        ("not-json", 2),
        ("inclusion-leaf-index-a-float", 2),
        ("inclusion-checkpoint-of-another-log", 4),
    ],
)
def test_verify_proof(node: Path, tmp_path: Path, vector: str, code: int) -> None:
    v = PROOFS[vector]
    status, out, err = _cli(
        node, "verify-proof", _file(tmp_path, "p.json", v["file"]), "--key", VKEY
    )
    assert status == code, err
    assert {"decision": out["decision"], "reasons": out["reasons"]} == v["expected"]
    if vector == "inclusion-valid-every-record":
        assert [e["leafIndex"] for e in out["entries"]] == list(range(8))
        assert out["treeSize"] == 8


def test_verify_proof_from_stdin_and_keys_from_a_file(node: Path, tmp_path: Path) -> None:
    keys = _file(tmp_path, "keys", f"# the log's key\n{VKEY}\n")
    status, out, _ = _cli(
        node, "verify-proof", "-", "--key", f"@{keys}", stdin=PROOFS["inclusion-valid"]["file"]
    )
    assert status == 0
    assert out["decision"] == "valid"


@pytest.mark.parametrize(("vector", "code"), [("valid", 0), ("signature-bit-flipped", 4)])
def test_verify_checkpoint(node: Path, tmp_path: Path, vector: str, code: int) -> None:
    v = CHECKPOINTS[vector]
    status, out, _ = _cli(
        node, "verify-checkpoint", _file(tmp_path, "cp", v["note"]), "--key", VKEY
    )
    assert status == code
    assert out["decision"] == v["expected"]["decision"]
    if code == 0:
        assert out["treeSize"] == 8
        assert out["vkey"] == VKEY
        assert out["signer"] == out["origin"]


@pytest.mark.parametrize(
    ("vector", "code"), [("valid", 0), ("expired", 3), ("signature-bit-changed", 3)]
)
def test_verify_envelope(node: Path, tmp_path: Path, vector: str, code: int) -> None:
    v = next(x for x in ENVELOPES["vectors"] if x["id"] == vector)
    ring = _file(tmp_path, "keyring.json", json.dumps(ENVELOPES["keyring"]))
    env = _file(tmp_path, "envelope.json", v["envelope"])
    status, out, err = _cli(
        node, "verify-envelope", env, "--keyring", ring, "--now", v["now"], *_call(v)
    )
    assert status == code, err
    assert {"decision": out["decision"], "reasons": out["reasons"]} == v["expected"]
    assert out["dispatchAllowed"] is False
    assert out["authorization"] == "none"


def _call(vector: dict[str, Any]) -> list[str]:
    """The pending call's id the vector's consumer names, as the CLI's option."""
    return ["--tool-call-id", vector["toolCallId"]] if "toolCallId" in vector else []


@pytest.mark.parametrize(
    ("flags", "code", "reasons"),
    [
        ([], 3, ["call-id-required"]),
        (["--tool-call-id", "call_1"], 0, []),
        (["--tool-call-id", "call_2"], 3, ["tool-call-id-mismatch"]),
        (["--tool-call-id", "CALL_1"], 3, ["tool-call-id-mismatch"]),
        (["--tool-call-id", "call_1 "], 3, ["tool-call-id-mismatch"]),
        (["--tool-call-id", ""], 3, ["tool-call-id-mismatch"]),
        (["--call-checked-elsewhere"], 0, []),
        (["--call-checked-elsewhere", "--tool-call-id", "call_2"], 3, ["tool-call-id-mismatch"]),
    ],
)
def test_verify_envelope_wants_the_call_id(
    node: Path, tmp_path: Path, flags: list[str], code: int, reasons: list[str]
) -> None:
    """Evidence bound to call_1: refused unless the consumer names call_1 or says it checks
    the call some other way; the opt-out never covers another call's id."""
    v = next(x for x in ENVELOPES["vectors"] if x["id"] == "valid")
    ring = _file(tmp_path, "keyring.json", json.dumps(ENVELOPES["keyring"]))
    env = _file(tmp_path, "envelope.json", v["envelope"])
    status, out, err = _cli(
        node, "verify-envelope", env, "--keyring", ring, "--now", v["now"], *flags
    )
    assert (status, out["reasons"]) == (code, reasons), err
    assert out["decision"] == ("match" if code == 0 else "mismatch")


@pytest.mark.parametrize(
    ("vector", "flags", "code", "decision"),
    [
        ("valid-runtime-grant", [], 0, "match"),
        ("valid-runtime-grant", ["--require-dialog"], 3, "not-dialog"),
        ("valid", ["--require-dialog"], 0, "match"),
        ("covered-by-with-runtime-ui-confirm", [], 3, "malformed"),
    ],
)
def test_verify_envelope_require_dialog(
    node: Path, tmp_path: Path, vector: str, flags: list[str], code: int, decision: str
) -> None:
    v = next(x for x in ENVELOPES["vectors"] if x["id"] == vector)
    ring = _file(tmp_path, "keyring.json", json.dumps(ENVELOPES["keyring"]))
    env = _file(tmp_path, "envelope.json", v["envelope"])
    status, out, err = _cli(
        node, "verify-envelope", env, "--keyring", ring, "--now", v["now"], *_call(v), *flags
    )
    assert status == code, err
    assert out["decision"] == decision
    if decision == "not-dialog":
        assert out["reasons"] == ["grant-covered"]
        assert out["evidenceId"] == json.loads(v["envelope"])["details"]["evidenceId"]


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["verify-proof"],
        ["verify-proof", "/nonexistent/proof.json", "--key", "x"],
        ["verify-proof", "-", "--key", "not a vkey"],
        ["verify-proof", "-"],
        ["frobnicate", "x"],
        ["verify-proof", "-", "--key", "a+b+c", "--bogus"],
        ["verify-envelope", "-", "--keyring", "/nonexistent"],
        ["verify-checkpoint", "-", "--key", "a+b+c", "--keyring", "/dev/null"],
        ["verify-checkpoint", "-", "--keyring", "/dev/null"],
        ["verify-envelope", "-", "--keyring", "/dev/null", "--now", "yesterday"],
    ],
)
def test_bad_usage_is_exit_2_with_one_line(node: Path, args: list[str]) -> None:
    status, out, err = _cli(node, *args, stdin="")
    assert status == 2
    assert out is None
    assert "Error" not in err and "    at " not in err  # no stack trace
