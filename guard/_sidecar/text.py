"""What the operator and the model read: the confirm dialog, block reasons, the planner tool.

The shim shows these verbatim; no wording is decided in TypeScript.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from audit.wire import parse_iso
from guard._effects import Hold, size_text, summary_line
from guard._evidence import Evaluation
from guard._facade import DeclineReason
from guard._grants import GrantOffer, inside
from guard._policy import PI_TOOLS, PLANNER_TOOL_NAME, ToolFacts, Verdict, describe_source
from guard._sandbox import SandboxPlan
from guard._sidecar.escape import command_line, listing, one_line
from guard._sidecar.wire import (
    Dialog,
    DialogChoices,
    EffectsDialog,
    GrantNote,
    ParentCall,
)

__all__ = [
    "NO_SANDBOX_YET",
    "PLANNER_TOOL_NAME",
    "block_reason_for",
    "dialog_for",
    "grant_choice",
    "grant_line",
    "runtime_note",
    "sandbox_block_reason",
    "sandbox_line",
    "sandbox_notice",
    "session_counts_line",
    "status_audit_damaged",
    "status_home_unusable",
    "status_on",
    "tools_lines",
    "wait_notice",
]


# Budgets: one value's line (head and tail kept beyond it), the command, list lengths.
VALUE_LIMIT = 240
COMMAND_LIMIT = 240
MAX_TARGETS = 12
MAX_REASONS = 12
# The compact dialog: each line two or three rows of an 80-column terminal (two targets,
# two reasons, then a count), so the question, the action and why stay on screen; the
# details carry every value at the budgets above.
COMPACT_LIMIT = 150
_TOOL_LIMIT = 64
_PLAN_LIMIT = 2000


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"


def _tool(tool_name: str) -> str:
    return one_line(tool_name, _TOOL_LIMIT)


def _command(tool_input: Mapping[str, Any] | None) -> str | None:
    command = tool_input.get("command") if tool_input is not None else None
    return command if isinstance(command, str) else None


def script_line(parent: ParentCall, tool_name: str, limit: int) -> str:
    """Which call made this one, and the lines of its script that name this tool (codemode
    scripts call ``tools.<identifier>``: every character not valid in one becomes ``_``)."""
    who = f"a {one_line(parent.tool_name, _TOOL_LIMIT)} call ({one_line(parent.tool_call_id, 40)})"
    code = parent.input.get("code") if parent.input is not None else None
    if not isinstance(code, str):
        return who
    ident = re.sub(r"[^A-Za-z0-9_$]", "_", tool_name)
    hits = [line.strip() for line in code.splitlines() if ident in line or tool_name in line]
    shown = "; ".join(hits[:2]) if hits else "(the script names it indirectly)"
    more = f" (+{len(hits) - 2} more)" if len(hits) > 2 else ""
    return command_line(f"{who}: {shown}{more}", limit)


def _preview(
    evaluation: Evaluation, tool_input: Mapping[str, Any] | None, tool_name: str = "bash"
) -> str | None:
    """The command, whole (head and tail around a count when long), secrets redacted.

    Without the tool input (older callers) the evaluation's short preview stands in;
    a file tool's preview is its path, already shown on its own line.
    """
    command = _command(tool_input)
    if command is not None:
        return command_line(command, COMMAND_LIMIT) if command.strip() else None
    if tool_input and tool_name not in PI_TOOLS:
        # A tool the guard does not know: its arguments, head and tail, secrets redacted.
        text = json.dumps(dict(tool_input), ensure_ascii=False, separators=(",", ":"))
        return command_line(text, COMMAND_LIMIT)
    fp = evaluation.fingerprint
    if not evaluation.preview or (fp is not None and fp.path is not None):
        return None
    return command_line(evaluation.preview, COMMAND_LIMIT)


def _action_lines(
    evaluation: Evaluation, tool_name: str, tool_input: Mapping[str, Any] | None
) -> list[str]:
    fp = evaluation.fingerprint
    lines = [f"Tool:     {_tool(tool_name)}", f"Kind:     {one_line(evaluation.action_kind)}"]
    if fp is not None and fp.path is not None:
        lines.append(f"Path:     {one_line(fp.path, VALUE_LIMIT)}")
    if fp is not None and fp.scope is not None:
        lines.append(f"Scope:    {one_line(fp.scope, VALUE_LIMIT)}")
    if evaluation.targets and (fp is None or list(evaluation.targets) != [fp.path]):
        targets = listing(evaluation.targets, max_items=MAX_TARGETS, limit=VALUE_LIMIT)
        lines.append(f"Targets:  {targets}")
    preview = _preview(evaluation, tool_input, tool_name)
    if preview:
        lines.append(f"Preview:  {preview}")
    if fp is not None:
        payload = one_line(fp.payload_hash[:23])
        lines.append(f"Payload:  {payload}… (hash of the exact tool input)")
    if evaluation.rule_ids:
        lines.append(f"Rules:    {listing(evaluation.rule_ids, max_items=MAX_REASONS)}")
    if evaluation.reasons:
        reasons = listing(evaluation.reasons, max_items=MAX_REASONS, limit=VALUE_LIMIT, sep="; ")
        lines.append(f"Why:      {reasons}")
    return lines


def dialog_for(
    evaluation: Evaluation,
    tool_name: str,
    *,
    ttl_seconds: int,
    confirm_timeout_ms: int,
    tool_input: Mapping[str, Any] | None = None,
    grants: Sequence[str] = (),
    parent: ParentCall | None = None,
) -> Dialog:
    """The confirm dialog, compact: the question, then the action (the command, the path
    or targets) and why, short enough for a small terminal; payload hash, rules, expiry,
    timeout and the report-only sentence are one choice away (``details``). ``grants``:
    the grant choices (:func:`grant_choice`), at most two.

    Every interpolated value is one escaped line (:mod:`guard._sidecar.escape`), so nothing
    in a path or a command can add, hide or reorder a line; ``tool_input`` gives the whole
    command (its head and tail are shown), not the evaluation's short preview.
    """
    tool = _tool(tool_name)
    fp = evaluation.fingerprint
    lines: list[str] = []
    if parent is not None:
        lines.append(f"From:     {script_line(parent, tool_name, COMPACT_LIMIT)}")
    command = _command(tool_input)
    if command is not None and command.strip():
        lines.append(f"Command:  {command_line(command, COMPACT_LIMIT)}")
    elif (preview := _preview(evaluation, tool_input, tool_name)) is not None:
        lines.append(f"Command:  {one_line(preview, COMPACT_LIMIT)}")
    if fp is not None and fp.path is not None:
        lines.append(f"Path:     {one_line(fp.path, COMPACT_LIMIT)}")
    if evaluation.targets and (fp is None or list(evaluation.targets) != [fp.path]):
        targets = listing(evaluation.targets, max_items=2, limit=COMPACT_LIMIT)
        lines.append(f"Targets:  {targets}")
    if evaluation.reasons:
        reasons = listing(evaluation.reasons, max_items=2, limit=COMPACT_LIMIT, sep="; ")
        lines.append(f"Why:      {reasons}")
    if not lines:  # nothing to show but the tool: say which, never an empty dialog
        lines.append(f"Tool:     {tool}")
    details = _action_lines(evaluation, tool_name, tool_input)
    if parent is not None:
        details.insert(0, f"From:     {script_line(parent, tool_name, VALUE_LIMIT)}")
    details += [
        f"Expiry:   evidence valid {ttl_seconds} s after you confirm, single use",
        f"Timeout:  no answer within {_seconds(confirm_timeout_ms)} counts as No",
        "No is preselected in the question. Yes records signed, report-only evidence"
        " and lets this one call run; it authorizes nothing else. A grant lets later calls"
        " inside it run without asking, each with its own evidence naming the grant.",
    ]
    title = f"operator-guard: allow {one_line(evaluation.action_kind)} {tool}?"
    return Dialog(
        title=title,
        message="\n".join(lines),
        details="\n".join(details),
        choices=DialogChoices(
            no="No",
            no_with_reason="No, and tell the agent why…",
            stop="No, and stop the agent",
            yes="Yes, this call once",
            grants=[one_line(g, COMPACT_LIMIT + 60) for g in grants[:2]],
            details="Details…",
        ),
        reason_title=f"operator-guard: why not? (the agent reads this; {tool} stays blocked)",
        reason_placeholder="e.g. use git clean -n first",
    )


def grant_choice(offer: GrantOffer, *, until: datetime, max_uses: int) -> str:
    """The dialog's line for one grant: what it covers, where, until when, how often."""
    scope = offer.pattern.scope
    home = os.path.expanduser("~")
    where = "~" + scope[len(home) :] if home != "/" and inside(scope, home) else scope
    what = offer.label.replace(scope.rstrip("/") + "/", "./")
    local = until.astimezone().strftime("%H:%M")
    return (
        f"Yes, and allow {what} in {where} for this session (until {local}, up to {max_uses} calls)"
    )


