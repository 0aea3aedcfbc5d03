"""Dialogs per task: how many dialogs one scripted task shows with grants accepted and without.

The task (:data:`WORKLOAD`, 36 tool calls, always the same) is what an agent does while it
tidies a build and maintains an example environment file: repeated clean-ups
(``rm -f build/tmp-N.o``), the same protected file rewritten through pi's ``write`` and
``edit`` tools (``.env.example``, and two more of its kind), and near misses mixed in: calls
that look like the ones a grant covers but must be asked again (a target outside the glob,
a compound command, a pipe, a ``$(…)``, a symlink inside the glob that points outside the
workspace, ``rm -rf`` instead of ``rm -f``, another protected file).

It runs twice, each time on a fresh guard home and a fresh workspace holding the same
files, through the guard's sidecar in-process (its JSON-RPC entry point, as pi's shim calls
it): ``sandbox.plan`` for the session, then per call ``evaluate``; a ``confirm`` is a dialog.
The operator says yes to the task's own calls and no to every near miss. Without grants
they answer "this call once"; with grants accepted they choose the broadest grant offered
(the last one) the first time a kind of call is asked. A call the guard allows without a
dialog is reported as executed, as pi would. Goals, both checked in the same run: at least
60 % fewer dialogs with grants accepted, and no near miss covered (run without a dialog).
The dialogs counted are checked against the guard's own session counts (``status``).

    python bench/session/bench_dialogs.py [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guard._logging import configure_logging
from guard._sidecar.handlers.methods import Sidecar

GOAL_REDUCTION = 0.60  # at least 60 % fewer dialogs with grants accepted
GOAL_NEAR_MISSES_COVERED = 0

CLEAN_UP = "clean-up"
WRITE_ENV = "write .env*.example"
EDIT_ENV = "edit .env.example"


@dataclass(frozen=True)
class Call:
    """One tool call of the task: the task's own (``kind``: what the operator grants the
    first time it is asked) or a near miss (``near_miss``: what sets it apart)."""

    tool: str
    input: dict[str, Any]
    kind: str | None = None
    near_miss: str | None = None

    @property
    def text(self) -> str:
        if self.tool == "bash":
            return str(self.input["command"])
        return f"{self.tool} {self.input['path']}"


def _rm(*targets: str, kind: str | None = CLEAN_UP, near_miss: str | None = None) -> Call:
    return Call("bash", {"command": "rm -f " + " ".join(targets)}, kind, near_miss)


def _bash(command: str, near_miss: str) -> Call:
    return Call("bash", {"command": command}, None, near_miss)


def _write(path: str, content: str, near_miss: str | None = None) -> Call:
    kind = None if near_miss else WRITE_ENV
    return Call("write", {"path": path, "content": content}, kind, near_miss)


def _edit(old: str, new: str) -> Call:
    edits = [{"oldText": old, "newText": new}]
    return Call("edit", {"path": ".env.example", "edits": edits}, EDIT_ENV)


WORKLOAD: tuple[Call, ...] = (
    _rm("build/tmp-1.o"),
    _write(".env.example", "API_URL=http://localhost:8000\n"),
    _rm("build/tmp-2.o"),
    _rm("build/tmp-3.o"),
    _rm("build/tmp-4.o", "build/keep.c", kind=None, near_miss="one target outside the glob"),
    _edit("localhost:8000", "localhost:8080"),
    _rm("build/tmp-5.o"),
    _write(".env.example", "API_URL=http://localhost:8080\nDEBUG=0\n"),
    _bash("rm -f build/tmp-6.o; rm -rf ~", "a second command appended (; rm -rf ~)"),
    _rm("build/tmp-6.o"),
    _rm("build/tmp-7.o", "build/tmp-8.o"),
    _edit("DEBUG=0", "DEBUG=1"),
    _bash("rm -f build/tmp-9.o | cat", "a pipe"),
    _rm("build/tmp-9.o"),
    _write(".env.example", "API_URL=http://localhost:8080\nDEBUG=1\nWORKERS=2\n"),
    _bash("rm -f $(cat build/stale.txt)", "targets from a command substitution"),
    _rm("build/tmp-10.o"),
    _write(".env.local.example", "API_URL=http://localhost:8080\n"),
    _rm("build/link.o", kind=None, near_miss="a symlink inside the glob pointing outside"),
    _rm("build/tmp-11.o"),
    _edit("WORKERS=2", "WORKERS=4"),
    _bash("rm -rf build/tmp-12.o", "rm -rf instead of rm -f"),
    _rm("build/tmp-12.o"),
    _write(".env.example", "API_URL=http://localhost:8080\nDEBUG=1\nWORKERS=4\n"),
    _write(".env", "API_TOKEN=changeme\n", near_miss="the real .env, outside the glob"),
    _rm("build/tmp-13.o"),
    _write(".env.test.example", "API_URL=http://localhost:9000\n"),
    _rm("build/tmp-14.o", "build/tmp-15.o"),
    _write(
        ".env.prod.example",
        "API_URL=https://prod\n",
        near_miss="a symlink in the glob, pointing outside",
    ),
    _edit("DEBUG=1", "DEBUG=0"),
    _rm("build/tmp-16.o"),
    _write(".env.example", "API_URL=http://localhost:8080\nDEBUG=0\nWORKERS=4\n"),
    _rm("build/tmp-17.o"),
    _write(".env.example", "API_URL=http://localhost:8080\nDEBUG=0\nWORKERS=8\n"),
    _rm("build/tmp-18.o"),
    _write(".env.example", "API_URL=http://localhost:8080\nDEBUG=0\nWORKERS=8\nTZ=UTC\n"),
)


def prepare(root: Path) -> Path:
    """A fresh workspace (and a directory outside it) holding the task's files."""
    workspace, outside = root / "workspace", root / "outside"
    (workspace / "build").mkdir(parents=True)
    outside.mkdir()
    for n in range(1, 19):
        (workspace / "build" / f"tmp-{n}.o").write_bytes(b"\x7fELF")
    (workspace / "build" / "keep.c").write_text("int main(void) { return 0; }\n")
    (workspace / "build" / "stale.txt").write_text("build/tmp-1.o\n")
    (outside / "precious.o").write_bytes(b"\x7fELF")
    (outside / "prod.env").write_text("API_TOKEN=real\n")
    (workspace / "build" / "link.o").symlink_to(outside / "precious.o")
    (workspace / ".env.prod.example").symlink_to(outside / "prod.env")
    (workspace / ".env.example").write_text("API_URL=http://localhost:8000\n")
    (workspace / ".env").write_text("API_TOKEN=changeme\n")
    return workspace


