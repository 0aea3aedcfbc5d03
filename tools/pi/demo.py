"""``make demo``: the guard inside the real pi, driven by a scripted model, answered by a script.

Run from the clone's root with the project's virtualenv: ``python -m tools.pi.demo``.

Installs the newest tested pi (``tools/pi/current``: exact version, lockfile, ``npm ci``) into
the ignored ``.cache/pi-current`` of the clone (and Node 22 into ``.cache/node`` when the
machine's node is older than that pi needs), starts :mod:`tools.pi.scripted_model` on
127.0.0.1, installs the extension into a temporary pi agent dir (the personal install, which
pi loads whatever the project's trust), runs ``pi --mode rpc`` in a temporary project, answers
the guard's dialogs (one yes, one no), prints a readable transcript, then plays the monitor
consumer on the envelope pi stored in its session, and ends with ``audit verify`` and
``audit report``.

Exit code: 0 when the audit log verifies, 4 when it does not, 2 when pi cannot be set up.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from audit import shorten
from guard import Guard
from guard._sandbox import find_bwrap, probe
from tools.pi.harness import (
    NEWEST,
    Pick,
    PiRpc,
    PiSetupError,
    ensure_pi,
    find_repo_root,
    grant_choices,
    install_guard,
    read_session_entries,
    write_agent_dir,
)
from tools.pi.scripted_model import ScriptedModelServer, ToolCall, Turn

__all__ = ["DEMO_ANSWERS", "DEMO_SCENARIO", "DEMO_TURNS", "main", "run_pi_demo", "sandbox_ready"]

DEMO_SCENARIO = "demo"
DEMO_TURNS = (
    Turn(tool_calls=(ToolCall("read", {"path": "README.md"}),)),
    Turn(tool_calls=(ToolCall("bash", {"command": "rm -rf build"}),)),
    Turn(tool_calls=(ToolCall("write", {"path": ".env", "content": "API_TOKEN=changed\n"}),)),
    Turn(tool_calls=(ToolCall("bash", {"command": "rm -f notes-1.txt"}),)),
    Turn(tool_calls=(ToolCall("bash", {"command": "rm -f notes-2.txt"}),)),
    Turn(tool_calls=(ToolCall("bash", {"command": "rm -f notes-3.txt"}),)),
    Turn(tool_calls=(ToolCall("bash", {"command": "rm -f notes.log"}),)),
    Turn(
        tool_calls=(
            ToolCall(
                "operator_confirmation_implementation_channel_plan", {"guardCanOwnDialog": True}
            ),
        )
    ),
    Turn(text="That is all: the tool results above say what ran and what was blocked."),
)


def _short(value: object, limit: int = 100) -> str:
    """A transcript line: JSON for non-strings, whitespace runs collapsed, then shortened."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return shorten(" ".join(text.split()), limit)


def _result_text(result: Mapping[str, Any]) -> str:
    parts = result.get("content") or []
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


# The operator's answers, keyed to what the dialog is about (never to the order dialogs
# come in: a dialog that does not come, or one more, can never shift a yes onto another).
# For notes-1.txt the operator takes the dialog's second grant (``rm -f`` of ``./*.txt`` for
# this session): notes-2.txt and notes-3.txt then run without a dialog, each with evidence of
# its own; notes.log is outside the grant's glob and is asked about (a near miss).
DEMO_ANSWERS: tuple[tuple[str, bool | Pick], ...] = (
    ("rm -rf build", True),
    (".env", False),
    ("rm -f notes-1.txt", Pick("grant", 1)),
    ("rm -f notes.log", False),
)