def wait_notice(
    tool_name: str,
    approval_id: str,
    confirm_timeout_ms: int,
    login: str | None = None,
    page_url: str | None = None,
) -> str:
    """The stderr line of a session without a UI whose call waits for another screen (the
    operator's terminal: it never reaches the model); ``login``: this session's page's
    one-time login; ``page_url``: the address of a page another session of the home runs."""
    if login:
        page = f"on the page {one_line(login, 200)}"
    elif page_url:
        page = f"on the page at {one_line(page_url, 200)} (/guard in its session gives a login)"
    else:
        page = "on the page of pi-guard approvals serve"
    return (
        f"operator-guard: this {_tool(tool_name)} call waits up to"
        f" {_seconds(confirm_timeout_ms)} for the operator:"
        f" pi-guard approvals approve {one_line(approval_id, 64)}"
        f" (or decline it, or answer {page}); no answer counts as No"
    )


def grant_line(note: GrantNote, now: datetime) -> str:
    """One active grant in ``/guard``: id, what, minutes and uses left."""
    left = max(0, int((parse_iso(note.expires_at_iso, "expiresAtIso") - now).total_seconds()))
    uses = note.max_uses - (note.uses or 0)
    label = one_line(note.label, VALUE_LIMIT)
    return f"  {note.grant_id}  {label}  ({left // 60} min, {uses} uses left)"


