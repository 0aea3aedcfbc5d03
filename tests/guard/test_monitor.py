"""``guard.Monitor``: a consumer with only the guard's public keyring consumes exactly as the
guard does (the same fingerprint, checks and single use), through the one consume path."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import pytest

from audit.wire import utc_now
from guard import Guard, KeyringError, Monitor
from guard._errors import BadInputError
from guard._operator import enrolled_credential
from tests.softauthn import SoftAuthenticator

CALL = {"command": "rm -rf build"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    (root / "build").mkdir(parents=True)
    return root


def monitor_home(tmp_path: Path, guard_home: Path, policy: str = "") -> Path:
    home = tmp_path / "monitor"
    home.mkdir(mode=0o700, exist_ok=True)
    (home / "keyring.json").write_bytes((guard_home / "keyring.json").read_bytes())
    if policy:
        (home / "operator-guard.toml").write_text(policy)
    return home


def plain(guard: Guard, project: Path, call_id: str = "c1") -> dict[str, Any]:
    rec = guard.record("bash", CALL, project, confirmed=True, tool_call_id=call_id,
                       origin="runtime-ui-confirm")  # fmt: skip
    assert rec.envelope is not None
    return rec.envelope.model_dump(mode="json")


def signed(guard: Guard, project: Path, key: SoftAuthenticator, call_id: str) -> dict[str, Any]:
    reservation = guard.operators.reserve("bash", CALL, project, tool_call_id=call_id)
    assert reservation is not None
    rec = guard.record("bash", CALL, project, confirmed=True, tool_call_id=call_id,
                       origin="runtime-ui-confirm",
                       signed=(reservation, key.sign_details(reservation.statement)))  # fmt: skip
    assert rec.envelope is not None
    return rec.envelope.model_dump(mode="json")


def test_a_monitor_consumes_once_and_names_the_replay(tmp_path: Path, project: Path) -> None:
    with Guard.open(tmp_path / "guard") as guard:
        envelope = plain(guard, project)
    with Monitor.open(monitor_home(tmp_path, tmp_path / "guard")) as monitor:
        first = monitor.consume(envelope, "bash", CALL, project, tool_call_id="c1")
        again = monitor.consume(envelope, "bash", CALL, project, tool_call_id="c1")
        other = monitor.consume(envelope, "bash", {"command": "rm -rf src"}, project)
    assert (first.decision, first.operator_signature) == ("consumed", "none")
    assert (again.match.decision, again.reasons) == ("consumed", ("replay",))
    assert other.match.decision == "mismatch"
    assert not (tmp_path / "monitor" / "audit.jsonl").exists()  # a monitor appends nothing


def test_the_monitors_own_policy_requires_the_operators_passkey(
    tmp_path: Path, project: Path
) -> None:
    key = SoftAuthenticator()
    challenge = secrets.token_bytes(32)
    with Guard.open(tmp_path / "guard") as guard:
        guard.operators.enroll(
            enrolled_credential(
                key.register(challenge),
                challenge=challenge,
                rp_id=key.rp_id,
                origin=key.origin,
                label="k",
                now=utc_now(),
            )
        )
        by_dialog = plain(guard, project, "c1")
        by_passkey = signed(guard, project, key, "c2")
    policy = "[evidence]\nrequire_operator_signature = true\n"
    with Monitor.open(monitor_home(tmp_path, tmp_path / "guard", policy)) as monitor:
        refused = monitor.consume(by_dialog, "bash", CALL, project, tool_call_id="c1")
        taken = monitor.consume(by_passkey, "bash", CALL, project, tool_call_id="c2")
    assert (refused.match.decision, refused.reasons) == (
        "not-operator-signed", ("no-operator-signature",))  # fmt: skip
    assert (taken.decision, taken.operator_signature) == ("consumed", "verified")


def test_a_monitor_and_the_guard_refuse_the_same_bad_input(tmp_path: Path, project: Path) -> None:
    with Guard.open(tmp_path / "guard") as guard:
        envelope = plain(guard, project)
        with pytest.raises(BadInputError, match="tool call id"):
            guard.consume(envelope, "bash", CALL, project, tool_call_id="")
    with Monitor.open(monitor_home(tmp_path, tmp_path / "guard")) as monitor:
        with pytest.raises(BadInputError, match="tool call id"):
            monitor.consume(envelope, "bash", CALL, project, tool_call_id="")
        with pytest.raises(BadInputError, match="tool input"):
            monitor.consume(envelope, "bash", ["rm"], project)  # type: ignore[arg-type]


def test_a_monitor_without_a_keyring_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(KeyringError):
        Monitor.open(tmp_path / "empty")