class _Transcript:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.unexpected: list[str] = []

    def say(self, who: str, text: str) -> None:
        first, *rest = text.splitlines() or [""]
        self.out.write(f"{who:>10} │ {first}\n")
        for line in rest:
            self.out.write(f"{'':>10} │ {line}\n")
        self.out.flush()

    def answer(self, request: Mapping[str, Any]) -> bool | Pick:
        text = str(request.get("title") or "")
        self.say("guard asks", text)
        for choice in request.get("options") or []:
            self.say("", f"  [{choice}]")
        answers = [yes for about, yes in DEMO_ANSWERS if about in text]
        if len(answers) != 1:  # not a dialog this story has: No, and the demo fails
            self.unexpected.append(text.splitlines()[0] if text else "(empty dialog)")
            answers = [False]
        said = answers[0]
        if isinstance(said, Pick):
            self.say("operator", grant_choices(request)[said.index])
        else:
            self.say("operator", "yes" if said else "no")
        return said

    def on_event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "tool_execution_start":
            self.say("model", f"calls {event['toolName']} {_short(event.get('args'))}")
        elif kind == "tool_execution_end":
            status = "error" if event.get("isError") else "ok"
            text = _result_text(event.get("result") or {})
            self.say("tool", f"[{status}] {_short(text, 300)}")
        elif kind == "message_end":
            message = event.get("message") or {}
            if message.get("role") == "assistant":
                text = _result_text(message)
                if text:
                    self.say("model", text)


def sandbox_ready() -> str | None:
    """Why the agent's commands could not be sandboxed here (``None``: they can)."""
    probed = probe(find_bwrap())
    return None if probed.ok else probed.message


def run_pi_demo(out: TextIO) -> int:
    """Run the real-pi demo, printing to ``out``. Returns 0 when the story ran as told and
    the audit log verifies; 7 (before pi starts) when the sandbox cannot start here."""
    why = sandbox_ready()
    if why is not None:
        sys.stderr.write(f"demo: the sandbox the agent's commands run in cannot start: {why}\n")
        return 7
    root = find_repo_root()
    pi = ensure_pi(root, NEWEST, log=out)
    out.write(f"pi ready: {pi.package} {pi.version} on node {pi.node_version}\n\n")
    with (
        tempfile.TemporaryDirectory(prefix="pi-guard-demo-") as tmp,
        ScriptedModelServer({DEMO_SCENARIO: DEMO_TURNS}) as server,
    ):
        base = Path(tmp)
        project = base / "project"
        (project / "build").mkdir(parents=True)
        (project / "build" / "app.bin").write_bytes(b"\0" * 64)
        (project / "README.md").write_text("# demo project\n")
        (project / ".env").write_text("API_TOKEN=original\n")
        for name in ("notes-1.txt", "notes-2.txt", "notes-3.txt", "notes.log"):
            (project / name).write_text("draft\n")
        agent_dir = write_agent_dir(base / "agent", server.base_url)
        home = agent_dir / "operator-guard"
        sessions = base / "sessions"
        result = install_guard("global", project, agent_dir, home=home)
        # The first lines only: the rest is advice for an install that outlives the demo.
        out.write("\n".join(result.render().splitlines()[:3]) + "\n\n")
        out.write(f"model server: {server.base_url} (scripted, loopback only)\n")
        out.write(f"running: pi --mode rpc in {project}\n\n")

        transcript = _Transcript(out)
        with PiRpc(pi, project, agent_dir, session_dir=sessions) as session:
            transcript.say("user", f"scenario:{DEMO_SCENARIO}")
            session.prompt(
                f"scenario:{DEMO_SCENARIO} tidy up the project",
                transcript.answer,
                on_event=transcript.on_event,
            )
        out.write("\n")
        out.write(f"build/ exists afterwards: {(project / 'build').exists()}\n")
        out.write(f".env afterwards: {(project / '.env').read_text().strip()}\n")
        kept = sorted(p.name for p in project.glob("notes*"))
        out.write(f"notes files afterwards: {', '.join(kept) or 'none'}\n\n")

        envelopes = [
            e["data"]
            for e in read_session_entries(sessions)
            if e.get("type") == "custom" and e.get("customType") == "operator-confirmation-evidence"
        ]
        out.write(f"evidence envelopes in the session file: {len(envelopes)}\n")
        with Guard.open(home) as guard:
            for envelope in envelopes:
                details = envelope["details"]
                covered = details.get("coveredBy")
                how = f" covered by {covered['grantId']} (use {covered['use']})" if covered else ""
                out.write(
                    f"  {details['evidenceId']}: {details['toolName']} {details['actionKind']}"
                    f" origin {details['origin']}{how} dispatchAllowed="
                    f"{str(details['dispatchAllowed']).lower()}\n"
                )
            out.write(_monitor(guard, envelopes, project))
            out.write("\n")
            verify = guard.verify_audit()
        out.write(_render_audit(home, verify))
        if transcript.unexpected:
            sys.stderr.write(f"demo: a dialog the story does not have: {transcript.unexpected}\n")
            return 1
        if (project / "build").exists() or "changed" in (project / ".env").read_text():
            sys.stderr.write("demo: the story did not end as told (build/ kept or .env written)\n")
            return 1
        if sorted(p.name for p in project.glob("notes*")) != ["notes.log"]:
            sys.stderr.write("demo: the grant did not cover notes-2.txt and notes-3.txt only\n")
            return 1
        return 0 if _intact(verify) else 4