def block_reason_for(
    reason: DeclineReason | Literal["blocked-by-policy"],
    evaluation: Evaluation,
    tool_name: str,
    *,
    confirm_timeout_ms: int = 60_000,
    operator_reason: str | None = None,
    tool_input: Mapping[str, Any] | None = None,
) -> str:
    """The text pi returns as the blocked tool result (the model and the operator read it).

    ``operator_reason`` (already cleaned by :func:`guard._facade.guard.operator_reason_text`) is
    quoted after a decline. One line; every interpolated value escaped; every distinct
    target and reason named (up to a count).
    """
    what = {
        "declined": "the operator declined it",
        "timeout": f"no answer within {_seconds(confirm_timeout_ms)} (a timeout counts as No)",
        "no-ui": "it needs operator confirmation but this pi session has no UI"
        " (print or JSON mode)",
        "sidecar-unavailable": "the guard sidecar was unavailable (fail closed)",
        "blocked-by-policy": "the policy blocks it outright",
        "stopped": "stopped by the operator (No, and stop the agent): the rest of this turn"
        " is declined",
    }[reason]
    if reason == "declined" and operator_reason:
        what += f', saying: "{one_line(operator_reason, VALUE_LIMIT)}"'
    fp = evaluation.fingerprint
    target = fp.path if fp is not None else None
    detail = f" Target: {one_line(target, VALUE_LIMIT)}." if target else ""
    if evaluation.targets and list(evaluation.targets) != [target]:
        targets = listing(evaluation.targets, max_items=MAX_TARGETS, limit=VALUE_LIMIT)
        detail += f" Targets: {targets}."
    preview = _preview(evaluation, tool_input, tool_name)
    shown = f" Preview: {preview}." if preview else ""
    why = ""
    if evaluation.reasons:
        reasons = listing(evaluation.reasons, max_items=MAX_REASONS, limit=VALUE_LIMIT, sep="; ")
        why = f" Why: {reasons}."
    return (
        f"operator-guard blocked this {one_line(evaluation.action_kind)} {_tool(tool_name)}"
        f" call: {what}. Nothing was run.{detail}{shown}{why} [reason: {one_line(reason)}]"
    )


