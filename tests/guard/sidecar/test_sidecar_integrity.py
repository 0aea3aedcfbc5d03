"""A log damaged in the middle: the sidecar signs nothing over it, says so, and recovers.

Real homes, a real sidecar process on real pipes and the real ``pi-guard audit`` commands.
The damage is done the ways a hand (or a program) can: a changed byte, a removed line, two
lines swapped, and a record rewritten with its chain recomputed from there on (every line
then checks out on its own; only the signed head no longer matches).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from audit.wire import canonical_json, sha256_prefixed
from tests.cli_runner import Result, invoke
from tests.guard.sidecar.test_sidecar import SERVE, call, rpc, run

pytestmark = pytest.mark.integration

ANCHOR_ENV = "PI_OPERATOR_GUARD_ANCHOR_DIR"


class Sidecar:
    """One ``pi-guard serve`` process; :meth:`ask` sends a request and reads its reply."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.n = 0

    def ask(self, method: str, params: Any = None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.n += 1
        self.proc.stdin.write(rpc(method, params, self.n))
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert reply["id"] == self.n
        return reply


@contextmanager
def sidecar(home: Path, env: dict[str, str] | None = None) -> Iterator[Sidecar]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE, str(home)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        yield Sidecar(proc)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        if proc.wait(timeout=30) != 0:
            raise AssertionError(f"sidecar exited {proc.returncode}")


def pi_guard(home: Path, *args: str) -> Result:
    return invoke(*args, home=home)


def lines_of(log: Path) -> list[bytes]:
    return log.read_bytes().splitlines(keepends=True)


def rechain_from(lines: list[bytes], index: int) -> list[bytes]:
    """Change record ``index`` and recompute its hash and every later record's chain."""
    out = lines[:index]
    prev = json.loads(out[-1])["hash"]
    for position, line in enumerate(lines[index:]):
        record = json.loads(line)
        if position == 0:
            record["data"]["toolCallId"] = "call-rewritten"
        record["prev"] = prev
        del record["hash"]
        record["hash"] = prev = sha256_prefixed(canonical_json(record))
        out.append(canonical_json(record) + b"\n")
    return out


def changed_byte(lines: list[bytes]) -> list[bytes]:
    out = list(lines)
    out[3] = out[3].replace(b"rm -rf build", b"rm -rf BUILD")
    assert out[3] != lines[3]
    return out


def removed_line(lines: list[bytes]) -> list[bytes]:
    return lines[:3] + lines[4:]


def swapped_lines(lines: list[bytes]) -> list[bytes]:
    return [*lines[:3], lines[4], lines[3], *lines[5:]]


def rewritten_record(lines: list[bytes]) -> list[bytes]:
    return rechain_from(lines, 3)


DAMAGE: dict[str, Callable[[list[bytes]], list[bytes]]] = {
    "a changed byte": changed_byte,
    "a removed line": removed_line,
    "two lines swapped": swapped_lines,
    "a record rewritten, chain recomputed": rewritten_record,
}


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.delenv(ANCHOR_ENV, raising=False)
    return dict(os.environ)


def a_used_home(home: Path, project: Path) -> Path:
    """A home whose log has records on both sides of the ones the tests damage."""
    for n in range(6):
        run(home, rpc("record", {**call(project), "confirmed": True, "toolCallId": f"c{n}"}))
    log = home / "audit.jsonl"
    assert len(lines_of(log)) > 6
    assert pi_guard(home, "audit", "verify").returncode == 0
    return log


def assert_refuses_to_append(home: Path, project: Path, env: dict[str, str]) -> None:
    log, head = home / "audit.jsonl", home / "audit.jsonl.head"
    before = (log.read_bytes(), head.read_bytes())
    with sidecar(home, env) as guard:
        health = guard.ask("health")["result"]
        assert health["ok"] is False
        text = health["statusText"]
        assert "audit log does not verify" in text
        assert text.index("pi-guard audit verify") < text.index("pi-guard audit recover")
        for method, params in (
            ("evaluate", {**call(project), "hasUi": True}),
            ("record", {**call(project), "confirmed": True, "toolCallId": "after"}),
        ):
            error = guard.ask(method, params)["error"]
            assert error["data"]["reason"] == "audit-integrity"
    assert (log.read_bytes(), head.read_bytes()) == before


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=list(DAMAGE))
def test_a_log_damaged_in_the_middle_is_never_signed_over_until_recovered(
    tmp_path: Path, project: Path, clean_env: dict[str, str], damage: Callable[..., list[bytes]]
) -> None:
    home = tmp_path / "home"
    log = a_used_home(home, project)
    log.write_bytes(b"".join(damage(lines_of(log))))
    assert pi_guard(home, "audit", "verify").returncode == 4

    assert_refuses_to_append(home, project, clean_env)

    recovered = pi_guard(home, "audit", "recover", "--reason", "edited by hand")
    assert recovered.returncode == 0, recovered.stderr
    with sidecar(home, clean_env) as guard:
        assert guard.ask("health")["result"]["ok"] is True
        asked = guard.ask("evaluate", {**call(project), "hasUi": True})["result"]
        assert asked["action"] == "confirm"
        done = guard.ask("record", {**call(project), "confirmed": True, "toolCallId": "new"})
        assert "result" in done, done
    events = [json.loads(line) for line in lines_of(log)]
    assert events[1]["event"] == "log.recovered"
    assert events[1]["data"]["operatorReason"] == "edited by hand"
    assert pi_guard(home, "audit", "verify").returncode == 0


def test_an_edit_while_the_sidecar_runs_stops_its_next_append(
    tmp_path: Path, project: Path, clean_env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    log = a_used_home(home, project)
    head = home / "audit.jsonl.head"
    with sidecar(home, clean_env) as guard:
        first = guard.ask("record", {**call(project), "confirmed": True, "toolCallId": "one"})
        assert "result" in first, first
        # A person's edit comes later than the file system's timestamp tick after our write.
        time.sleep(0.05)
        log.write_bytes(b"".join(changed_byte(lines_of(log))))
        before = (log.read_bytes(), head.read_bytes())
        second = guard.ask("record", {**call(project), "confirmed": True, "toolCallId": "two"})
        assert second["error"]["data"]["reason"] == "audit-integrity"
        # From then on nothing is asked or signed, and the footer names the way out.
        asked = guard.ask("evaluate", {**call(project), "hasUi": True})
        assert asked["error"]["data"]["reason"] == "audit-integrity"
        health = guard.ask("health")["result"]
        assert health["ok"] is False
        assert "pi-guard audit recover" in health["statusText"]
    assert (log.read_bytes(), head.read_bytes()) == before


def test_with_an_anchor_the_damage_after_it_is_found(
    tmp_path: Path, project: Path, clean_env: dict[str, str]
) -> None:
    home = tmp_path / "home"
    log = a_used_home(home, project)
    anchored = {**clean_env, ANCHOR_ENV: str(tmp_path / "anchors")}
    with sidecar(home, anchored) as guard:  # anchors the checkpoint at its start and end
        assert guard.ask("health")["result"]["ok"] is True
    anchored_lines = len(lines_of(log))
    for n in range(3):  # later records, not anchored
        run(home, rpc("record", {**call(project), "confirmed": True, "toolCallId": f"l{n}"}))
    lines = lines_of(log)
    assert len(lines) > anchored_lines + 2
    log.write_bytes(b"".join(rechain_from(lines, anchored_lines + 1)))

    assert_refuses_to_append(home, project, anchored)
