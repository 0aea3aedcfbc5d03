"""``pi-guard demo``: the evidence life cycle in a temporary home, as a short transcript.

Nothing here touches the user's real guard home or project.
"""

from __future__ import annotations

import copy
import subprocess
import tempfile
from pathlib import Path
from typing import Any, TextIO

from audit.verify import build_report, read_records, render_report
from guard._facade import Guard
from guard._hermetic import system_program

__all__ = ["run_demo"]


def _line(out: TextIO, text: str = "") -> None:
    out.write(text + "\n")
    out.flush()


def run_demo(out: TextIO) -> int:
    """Run the demonstration; returns 0 when every step behaved as documented."""
    ok = True
    with tempfile.TemporaryDirectory(prefix="pi-guard-demo-") as tmp:
        home = Path(tmp) / "home"
        project = Path(tmp) / "project"
        (project / "build").mkdir(parents=True)
        (project / "build" / "artifact.o").write_text("object code\n")
        call: dict[str, Any] = {"command": "rm -rf build"}
        _line(out, "pi-operator-guard demo (temporary home and project; report-only evidence)")
        _line(out)
        with Guard.open(home) as guard:
            _line(out, f"1. key generated        {guard.key_id[:24]}…")
            ev = guard.evaluate("bash", call, project)
            _line(
                out,
                f"2. evaluate bash        `{call['command']}` -> {ev.action_kind}, "
                f"{'asks the operator' if ev.requires_confirmation else 'no dialog'}"
                f" [{', '.join(ev.rule_ids)}]",
            )
            rec = guard.record("bash", call, project, confirmed=True, tool_call_id="call_demo_1")
            assert rec.envelope is not None
            envelope = rec.envelope.model_dump(mode="json")
            _line(
                out,
                f"3. operator said yes    evidence {rec.evidence_id} (expires "
                f"{rec.expires_at_iso}, dispatchAllowed=false)",
            )
            first = guard.consume(envelope, "bash", call, project, tool_call_id="call_demo_1")
            _line(out, f"4. monitor consumes     -> {first.decision} ({first.match.decision})")
            ok &= first.decision == "consumed"
            shell = system_program("bash")  # never a bash the PATH offers (guard/_hermetic.py)
            done = subprocess.run([shell, "-c", call["command"]], cwd=project, check=False)
            guard.tool_executed(
                "call_demo_1", "bash", call, project, done.returncode != 0, rec.evidence_id
            )
            _line(
                out,
                f"   the command ran      build/ exists afterwards: {(project / 'build').exists()}",
            )
            replay = guard.consume(envelope, "bash", call, project, tool_call_id="call_demo_1")
            _line(
                out,
                f"5. replay               -> {replay.decision} "
                f"({replay.match.decision}: {', '.join(replay.reasons)})",
            )
            ok &= replay.match.decision == "consumed"
            tampered = copy.deepcopy(envelope)
            tampered["details"]["expiresAtIso"] = "2099-01-01T00:00:00.000Z"
            forged = guard.consume(tampered, "bash", call, project, tool_call_id="call_demo_1")
            _line(
                out,
                f"6. tampered expiry      -> {forged.decision} "
                f"({forged.match.decision}: {', '.join(forged.reasons)})",
            )
            ok &= forged.reasons == ("signature-invalid",)
            # The same yes, shown for another call: the exact action is checked before single
            # use, so it is a mismatch (no second yes: the story has one).
            moved = guard.consume(
                envelope, "bash", {"command": "rm -rf src"}, project, tool_call_id="call_demo_2"
            )
            _line(
                out,
                f"7. evidence for another call -> {moved.decision} "
                f"({moved.match.decision}: {', '.join(moved.reasons)})",
            )
            ok &= moved.match.decision == "mismatch"
            verdict = guard.verify_audit()
            _line(
                out,
                f"8. audit verify         -> {verdict.decision} "
                f"({verdict.records} records, head signed by {guard.key_id[:20]}…)",
            )
            ok &= verdict.decision == "intact"
            _line(out)
            report = build_report(read_records(guard.audit.path))
            _line(out, render_report(report))
        _line(out)
        _line(
            out,
            "demo finished: " + ("every step behaved as documented" if ok else "UNEXPECTED RESULT"),
        )
    return 0 if ok else 1