# -- the footer -------------------------------------------------------------------------------


def status_on(
    pid: int,
    sandbox: str | None = None,
    page: str | None = None,
    untested: str | None = None,
    *,
    problems: int = 0,
) -> str:
    """The footer while the guard works: the live sidecar's pid and, once the session's
    sandbox is planned, its state (``sandboxed``, ``unsandboxed``, ``sandbox unavailable``);
    ``page``: where the approval page is (never its login token); ``untested``: a pi newer
    than the guard is tested with; ``problems``: how many things the policy files get wrong
    (``/guard`` lists them)."""
    at = f", approvals at {one_line(page, 80)}" if page else ""
    if untested:
        at += f", pi {one_line(untested, 32)} untested: unknown tools ask"
    if problems:
        plural = "s" if problems != 1 else ""
        at += f", POLICY: {problems} problem{plural}, see /guard"
    if sandbox is None:
        return f"operator-guard on (sidecar pid {pid}{at})"
    shown = "sandbox unavailable" if sandbox == "unavailable" else one_line(sandbox)
    return f"operator-guard on (sidecar pid {pid}, {shown}{at})"


# -- the sandbox ------------------------------------------------------------------------------


def _plan_text(text: object) -> str:
    return one_line(text, _PLAN_LIMIT)


def sandbox_notice(plan: SandboxPlan) -> str | None:
    """What the operator is told at session start; nothing when the sandbox holds."""
    message = _plan_text(plan.message)
    if plan.state == "unsandboxed":
        return f"operator-guard: the agent's bash commands run UNSANDBOXED ({message})"
    if plan.state == "unavailable":
        fix = f"; {_plan_text(plan.fix)}" if plan.fix else ""
        return (
            f"operator-guard: the agent's bash is blocked: the OS sandbox cannot start"
            f" ({_plan_text(plan.reason)}: {message}{fix}) [reason: sandbox-unavailable]"
        )
    if not plan.workspace_writable:
        return (
            f"operator-guard: the agent's commands cannot write this folder ({message});"
            " every file the agent writes asks first"
        )
    return None


NO_SANDBOX_YET = (
    "operator-guard blocked this bash call: the OS sandbox the agent's commands run in is not"
    " ready. Nothing was run. [reason: sandbox-unavailable]"
)


def sandbox_block_reason(plan: SandboxPlan) -> str | None:
    """The tool result of an agent ``bash`` call while the sandbox is unavailable."""
    if plan.state != "unavailable":
        return None
    return (
        f"operator-guard blocked this bash call: the OS sandbox the agent's commands run in"
        f" cannot start here ({_plan_text(plan.reason)}: {_plan_text(plan.message)})."
        " Nothing was run."
        " [reason: sandbox-unavailable]"
    )


def session_counts_line(session: Mapping[str, Any] | None, counts: Mapping[str, int]) -> str:
    """The ``this session:`` line of ``/guard``: what was asked and answered, blocked and run."""
    line = (
        f"asked {counts.get('asked', 0)} (yes {counts.get('confirmed', 0)},"
        f" no {counts.get('declined', 0)}),"
        + (f" covered by grants {counts['covered']}," if counts.get("covered") else "")
        + f" blocked {counts.get('blocked', 0)}, ran {counts.get('executed', 0)}"
    )
    if session is not None:
        line += f" [session {one_line(str(session.get('id')), VALUE_LIMIT)}]"
    return line


