"""An agent's bash calls through a sidecar in process, as the shim makes them: ``evaluate``,
the operator's answer (``record`` or ``audit.declined``), the command itself run by the
session's real sandbox prefix on a layer of its own, ``effects.review`` and, where effects
are held, ``effects.resolve``; then ``audit.toolExecuted``. What an end-to-end test shows
through the real pi, without pi: the tests that vary only what the guard's Python decides
run their variants here."""

from __future__ import annotations

import os
import shlex
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import result

LAYER_ENV = "PI_OPERATOR_GUARD_LAYER"


@dataclass(frozen=True)
class Outcome:
    """``action``: the sidecar's answer before the call; ``asked``: a dialog was shown;
    ``ran``: the command ran; ``review``: what the effects review decided (``None``: it did
    not run); ``held``: the review held effects for the operator."""

    action: str
    asked: bool
    ran: bool
    review: str | None
    exit_code: int | None = None
    summary: str = ""
    title: str = ""  # the dialog as pi shows it: its title, then its message
    held_dialog: str = ""  # the effects review's dialog, likewise

    @property
    def held(self) -> bool:
        return self.review == "held"


@dataclass
class Agent:
    """The agent's calls in ``project``; ``yes``: the operator says Yes to a call's dialog;
    ``apply``: Apply (else Discard) to held effects."""

    sidecar: Sidecar
    project: Path
    prefix: str
    calls: int = 0
    output: str = ""  # the last command's standard output

    def tool(self, name: str, tool_input: dict[str, Any], *, yes: bool = False) -> dict[str, Any]:
        """Another tool's call (pi runs it, not the sandbox): the sidecar's ``evaluate`` reply,
        after the operator's answer to its dialog is given."""
        self.calls += 1
        call = {"toolName": name, "input": tool_input, "cwd": str(self.project),
                "toolCallId": f"call-{self.calls}"}  # fmt: skip
        reply: dict[str, Any] = result(self.sidecar, "evaluate", {**call, "hasUi": True})
        if reply["action"] == "confirm":
            answer = {"confirmed": True} if yes else {"confirmed": False}
            result(self.sidecar, "record", {**call, **answer})
        return reply

    def bash(self, command: str, *, yes: bool = True, apply: bool = False) -> Outcome:
        """The call from its ``evaluate`` to its ``audit.toolExecuted``."""
        started = self.start(command, yes=yes)
        return started if isinstance(started, Outcome) else self.finish(started, apply=apply)

    def turn(self, *commands: str, apply: bool = False) -> list[Outcome]:
        """Calls the model makes in one turn, as pi makes them: each is asked before any runs
        (the operator says Yes), then their commands run side by side."""
        asked = [self.ask(command) for command in commands]
        running = [self.run(a) if isinstance(a, Asked) else a for a in asked]
        return [self.finish(r, apply=apply) if isinstance(r, Running) else r for r in running]

    def start(self, command: str, *, yes: bool = True) -> Outcome | Running:
        """The call up to its command running (a parallel call runs while it does), or its
        outcome when it does not run."""
        asked = self.ask(command, yes=yes)
        return self.run(asked) if isinstance(asked, Asked) else asked

    def ask(self, command: str, *, yes: bool = True) -> Outcome | Asked:
        """The call up to the operator's answer, or its outcome when it does not run."""
        self.calls += 1
        call = {"toolName": "bash", "input": {"command": command}, "cwd": str(self.project),
                "toolCallId": f"call-{self.calls}"}  # fmt: skip
        reply = result(self.sidecar, "evaluate", {**call, "hasUi": True})
        action = reply["action"]
        if action not in ("allow", "confirm"):
            return Outcome(action, asked=False, ran=False, review=None)
        asked = action == "confirm"
        dialog = reply.get("dialog") or {}
        title = f"{dialog.get('title')}\n{dialog.get('message')}" if asked else ""
        if asked and not yes:
            result(self.sidecar, "audit.declined", {**call, "reason": "declined"})
            return Outcome(action, asked=True, ran=False, review=None, title=title)
        if asked:
            record = result(self.sidecar, "record", {**call, "confirmed": True})
            assert record["decision"] == "recorded", record
        return Asked(call, action, title)

    def run(self, asked: Asked) -> Running:
        """The command under the session's sandbox prefix, on a layer of its own."""
        layer = uuid.uuid4().hex
        command = asked.call["input"]["command"]
        process = subprocess.Popen(
            ["/bin/bash", "-c", f"{self.prefix} {shlex.quote(command)}"],
            cwd=self.project, env={**os.environ, LAYER_ENV: layer},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        return Running(asked.call, layer, process, asked.action, asked.title)

    def finish(self, running: Running, *, apply: bool = False) -> Outcome:
        """The command ended: its effects reviewed, held ones applied or discarded."""
        stdout, _ = running.process.communicate(timeout=90)
        call, code = running.call, running.process.returncode
        about = {"layer": running.layer, "toolCallId": call["toolCallId"],
                 "cwd": str(self.project), "command": call["input"]["command"]}  # fmt: skip
        review = result(self.sidecar, "effects.review", {**about, "outputTail": stdout[-500:]})
        held = review.get("dialog") or {}
        if review["decision"] == "held":
            reason = {} if apply else {"reason": "declined"}
            result(self.sidecar, "effects.resolve", {**about, "apply": apply, **reason})
        result(self.sidecar, "audit.toolExecuted", {**call, "isError": code != 0})
        self.output = stdout
        return Outcome(
            running.action, running.action == "confirm", True, review["decision"], code,
            review["summary"], running.title, f"{held.get('title', '')}\n{held.get('message', '')}",
        )  # fmt: skip


@dataclass
class Asked:
    """A call the sidecar lets run (unasked, or after the operator's Yes)."""

    call: dict[str, Any]
    action: str
    title: str


@dataclass
class Running:
    """A call whose command is running."""

    call: dict[str, Any]
    layer: str
    process: subprocess.Popen[str]
    action: str
    title: str


@contextmanager
def agent(home: Path, project: Path) -> Iterator[Agent]:
    """A session planned in ``project`` (sandboxed, effects reviewed) of a sidecar in
    ``home``."""
    home.mkdir(mode=0o700, exist_ok=True)
    sidecar = Sidecar(home)
    try:
        plan: dict[str, Any] = result(
            sidecar, "sandbox.plan", {"cwd": str(project), "sessionId": "s1", "mode": "rpc"}
        )
        assert plan["state"] == "sandboxed" and plan["effects"] == "review", plan
        yield Agent(sidecar, project, plan["prefix"])
    finally:
        sidecar.close()


def world_project(project: Path) -> Path:
    """The project an end-to-end world starts with (tests/e2e/conftest.py)."""
    for name in ("build", "dist", "a", "b", "c"):
        (project / name).mkdir(parents=True)
        (project / name / "keep.txt").write_text(name)
    (project / "README.md").write_text("# e2e project\n")
    (project / ".env").write_text("TOKEN=original\n")
    return project