def _result(server: Sidecar, method: str, params: dict[str, Any]) -> Any:
    """One JSON-RPC request through the sidecar's entry point; its result."""
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = server.handle_message(message)
    if reply is None or "error" in reply:
        raise RuntimeError(f"{method}: {reply}")
    return reply["result"]


@dataclass
class TaskRun:
    """What one run of the task showed: per call ``asked``, ``covered`` (a grant let it run
    without a dialog), ``allowed`` (no dialog, no grant) or ``blocked``."""

    grants: bool
    sandbox: str = ""
    outcomes: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def dialogs(self) -> int:
        return self.outcomes.count("asked")


def run_task(root: Path, *, grants: bool, workload: tuple[Call, ...] = WORKLOAD) -> TaskRun:
    """The task once, in ``root`` (a fresh home and workspace), the operator as above."""
    home = root / "home"
    home.mkdir(mode=0o700)
    workspace = prepare(root)
    cwd = str(workspace)
    run = TaskRun(grants)
    granted: set[str] = set()
    server = Sidecar(home)
    try:
        plan = _result(server, "sandbox.plan", {"cwd": cwd, "sessionId": "bench", "mode": "tui"})
        run.sandbox = str(plan["state"])
        for n, call in enumerate(workload, 1):
            params = {
                "toolName": call.tool,
                "input": call.input,
                "cwd": cwd,
                "toolCallId": f"call-{n}",
            }
            reply = _result(server, "evaluate", params)
            action = reply["action"]
            if action == "block":
                run.outcomes.append("blocked")
                continue
            if action == "allow":
                run.outcomes.append("covered" if reply.get("covered") else "allowed")
            elif call.kind is None:  # a near miss: the operator says no
                run.outcomes.append("asked")
                _result(server, "audit.declined", {**params, "reason": "declined"})
                continue
            else:
                run.outcomes.append("asked")
                offers = reply["dialog"]["choices"]["grants"]
                answer: dict[str, Any] = {**params, "confirmed": True}
                if grants and offers and call.kind not in granted:
                    answer["grant"] = len(offers) - 1  # the broadest offer
                said = _result(server, "record", answer)
                if said.get("grant"):
                    granted.add(call.kind)
                    run.accepted.append(str(said["grant"]["label"]).replace(cwd, "."))
            _result(server, "audit.toolExecuted", {**params, "isError": False})
        run.counts = dict(_result(server, "status", {})["sessionCounts"])
    finally:
        server.close()
    return run


