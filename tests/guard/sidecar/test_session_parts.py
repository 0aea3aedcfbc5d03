"""The sidecar serves a :class:`~guard._sidecar.session.Session` composed of parts: no mixin
chain, each method of the table a verb of the session (or about the sidecar itself), and each
part holding its own state (no container two parts share, no attribute of one part written
by another but through the references the session gave it)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.handlers.methods import Sidecar
from guard._sidecar.server import RpcServer
from guard._sidecar.session import Session
from tests.guard.sidecar.test_sidecar_methods import result

pytestmark = pytest.mark.usefixtures("bwrap_required")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve() / "project"
    root.mkdir()
    (root / "a.txt").write_text("a")
    return root


@pytest.fixture
def server(tmp_path: Path, project: Path) -> Iterator[Sidecar]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    sidecar = Sidecar(home)
    result(sidecar, "sandbox.plan", {"cwd": str(project), "sessionId": "s1", "mode": "tui"})
    yield sidecar
    sidecar.close()


def parts(session: Session) -> dict[str, object]:
    return {
        "home": session.home,
        "desk": session.desk,
        "sandbox": session.sandbox,
        "effects": session.effects,
        "memo": session.memo,
        "export": session.export,
        "intake": session.intake,
        "answers": session.answers,
        "consumer": session.consumer,
        "status": session.status,
    }


def test_the_sidecar_inherits_no_parts() -> None:
    assert Sidecar.__mro__ == (Sidecar, RpcServer, object)
    assert Session.__mro__ == (Session, object)


def test_each_method_is_a_verb_of_the_session_or_about_the_sidecar(server: Sidecar) -> None:
    owners = {id(server), id(server.session), *(id(p) for p in parts(server.session).values())}
    about_itself = {"describe", "health", "ping"}
    for name, method in server.methods.items():
        handler: Any = method.handler
        owner = getattr(handler, "__self__", None)
        if owner is not None:
            assert id(owner) in owners, name
            assert (owner is server) == (name in about_itself), name
        else:  # a short adapter of the table: it names its verb
            assert handler.__module__ == "guard._sidecar.handlers.methods", name


def test_no_two_parts_share_a_container(server: Sidecar) -> None:
    session = server.session
    result(server, "evaluate", {"toolName": "bash", "input": {"command": "rm -f a.txt"},
                                "cwd": str(session.sandbox.workspace(".")),
                                "toolCallId": "c1"})  # fmt: skip
    known = {id(p) for p in parts(session).values()}
    held: dict[int, str] = {}
    for name, part in parts(session).items():
        for attr, value in vars(part).items():
            if id(value) in known or not isinstance(value, (dict, set, list)):
                continue
            assert id(value) not in held, f"{name}.{attr} is also {held[id(value)]}"
            held[id(value)] = f"{name}.{attr}"
    assert "memo.offered" in held.values() and "memo.unasked" in held.values()
    assert session.memo.offered  # the asked call's offers live in the memo, and only there


def test_the_parts_see_one_home_and_its_damage(server: Sidecar) -> None:
    session = server.session
    homes = {
        id(p.home) for p in parts(session).values() if hasattr(p, "home") and p is not session.home
    }
    assert homes == {id(session.home)}
    guard = session.home.guard
    assert guard is not None
    call = {"toolName": "bash", "input": {"command": "rm -f a.txt"},
            "cwd": session.sandbox.workspace("."), "confirmed": True}  # fmt: skip
    assert result(server, "record", {**call, "toolCallId": "one"})["decision"] == "recorded"
    time.sleep(0.05)  # an edit later than the file system's timestamp tick after our write
    log = guard.audit.path
    lines = log.read_bytes().splitlines(keepends=True)
    lines[-1] = lines[-1].replace(b'"rm', b'"RM', 1)
    log.write_bytes(b"".join(lines))
    refused = ask(server, "record", {**call, "toolCallId": "two"})
    assert refused["error"]["data"]["reason"] == "audit-integrity"
    # Noted once by the home: the desk refuses too from now on, and the footer says so.
    assert session.home.damage is not None and session.home.writable is None
    assert ask(server, "grants.list", {})["error"]["data"]["reason"] == "audit-integrity"
    assert "pi-guard audit recover" in session.status.line()


def ask(server: Sidecar, method: str, params: dict[str, Any]) -> dict[str, Any]:
    reply = server.handle_message({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert reply is not None
    return reply


def test_the_parts_that_act_hold_no_state_but_the_parts_they_were_given(server: Sidecar) -> None:
    session = server.session
    holding = {id(p) for name, p in parts(session).items() if name not in ACTING}
    for name in ACTING:
        for attr, value in vars(parts(session)[name]).items():
            assert id(value) in holding or type(value) is bool, f"{name}.{attr}"
    # Each verb of a call's life is its acting part's, the session only hands it on.
    call = {"toolName": "bash", "input": {"command": "rm -f a.txt"},
            "cwd": session.sandbox.workspace("."), "toolCallId": "c1"}  # fmt: skip
    assert result(server, "evaluate", call)["action"] == "confirm"
    assert list(session.memo.offered) == ["c1"]
    said = result(server, "audit.declined", {**call, "reason": "declined"})
    assert said["record"]["decision"] == "declined" and said["blockReason"]


ACTING = ("intake", "answers", "consumer", "status")


def test_each_part_reads_in_one_sitting() -> None:
    """The session is split along its own seams, not grown back into one long file."""
    folder = Path(__file__).resolve().parents[3] / "guard" / "_sidecar" / "session"
    long = {p.name: n for p in folder.glob("*.py") if (n := len(p.read_text().splitlines())) > 320}
    assert long == {}
