"""Exact bindings: real paths (symlinks resolved at record and consume) and the tool call id.

Attacks from a hostile same-user process: swap a confirmed file, its directory or the
workspace for a symlink between confirmation and consumption, or spend one call's
evidence on another call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guard import BadInputError, Guard
from guard._evidence.fingerprint import fingerprint_path
from tests.cli_runner import invoke

WRITE = {"path": "deploy.pem", "content": "-----BEGIN-----"}


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA me\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def _record(g: Guard, tool_input: dict[str, Any], cwd: Path, call_id: str | None = None) -> Any:
    rec = g.record("write", tool_input, cwd, confirmed=True, tool_call_id=call_id)
    assert rec.decision == "recorded", rec
    assert rec.envelope is not None
    return rec.envelope.model_dump(mode="json")


def test_file_swapped_for_a_symlink_is_a_path_mismatch(tmp_path: Path, fake_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "deploy.pem").write_text("old")
    with Guard.open(tmp_path / "guard") as g:
        env = _record(g, WRITE, project)
        (project / "deploy.pem").unlink()
        (project / "deploy.pem").symlink_to(fake_home / ".ssh" / "authorized_keys")
        result = g.consume(env, "write", WRITE, project)
        assert result.decision == "rejected"
        assert "path-mismatch" in result.reasons


def test_not_yet_existing_file_then_a_symlink_is_a_mismatch(
    tmp_path: Path, fake_home: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with Guard.open(tmp_path / "guard") as g:
        env = _record(g, WRITE, project)
        (project / "deploy.pem").symlink_to(fake_home / ".ssh" / "authorized_keys")
        assert "path-mismatch" in g.consume(env, "write", WRITE, project).reasons


def test_dangling_symlink_binds_its_target(tmp_path: Path, fake_home: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "deploy.pem").symlink_to(fake_home / ".ssh" / "new_key")
    with Guard.open(tmp_path / "guard") as g:
        fp = g.evaluate("write", WRITE, project).fingerprint
        assert fp is not None and fp.path == str(fake_home / ".ssh" / "new_key")


def test_parent_directory_swapped_for_a_symlink_is_a_mismatch(
    tmp_path: Path, fake_home: Path
) -> None:
    project = tmp_path / "project"
    (project / "keys").mkdir(parents=True)
    call = {"path": "keys/deploy.pem", "content": "x"}
    with Guard.open(tmp_path / "guard") as g:
        env = _record(g, call, project)
        (project / "keys").rmdir()
        (project / "keys").symlink_to(fake_home / ".ssh")
        assert "path-mismatch" in g.consume(env, "write", call, project).reasons


def test_workspace_swapped_for_a_symlink_is_a_scope_mismatch(tmp_path: Path) -> None:
    real = tmp_path / "real"
    other = tmp_path / "other"
    real.mkdir()
    other.mkdir()
    link = tmp_path / "ws"
    link.symlink_to(real)
    call = {"command": "rm -rf build"}
    with Guard.open(tmp_path / "guard") as g:
        rec = g.record("bash", call, link, confirmed=True)
        assert rec.fingerprint is not None and rec.fingerprint.scope == str(real)
        assert rec.envelope is not None
        link.unlink()
        link.symlink_to(other)
        result = g.consume(rec.envelope.model_dump(mode="json"), "bash", call, link)
        assert "scope-mismatch" in result.reasons


@pytest.mark.parametrize(
    "spelling",
    ["deploy.pem", "./deploy.pem", "sub/../deploy.pem", "alias.pem", "linkdir/deploy.pem"],
)
def test_every_spelling_of_the_same_real_file_binds_alike(tmp_path: Path, spelling: str) -> None:
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "deploy.pem").write_text("x")
    (project / "alias.pem").symlink_to(project / "deploy.pem")
    (project / "linkdir").symlink_to(project)
    with Guard.open(tmp_path / "guard") as g:
        env = _record(g, WRITE, project)
        call = {**WRITE, "path": spelling}
        result = g.consume(env, "write", call, project)
        # Same real file, but a different tool input: only the payload hash may differ.
        assert "path-mismatch" not in result.reasons
        if spelling == "deploy.pem":
            assert result.decision == "consumed"


def test_fingerprint_path_refuses_relative_and_keeps_missing_components(tmp_path: Path) -> None:
    with pytest.raises(BadInputError):
        fingerprint_path("relative/x")
    (tmp_path / "d").mkdir()
    (tmp_path / "l").symlink_to(tmp_path / "d")
    assert fingerprint_path(str(tmp_path / "l" / "a" / "b")) == str(tmp_path / "d" / "a" / "b")


def test_symlink_loop_does_not_crash(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "a").symlink_to(project / "b")
    (project / "b").symlink_to(project / "a")
    call = {"path": "a", "content": "x"}
    with Guard.open(tmp_path / "guard") as g:
        g.evaluate("write", call, project)  # any verdict, no exception


# -- tool call id -------------------------------------------------------------


def _bash(g: Guard, project: Path, call_id: str | None) -> dict[str, Any]:
    rec = g.record(
        "bash", {"command": "rm -rf build"}, project, confirmed=True, tool_call_id=call_id
    )
    assert rec.envelope is not None
    return rec.envelope.model_dump(mode="json")


@pytest.mark.parametrize(
    "other", ["call_2", "CALL_1", "call_1 ", " call_1", "call_1\n", "call_\u0131", "call_1\x00"]
)
def test_another_calls_id_is_a_mismatch_and_consumes_nothing(tmp_path: Path, other: str) -> None:
    call = {"command": "rm -rf build"}
    with Guard.open(tmp_path / "guard") as g:
        env = _bash(g, tmp_path, "call_1")
        bad = g.consume(env, "bash", call, tmp_path, tool_call_id=other)
        assert (bad.decision, bad.match.decision) == ("rejected", "mismatch")
        assert bad.reasons == ("tool-call-id-mismatch",)
        good = g.consume(env, "bash", call, tmp_path, tool_call_id="call_1")
        assert good.decision == "consumed"


def test_a_consumer_that_names_no_call_is_refused_and_consumes_nothing(tmp_path: Path) -> None:
    """Call ids by default: evidence bound to a call is ``call-id-required`` when the consumer
    names no pending call, and stays unspent for the consumer that does."""
    from audit.verify import read_records

    call = {"command": "rm -rf build"}
    with Guard.open(tmp_path / "guard") as g:
        env = _bash(g, tmp_path, "call_1")
        bad = g.consume(env, "bash", call, tmp_path)
        assert (bad.decision, bad.match.decision, bad.reasons) == (
            "rejected",
            "mismatch",
            ("call-id-required",),
        )
        last = list(read_records(g.audit.path))[-1]
        assert (last.event, last.data["reasons"]) == ("evidence.rejected", ["call-id-required"])
        assert "toolCallId" not in last.data
        assert g.consume(env, "bash", call, tmp_path, tool_call_id="call_1").decision == (
            "consumed"
        )


def test_the_opt_out_is_explicit_and_never_covers_another_call(tmp_path: Path) -> None:
    call = {"command": "rm -rf build"}
    with Guard.open(tmp_path / "guard") as g:
        env = _bash(g, tmp_path, "call_1")
        other = g.consume(
            env, "bash", call, tmp_path, tool_call_id="call_2", call_checked_elsewhere=True
        )
        assert other.reasons == ("tool-call-id-mismatch",)
        # The consumer says it ties the evidence to the call some other way: the fingerprint
        # alone binds, once.
        first = g.consume(env, "bash", call, tmp_path, call_checked_elsewhere=True)
        assert first.decision == "consumed"
        again = g.consume(env, "bash", call, tmp_path, call_checked_elsewhere=True)
        assert again.reasons == ("replay",)


def test_a_mismatch_and_a_missing_call_id_are_both_named(tmp_path: Path) -> None:
    with Guard.open(tmp_path / "guard") as g:
        env = _bash(g, tmp_path, "call_1")
        both = g.consume(env, "bash", {"command": "rm -rf dist"}, tmp_path)
    assert both.reasons == ("payload-hash-mismatch", "call-id-required")


def test_evidence_minted_without_a_call_id_is_bound_by_its_fingerprint(tmp_path: Path) -> None:
    call = {"command": "rm -rf build"}
    with Guard.open(tmp_path / "guard") as g:
        # pi-guard record without --tool-call-id: nothing to compare, with or without an id.
        unbound = _bash(g, tmp_path, None)
        assert g.consume(unbound, "bash", call, tmp_path, tool_call_id="x").decision == "consumed"
        other = _bash(g, tmp_path, None)
        assert g.consume(other, "bash", call, tmp_path).decision == "consumed"


def test_a_monitor_wants_the_call_id_too(tmp_path: Path) -> None:
    import shutil

    from guard import Monitor

    call = {"command": "rm -rf build"}
    with Guard.open(tmp_path / "guard") as g:
        env = _bash(g, tmp_path, "call_1")
    monitor_home = tmp_path / "monitor"
    monitor_home.mkdir()
    shutil.copy(tmp_path / "guard" / "keyring.json", monitor_home / "keyring.json")
    with Monitor.open(monitor_home) as m:
        assert m.consume(env, "bash", call, tmp_path).reasons == ("call-id-required",)
        assert m.consume(env, "bash", call, tmp_path, tool_call_id="call_1").decision == (
            "consumed"
        )


@pytest.mark.parametrize("bad", ["", "x" * 257, 7])
def test_bad_tool_call_id_is_bad_input(tmp_path: Path, bad: Any) -> None:
    with Guard.open(tmp_path / "guard") as g, pytest.raises(BadInputError):
        g.consume({}, "bash", {"command": "ls"}, tmp_path, tool_call_id=bad)


def test_mismatch_is_audited_with_the_pending_call_id(tmp_path: Path) -> None:
    from audit.verify import read_records

    call = {"command": "rm -rf build"}
    with Guard.open(tmp_path / "guard") as g:
        env = _bash(g, tmp_path, "call_1")
        g.consume(env, "bash", call, tmp_path, tool_call_id="call_2")
        last = list(read_records(g.audit.path))[-1]
    assert last.event == "evidence.rejected"
    assert last.data["toolCallId"] == "call_2"
    assert last.data["reasons"] == ["tool-call-id-mismatch"]


def test_cli_consume_tool_call_id(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    call = {"command": "rm -rf build"}
    with Guard.open(home) as g:
        env = _bash(g, tmp_path, "call_1")
    envelope = tmp_path / "env.json"
    envelope.write_text(json.dumps(env))
    base = ["consume", "--envelope", str(envelope), "--tool", "bash", "--input", json.dumps(call)]
    base += ["--cwd", str(tmp_path)]
    bad = invoke(*base, "--tool-call-id", "call_2", home=home)
    assert bad.returncode == 3, bad.stderr
    assert json.loads(bad.stdout)["reasons"] == ["tool-call-id-mismatch"]
    none = invoke(*base, home=home)
    assert none.returncode == 3, none.stderr
    assert json.loads(none.stdout)["reasons"] == ["call-id-required"]
    good = invoke(*base, "--tool-call-id", "call_1", home=home)
    assert good.returncode == 0, good.stderr


def test_cli_consume_call_checked_elsewhere(tmp_path: Path) -> None:
    home = tmp_path / "guard"
    call = {"command": "rm -rf build"}
    with Guard.open(home) as g:
        env = _bash(g, tmp_path, "call_1")
    envelope = tmp_path / "env.json"
    envelope.write_text(json.dumps(env))
    base = ["consume", "--envelope", str(envelope), "--tool", "bash", "--input", json.dumps(call)]
    base += ["--cwd", str(tmp_path), "--call-checked-elsewhere"]
    other = invoke(*base, "--tool-call-id", "call_2", home=home)
    assert json.loads(other.stdout)["reasons"] == ["tool-call-id-mismatch"]
    good = invoke(*base, home=home)
    assert good.returncode == 0, good.stderr


def test_sidecar_consume_compares_tool_call_id(tmp_path: Path) -> None:
    import io

    from guard._sidecar.handlers.methods import serve

    home = tmp_path / "guard"
    base = {"toolName": "bash", "input": {"command": "rm -rf build"}, "cwd": str(tmp_path)}

    def rpc(method: str, params: dict[str, Any], rid: int) -> bytes:
        message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        return json.dumps(message).encode() + b"\n"

    def run(*lines: bytes) -> list[Any]:
        out = io.BytesIO()
        assert serve(io.BytesIO(b"".join(lines)), out, home=home) == 0
        return [json.loads(line)["result"] for line in out.getvalue().splitlines()]

    (record,) = run(rpc("record", {**base, "confirmed": True, "toolCallId": "call_7"}, 1))
    envelope = record["envelope"]
    other, none, right, again = run(
        rpc("consume", {**base, "envelope": envelope, "toolCallId": "call_8"}, 2),
        rpc("consume", {**base, "envelope": envelope}, 3),
        rpc("consume", {**base, "envelope": envelope, "toolCallId": "call_7"}, 4),
        rpc("consume", {**base, "envelope": envelope, "toolCallId": "call_7"}, 5),
    )
    assert other["reasons"] == ["tool-call-id-mismatch"]
    assert none["reasons"] == ["call-id-required"]
    assert right["decision"] == "consumed"
    assert again["reasons"] == ["replay"]
