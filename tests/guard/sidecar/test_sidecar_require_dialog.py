"""The sidecar's ``consume`` with ``requireDialog``: a guard's and a verify-only monitor's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from audit.wire import utc_now
from guard._evidence.envelope import mint_envelope
from guard._evidence.keys import KeyStore
from guard._evidence.models import CoveredBy
from guard._sidecar.framing import RpcCode
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import call, error, monitor_home, result

pytestmark = pytest.mark.integration

GRANT = CoveredBy(
    grant_id="grant_AAECAwQFBgcICQoLDA0ODw", use=7, grant_evidence_id="oce_" + "D" * 22
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Sidecar]:
    served = Sidecar(tmp_path / "home")
    assert served.session.home.guard is not None
    yield served
    served.close()


def granted(sidecar: Sidecar, project: Path) -> dict[str, Any]:
    """Evidence a grant covered, for ``rm -rf build`` in ``project``, signed by the guard's key."""
    assert sidecar.session.home.guard is not None
    pending = sidecar.session.home.guard.evaluate(
        "bash", {"command": "rm -rf build"}, project
    ).fingerprint
    assert pending is not None
    signer, _ = KeyStore.open(sidecar.home).ensure_key()
    envelope = mint_envelope(
        signer, pending, origin="runtime-grant", ttl_seconds=120, now=utc_now(), covered_by=GRANT
    )
    return envelope.model_dump(mode="json")


def test_require_dialog_refuses_grant_evidence_and_leaves_it_unconsumed(
    sidecar: Sidecar, project: Path
) -> None:
    envelope = granted(sidecar, project)
    eid = envelope["details"]["evidenceId"]
    refused = result(sidecar, "consume", call(project, envelope=envelope, requireDialog=True))
    assert refused["decision"] == "rejected"
    assert refused["match"] == {"decision": "not-dialog", "reasons": ["grant-covered"]}
    assert refused["evidenceId"] == eid
    (data,) = [
        r.data for r in read_records(sidecar.home / "audit.jsonl") if r.event == "evidence.rejected"
    ]
    assert (data["decision"], data["reasons"]) == ("not-dialog", ["grant-covered"])
    consumed = result(sidecar, "consume", call(project, envelope=envelope, requireDialog=False))
    assert consumed["decision"] == "consumed"


def test_require_dialog_defaults_to_off_and_takes_dialog_evidence(
    sidecar: Sidecar, project: Path
) -> None:
    assert (
        result(sidecar, "consume", call(project, envelope=granted(sidecar, project)))["decision"]
        == "consumed"
    )
    dialog = result(sidecar, "record", call(project, confirmed=True))["envelope"]
    taken = result(sidecar, "consume", call(project, envelope=dialog, requireDialog=True))
    assert taken["decision"] == "consumed"


def test_a_verify_only_monitor_honours_require_dialog(
    sidecar: Sidecar, project: Path, tmp_path: Path
) -> None:
    envelope = granted(sidecar, project)
    monitor = Sidecar(monitor_home(tmp_path, sidecar.home), verify_only=True)
    try:
        refused = result(monitor, "consume", call(project, envelope=envelope, requireDialog=True))
        assert refused["match"] == {"decision": "not-dialog", "reasons": ["grant-covered"]}
        consumed = result(monitor, "consume", call(project, envelope=envelope))
        assert consumed["decision"] == "consumed"
    finally:
        monitor.close()


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_require_dialog_must_be_a_boolean(sidecar: Sidecar, project: Path, value: Any) -> None:
    envelope = granted(sidecar, project)
    refused = error(sidecar, "consume", call(project, envelope=envelope, requireDialog=value))
    assert refused["code"] == RpcCode.INVALID_PARAMS