def _monitor(guard: Guard, envelopes: list[dict[str, Any]], project: Path) -> str:
    """A monitor consumes the dialog's evidence for ``rm -rf build`` (refused where it requires
    the operator's passkey, then once, then the replay),
    then a grant-covered envelope: refused where it requires a dialog, accepted otherwise."""
    lines: list[str] = []
    dialog = [e for e in envelopes if e["details"]["origin"] == "runtime-ui-confirm"]
    covered = [e for e in envelopes if e["details"]["origin"] == "runtime-grant"]
    if dialog:
        call = ("bash", {"command": "rm -rf build"}, project)
        lines.append("  a monitor consumes the first against bash {command: rm -rf build}:")
        # A monitor that wants the operator's own passkey behind every yes refuses the dialog's
        # evidence (and consumes nothing); see docs/monitor.md, "The operator's signature".
        # The monitor names the pending call (the session's call of `rm -rf build`).
        call_id = dialog[0]["details"].get("toolCallId")
        passkey = guard.consume(
            dialog[0], *call, tool_call_id=call_id, require_operator_signature=True
        )
        lines.append(
            f"    requiring the operator's passkey: {passkey.decision} (match: "
            f"{passkey.match.decision}, {', '.join(passkey.reasons)})"
        )
        for attempt in ("first", "replay"):
            consumed = guard.consume(dialog[0], *call, tool_call_id=call_id)
            why = f", {', '.join(consumed.reasons)}" if consumed.reasons else ""
            lines.append(
                f"    {attempt}: {consumed.decision} (match: {consumed.match.decision}{why})"
            )
    if covered:
        use = covered[0]["details"]["coveredBy"]["use"]
        call = ("bash", {"command": f"rm -f notes-{use + 1}.txt"}, project)
        lines.append(
            f"  a monitor consumes a grant-covered one against bash rm -f notes-{use + 1}.txt:"
        )
        for label, strict in (("requiring a dialog", True), ("accepting grants", False)):
            consumed = guard.consume(
                covered[0],
                *call,
                tool_call_id=covered[0]["details"].get("toolCallId"),
                require_dialog=strict,
            )
            why = f", {', '.join(consumed.reasons)}" if consumed.reasons else ""
            lines.append(
                f"    {label}: {consumed.decision} (match: {consumed.match.decision}{why})"
            )
    return "\n".join(lines) + "\n\n"


def _intact(verify: Any) -> bool:
    return getattr(verify, "decision", None) == "intact"


def _render_audit(home: Path, verify: Any) -> str:
    """``pi-guard audit verify`` and ``audit report`` for the demo home, as the CLI prints them."""
    lines = ["$ pi-guard audit verify"]
    for args in (["audit", "verify"], ["audit", "report"]):
        done = subprocess.run(
            [sys.executable, "-m", "guard", "--home", str(home), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if args[1] == "report":
            lines.append("$ pi-guard audit report")
        lines.append(textwrap.indent((done.stdout + done.stderr).rstrip(), "  "))
        lines.append(f"  (exit {done.returncode})")
    lines.append(f"audit log intact: {_intact(verify)}")
    return "\n".join(lines) + "\n"


def main() -> int:
    """``python -m tools.pi.demo``: the demo on stdout; a setup failure is one line on stderr."""
    try:
        return run_pi_demo(sys.stdout)
    except PiSetupError as exc:
        sys.stderr.write(f"demo: {exc}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("demo: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