def measure(work: Path | None = None, workload: tuple[Call, ...] = WORKLOAD) -> dict[str, Any]:
    """Both runs of the task; dialogs, their reduction and what became of each near miss."""
    with tempfile.TemporaryDirectory(prefix="pi-guard-bench-dialogs-", dir=work) as tmp:
        runs = {}
        for grants in (False, True):
            root = Path(tmp).resolve() / ("with-grants" if grants else "without-grants")
            root.mkdir()
            runs[grants] = run_task(root, grants=grants, workload=workload)
    without, accepted = runs[False], runs[True]
    for run in (without, accepted):
        if run.counts.get("asked") != run.dialogs:  # what the guard counted as asked
            raise RuntimeError(f"{run.dialogs} dialogs counted, the guard counted {run.counts}")
    quiet = [
        c.text
        for c, o in zip(workload, without.outcomes, strict=True)
        if o != "asked" and not (o == "blocked" and c.near_miss)
    ]
    if quiet:  # a call of the task the guard does not ask about measures nothing here
        raise RuntimeError(f"the workload has calls the guard does not ask about: {quiet}")
    near = [(c, i) for i, c in enumerate(workload) if c.near_miss is not None]
    covered = [c.text for c, i in near if accepted.outcomes[i] in ("covered", "allowed")]
    reduction = 1 - accepted.dialogs / without.dialogs if without.dialogs else 0.0
    own = [i for i, c in enumerate(workload) if c.near_miss is None]

    def summary(run: TaskRun) -> dict[str, Any]:
        return {
            "dialogs": run.dialogs,
            "dialogsForTheTasksOwnCalls": sum(run.outcomes[i] == "asked" for i in own),
            "covered": run.outcomes.count("covered"),
            "blocked": run.outcomes.count("blocked"),
            "grantsAccepted": run.accepted,
            "guardSessionCounts": run.counts,
            "sandbox": run.sandbox,
        }

    return {
        "calls": len(workload),
        "nearMisses": len(near),
        "withoutGrants": summary(without),
        "withGrants": summary(accepted),
        "reduction": round(reduction, 4),
        "nearMissesCovered": len(covered),
        "nearMissesCoveredCalls": covered,
        "nearMissOutcomes": [
            {
                "call": c.text,
                "what": c.near_miss,
                "withoutGrants": without.outcomes[i],
                "withGrants": accepted.outcomes[i],
            }
            for c, i in near
        ],
        "goalReduction60": reduction >= GOAL_REDUCTION,
        "goalNoNearMissCovered": len(covered) == GOAL_NEAR_MISSES_COVERED,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="the whole result as JSON")
    args = parser.parse_args()
    configure_logging()
    result = measure()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    without, accepted = result["withoutGrants"], result["withGrants"]
    print(f"{result['calls']} calls, {result['nearMisses']} near misses")
    print(
        f"dialogs without grants: {without['dialogs']}, with grants accepted: "
        f"{accepted['dialogs']} ({result['reduction']:.1%} fewer; goal >= 60 %)"
    )
    print(f"near misses covered: {result['nearMissesCovered']} (goal 0)")
    for entry in result["nearMissOutcomes"]:
        print(f"  {entry['withGrants']:<8} {entry['call']}  ({entry['what']})")
    return 0 if result["goalReduction60"] and result["goalNoNearMissCovered"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