def sandbox_line(plan: SandboxPlan | None) -> str:
    """The ``sandbox:`` line of ``/guard``."""
    if plan is None:
        return "not planned yet (no session started in this sidecar)"
    message = _plan_text(plan.message)
    if plan.state == "sandboxed":
        return f"sandboxed: {message}"
    return f"{_plan_text(plan.state)} [{_plan_text(plan.reason)}]: {message}"


def status_home_unusable(path: str, problem: str) -> str:
    """The footer when the sidecar runs but cannot open the home (every risky call blocks)."""
    return (
        f"operator-guard home unusable ({one_line(path, VALUE_LIMIT)}:"
        f" {one_line(problem, VALUE_LIMIT)})"
    )


def status_audit_damaged(kind: str) -> str:
    """The footer (and the session-start notice) while the audit log does not verify: the
    guard signs nothing over the damage, so every tool call is blocked (it said "off", which
    reads as "calls run unguarded")."""
    return (
        "operator-guard blocks every tool call: the audit log does not verify"
        f" ({one_line(kind, _TOOL_LIMIT)}); run pi-guard audit verify, then pi-guard audit"
        " recover --reason TEXT, and restart pi"
    )


def runtime_note(has_ui: bool) -> str:
    """What the planner tool adds inside pi, so its report matches what the operator sees."""
    if has_ui:
        return (
            "Inside pi: operator-guard owns the confirmation dialog in this session and asks"
            " before every destructive or protected call (No preselected); a Yes records"
            " report-only evidence for that one call in the session (pi.appendEntry)."
            " This plan adds no dialog and authorizes nothing."
        )
    return (
        "Inside pi without a UI (print or JSON mode): operator-guard cannot show its"
        " dialog here, so every destructive or protected call is blocked."
        " This plan adds no dialog and authorizes nothing."
    )


# -- the planner tool --------------------------------------------------------------------------


def effects_dialog(
    held: Sequence[Hold], command: str, output_tail: str, moved: Mapping[str, str] | None = None
) -> EffectsDialog:
    """What the operator sees when a command's changes are held: the command, what would
    be lost (each path with why, its files and size; a deletion the command moved says
    where to: ``moved``, workspace-relative path to destination), the end of its output.
    Discard comes first unless applying only creates files (see :class:`EffectsDialog`)."""
    lines = [f"Command:  {command_line(command)}", f"Held:     {one_line(summary_line(held))}"]
    why = {
        "untracked": "not in git",
        "uncommitted": "uncommitted changes",
        "not-in-git": "no repository can restore it",
        "repository": "the repository itself",
        "protected": "a protected path",
        "beyond-approval": "beyond what you said yes to",
        "conflict": "the workspace changed under the command",
        "unexamined": "too many files to examine each",
        "mode": "setuid, world-writable, or the owner's access taken away",
    }
    for hold in held[:12]:
        effect, to = hold.effect, (moved or {}).get(hold.effect.path)
        noun = "file" if hold.files == 1 else "files"
        size = f"; {hold.files} {noun}, {size_text(hold.bytes)}" if hold.files else ""
        kind = (
            f"moved to {one_line(to, VALUE_LIMIT)}:"
            if to and effect.kind == "deleted"
            else (one_line(effect.kind))
        )
        lines.append(f"  {kind} {one_line(effect.path, VALUE_LIMIT)} ({why[hold.reason]}{size})")
    if len(held) > 12:
        lines.append(f"  … and {len(held) - 12} more")
    tail = [one_line(line, VALUE_LIMIT) for line in output_tail.splitlines()[-5:] if line.strip()]
    if tail:
        lines.append("Output:   " + tail[0])
        lines += [f"          {line}" for line in tail[1:]]
    creates = _only_creates(held)
    lines.append(
        "The command has ended; the rest of what it did is applied. "
        + (
            "Apply is preselected (applying loses nothing): Enter alone applies; no answer"
            " in time discards."
            if creates
            else "Discard is preselected: Enter alone keeps the workspace as it was for these."
        )
    )
    return EffectsDialog(
        title=f"operator-guard: the agent's command wants to {_held_wants(held)}",
        message="\n".join(lines),
        discard="Discard these changes",
        apply="Apply them (records signed, report-only evidence)",
        preselect="apply" if creates else "discard",
    )


