"""The independent TypeScript verifier (verifier/) in ``make test``.

Runs its node tests (``node --test``, Node >= 22.18 runs the TypeScript as it is) over every
shared vector, checks that none was skipped, and compares its answer on each vector with the
Python implementation's: both must say what the vector states (for the operator-signature
vectors, ``operatorSignature`` too: ``verified`` or ``none`` on a match).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.audit.tlog_vectors import checkpoint_result, proof_result
from tests.audit.tlog_vectors import load as load_tlog
from tests.guard.evidence.envelope_vectors import envelope_result, keyring
from tests.guard.evidence.envelope_vectors import load as load_envelopes
from tests.guard.evidence.test_operator_vectors import load as load_operator
from tests.guard.evidence.test_operator_vectors import operator_result
from tools.pi.harness import ensure_pi

# Node >= 22 comes from npm (.cache/node) when the machine's is older: not in make check.
pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[2]
VERIFIER = REPO / "verifier"
RFC_PROBES = 98 + 98

FILES: dict[str, list[dict[str, Any]]] = {
    "tlog/checkpoints.json": load_tlog("checkpoints.json")["vectors"],
    "tlog/proofs.json": load_tlog("proofs.json")["vectors"],
    "evidence/envelopes.json": load_envelopes()["vectors"],
    "operator/envelopes.json": load_operator()["vectors"],
}


@pytest.fixture(scope="session")
def node() -> Path:
    """A Node that runs TypeScript (>= 22.18): the one the current pinned pi runs with."""
    return ensure_pi(REPO, "current").node


@pytest.fixture(scope="session")
def ts_run(node: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("verifier") / "results.json"
    done = subprocess.run(
        [str(node), "--test", "--test-reporter=tap", "test/*.test.ts"],
        cwd=VERIFIER,
        env={"PATH": "/usr/bin:/bin", "VERIFIER_RESULTS": str(out), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return {"done": done, "results": json.loads(out.read_text()) if out.exists() else {}}


def _count(tap: str, what: str) -> int:
    found = re.search(rf"^# {what} (\d+)$", tap, re.MULTILINE)
    assert found is not None, f"no '# {what}' line in the node test output"
    return int(found.group(1))


def test_the_node_tests_pass_and_none_is_skipped(ts_run: dict[str, Any]) -> None:
    done = ts_run["done"]
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert _count(done.stdout, "fail") == 0
    assert _count(done.stdout, "skipped") == 0
    assert _count(done.stdout, "todo") == 0
    vectors = sum(len(v) for v in FILES.values())
    assert _count(done.stdout, "pass") >= vectors + 4  # + the RFC 6962 known-answer tests


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_typescript_verifier_answered_every_vector(ts_run: dict[str, Any], name: str) -> None:
    answers = ts_run["results"].get(name, {})
    assert sorted(answers) == sorted(v["id"] for v in FILES[name])
    assert len(answers) >= 50


def _python(name: str, vector: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    if name == "tlog/checkpoints.json":
        return checkpoint_result(vector)
    if name == "tlog/proofs.json":
        return proof_result(vector)
    if name == "operator/envelopes.json":
        return operator_result(vector, load_operator(), tmp_path)
    return envelope_result(vector, keyring(load_envelopes()), tmp_path)


@pytest.mark.parametrize(
    ("name", "vector"),
    [pytest.param(name, v, id=f"{name}:{v['id']}") for name in FILES for v in FILES[name]],
)
def test_both_implementations_agree(
    ts_run: dict[str, Any], name: str, vector: dict[str, Any], tmp_path: Path
) -> None:
    typescript = ts_run["results"][name][vector["id"]]
    python = _python(name, vector, tmp_path)
    assert typescript == python == vector["expected"]


def test_the_rfc_probes_run_on_both_sides() -> None:
    merkle = load_tlog("merkle-rfc6962.json")
    assert len(merkle["inclusion"]) + len(merkle["consistency"]) == RFC_PROBES
    source = (VERIFIER / "test" / "merkle.test.ts").read_text()
    assert "assert.equal(probes.length, 98)" in source


OPERATOR = {v["id"]: v for v in FILES["operator/envelopes.json"]}


@pytest.mark.parametrize(
    ("vector", "flags", "code", "decision", "signed"),
    [
        ("valid-without-operator-signature", (), 0, "match", "none"),
        (
            "valid-without-operator-signature",
            ("--require-operator-signature",),
            3,
            "not-operator-signed",
            None,
        ),
        ("valid-es256", ("--require-operator-signature",), 0, "match", "verified"),
        ("valid-rs256", (), 0, "match", "verified"),
        ("not-verified", (), 3, "untrusted", None),
    ],
)
def test_the_cli_checks_the_operators_signature(
    node: Path,
    tmp_path: Path,
    vector: str,
    flags: tuple[str, ...],
    code: int,
    decision: str,
    signed: str | None,
) -> None:
    """``verify-envelope --require-operator-signature``: exit 3 for evidence without one."""
    v = OPERATOR[vector]
    (tmp_path / "keyring.json").write_text(json.dumps(load_operator()["keyring"]))
    (tmp_path / "envelope.json").write_text(v["envelope"], encoding="utf-8")
    envelope, ring = str(tmp_path / "envelope.json"), str(tmp_path / "keyring.json")
    done = subprocess.run(
        [
            str(node),
            "src/cli.ts",
            "verify-envelope",
            envelope,
            "--keyring",
            ring,
            "--now",
            v["now"],
            "--tool-call-id",
            v["toolCallId"],
            *flags,
        ],
        cwd=VERIFIER,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    out = json.loads(done.stdout)
    assert (done.returncode, out["decision"], out["operatorSignature"]) == (code, decision, signed)
    if decision == "not-operator-signed":
        assert out["reasons"] == ["no-operator-signature"]
