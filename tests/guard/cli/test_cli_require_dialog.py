"""``pi-guard consume --require-dialog``: evidence a scoped grant covered is refused, exit 3,
and stays unconsumed; evidence from a dialog is consumed as without the flag."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from audit.wire import utc_now
from guard import Guard
from guard._evidence.envelope import mint_envelope
from guard._evidence.models import CoveredBy
from guard.evidence import KeyStore
from tests.guard.cli.test_cli import RM, record, run

GRANT = CoveredBy(
    grant_id="grant_AAECAwQFBgcICQoLDA0ODw", use=1, grant_evidence_id="oce_" + "C" * 22
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    return p


def granted(home: Path, project: Path) -> dict[str, Any]:
    """Evidence for ``rm -rf build`` in ``project`` that a grant covered, signed by ``home``'s key."""
    with Guard.open(home) as guard:
        pending = guard.evaluate("bash", json.loads(RM), project).fingerprint
    assert pending is not None
    signer, _ = KeyStore.open(home).ensure_key()
    envelope = mint_envelope(
        signer, pending, origin="runtime-grant", ttl_seconds=120, now=utc_now(), covered_by=GRANT
    )
    return envelope.model_dump(mode="json")


def consume(home: Path, project: Path, envelope: dict[str, Any], *flags: str) -> Any:
    args = ("consume", "--envelope", "-", "--tool", "bash", "--input", RM, "--cwd", str(project))
    return run(home, *args, *flags, stdin=json.dumps(envelope))


def test_require_dialog_refuses_grant_covered_evidence_with_exit_3(
    home: Path, project: Path
) -> None:
    envelope = granted(home, project)
    eid = envelope["details"]["evidenceId"]
    refused = consume(home, project, envelope, "--require-dialog")
    assert refused.returncode == 3, refused.stderr
    assert refused.stderr == ""
    out = json.loads(refused.stdout)
    assert out["decision"] == "rejected"
    assert out["match"] == {"decision": "not-dialog", "reasons": ["grant-covered"]}
    assert out["reasons"] == ["grant-covered"]
    assert out["evidenceId"] == eid
    assert (out["dispatchAllowed"], out["authorization"]) == (False, "none")
    (rejected,) = [
        r.data for r in read_records(home / "audit.jsonl") if r.event == "evidence.rejected"
    ]
    assert (rejected["evidenceId"], rejected["decision"], rejected["reasons"]) == (
        eid,
        "not-dialog",
        ["grant-covered"],
    )
    # Nothing was consumed: without the flag the same envelope is consumed, once.
    accepted = consume(home, project, envelope)
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads(accepted.stdout)["decision"] == "consumed"
    assert consume(home, project, envelope).returncode == 3


def test_require_dialog_consumes_dialog_evidence(home: Path, project: Path) -> None:
    envelope = record(home, project)["envelope"]
    ok = consume(home, project, envelope, "--require-dialog")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["match"] == {"decision": "match", "reasons": []}
    replay = consume(home, project, envelope, "--require-dialog")
    assert replay.returncode == 3
    assert json.loads(replay.stdout)["match"] == {"decision": "consumed", "reasons": ["replay"]}


def test_require_dialog_is_in_the_help(home: Path) -> None:
    shown = run(home, "consume", "--help")
    assert shown.returncode == 0
    assert "--require-dialog" in shown.stdout