def _only_creates(held: Sequence[Hold]) -> bool:
    """Applying loses nothing: every held change creates a path where none was, and none in
    a place whose content runs (``.pi``, ``.git``) or was set to run (a mode hold)."""
    return bool(held) and all(
        h.effect.kind == "created"
        and h.effect.was == "none"
        and h.reason not in ("conflict", "mode")
        and not {".pi", ".git"}.intersection(h.effect.path.split("/"))
        for h in held
    )


def _held_wants(held: Sequence[Hold]) -> str:
    """What the held changes are, for the title: a creation is never called a deletion."""
    kinds = {h.effect.kind for h in held}
    if kinds & {"deleted", "modified", "replaced"}:
        return "delete or overwrite work"
    if kinds == {"created"}:
        return "create files in a protected place"
    return "change protected files"


def effects_note(
    decision: str,
    held: Sequence[Hold],
    reason: str | None = None,
    skipped: Sequence[Hold] = (),
) -> str:
    """The one line the command's output gets (the model reads it); ``skipped``: what an
    apply left as it was (a conflict, or changed since the command ran)."""
    what = one_line(summary_line(held))
    if decision == "applied" and skipped:
        kept = one_line(", ".join(h.effect.path for h in skipped[:5]), 200)
        more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        return (
            f"operator-guard: the operator applied what this command held back ({what}),"
            f" except {len(skipped)} path(s) that changed since the command ran or conflicted,"
            f" left as they are: {kept}{more}. [reason: effects-partly-applied]"
        )
    if decision == "applied":
        return f"operator-guard: the operator applied what this command held back ({what})."
    why = {"timeout": "no answer in time", "no-ui": "nobody could be asked"}.get(reason or "", "")
    because = f" ({why})" if why else ""
    return (
        f"operator-guard: this command's {what} were discarded{because}: those files are as"
        " they were. [reason: effects-discarded]"
    )


def input_changed_reason(tool_name: str) -> str:
    """The tool result of a call whose input changed after the guard decided on it."""
    return (
        f"operator-guard refused this {_tool(tool_name)} call: its input is not the one the"
        " guard decided on (something changed it afterwards). Nothing was run."
        " [reason: input-changed-after-decision]"
    )


def tools_lines(judged: Sequence[tuple[ToolFacts, Verdict]], reachable: int) -> list[str]:
    """``/guard``'s list of the tools beyond pi's built-in ones, and how the guard judges
    each when nothing in its input names a protected path or a command (``judged``: the
    verdict of a call with no arguments)."""
    if not reachable:
        return []
    lines = [f"  tools:        {reachable} reachable; pi's built-in ones by the guard's rules"]
    for facts, verdict in judged[:64]:
        if facts.reaches_tools:
            how = "reaches other tools: each call it makes is judged on its own"
        elif verdict.verdict == "block":
            how = f"blocked ({', '.join(verdict.rule_ids[:2])})"
        elif verdict.verdict == "confirm":
            asks = "by default" if verdict.rule_ids[:1] == ("builtin.unknown-tool",) else "by rule"
            how = f"asks {asks} ({', '.join(verdict.rule_ids[:2])})"
        elif verdict.rule_ids:
            how = f"runs unasked by your rule {verdict.rule_ids[0]}"
        elif verdict.reasons:
            how = f"runs unasked: {verdict.reasons[0]}"
        else:
            how = "runs unasked (the guard's own, or a read)"
        source = describe_source(facts.name, facts)
        lines.append(f"    {one_line(facts.name, _TOOL_LIMIT)} [{one_line(source, 80)}]: {how}")
    if len(judged) > 64:
        lines.append(f"    … and {len(judged) - 64} more")
    return lines
