"""``render_report``: the report as plain-text tables for people (compact by default,
every column with ``wide``), cells made terminal-safe."""

from __future__ import annotations

from collections.abc import Iterable

from audit._reporting.rows import NO_SESSION, AuditReport, EffectsRow, GrantRow, ReportRow
from audit._reporting.table import render_table, safe_cell, short_hash

__all__ = ["TABLE_WIDTH", "render_report"]

TABLE_WIDTH = 120
"""The compact tables fit this many characters a line; ``wide`` shows every column."""


def _when(ts: str) -> str:
    """``MM-DD HH:MM:SS`` of an ISO timestamp (the JSON keeps it whole)."""
    return f"{ts[5:10]} {ts[11:19]}" if len(ts) >= 19 else ts


def _result(row: ReportRow) -> str:
    if row.reason is not None:
        return f"GAP {row.reason}"
    ok = "ok by grant" if row.grant_id is not None else "ok"
    return f"{ok}, {row.consumption or 'not consumed'}".replace("not-consumed", "not consumed")


def _grant_end(grant: GrantRow) -> str:
    """How a grant ended, in a few words (``not ended``: the log records no end)."""
    if grant.ended is None:
        return "not ended"
    if grant.ended == "revoked":
        return "revoked (/guard)" if grant.ended_by == "guard-command" else "revoked (pi-guard)"
    return f"expired ({grant.ended})"


def _grant_calls(grant: GrantRow) -> str:
    return f"{grant.covered}" if grant.max_uses is None else f"{grant.covered}/{grant.max_uses}"


def _grants_table(report: AuditReport, *, wide: bool) -> str:
    """The scoped grants: what each covers, how many calls it covered, how it ended."""
    if not report.grants:
        return ""
    if wide:
        rows = [
            [
                "-" if g.created_seq is None else str(g.created_seq),
                g.created_at_iso or "-",
                g.grant_id,
                g.session or "-",
                g.breadth or "-",
                str(g.covered),
                str(g.ran),
                str(g.uses),
                "-" if g.max_uses is None else str(g.max_uses),
                g.expires_at_iso or "-",
                _grant_end(g) + ("" if g.ended_seq is None else f" at seq {g.ended_seq}"),
                g.evidence_id or "-",
                g.label or "-",
            ]
            for g in report.grants
        ]
        headers = ["SEQ", "TIME", "GRANT", "SESSION", "BREADTH", "COVERED", "RAN", "USES",
                   "MAX", "EXPIRES", "ENDED", "EVIDENCE", "COVERS"]  # fmt: skip
        return "\nscoped grants (calls each covered without a dialog):\n" + render_table(
            headers, rows
        )
    rows = [
        [
            "-" if g.created_seq is None else str(g.created_seq),
            g.grant_id,
            _grant_calls(g),
            _grant_end(g),
            g.label or "-",
        ]
        for g in report.grants
    ]
    headers = ["SEQ", "GRANT", "COVERED", "ENDED", "COVERS"]
    return "\nscoped grants (calls each covered without a dialog):\n" + render_table(
        headers, rows, width=TABLE_WIDTH
    )


def _by(row: EffectsRow) -> str:
    """Who settled a review, in a few words."""
    if row.by == "operator":
        return f"operator ({row.approver})" if row.approver else "operator"
    return row.by or "nobody yet"


def _held(row: EffectsRow) -> str:
    """What a review held (``kind path (reason)``), else what the command changed."""
    more = f" … {row.held_total} in all" if row.held_total > len(row.held_paths) else ""
    if row.held_paths:
        return "; ".join(row.held_paths) + more
    return ", ".join(f"{n} {kind}" for kind, n in row.counts.items()) or "-"


def _effects_table(report: AuditReport, *, wide: bool) -> str:
    """The effects review: every command that held work (``wide``: every one that changed
    something), what it held, how it ended and by whom."""
    shown = [e for e in report.effects if wide or e.held]
    if not shown:
        return ""
    rows = [
        [str(e.seq), e.ts if wide else _when(e.ts), e.outcome, _by(e),
         *([e.tool_call_id or "-", e.evidence_id or "-"] if wide else []),
         e.command or "-",
         _held(e)]
        for e in shown
    ]  # fmt: skip
    headers = ["SEQ", "TIME", "OUTCOME", "BY", *(["CALL", "EVIDENCE"] if wide else []),
               "COMMAND", "HELD"]  # fmt: skip
    what = "every command that changed the workspace" if wide else "commands that held work"
    return f"\neffects review ({what}):\n" + render_table(
        headers, rows, width=None if wide else TABLE_WIDTH
    )


def _compact_tables(report: AuditReport, external: bool) -> str:
    """The per-call tables within :data:`TABLE_WIDTH`: what, when, the result and what it
    was; hashes, call ids and the rest are in ``--wide`` and ``--json``."""
    rows = [
        [
            "-" if r.seq is None else str(r.seq),
            _when(r.ts),
            r.tool_name,
            r.action_kind,
            _result(r),
            r.evidence_id or "-",
            (r.source + ": " if external and r.source else "") + (r.preview or r.path or "-"),
        ]
        for r in report.rows
    ]
    headers = ["SEQ", "TIME", "TOOL", "KIND", "RESULT", "EVIDENCE", "WHAT"]
    text = (
        render_table(headers, rows, width=TABLE_WIDTH)
        if rows
        else "(no destructive or protected executions)\n"
    )
    if report.stopped:
        stopped = [
            [str(r.seq), _when(r.ts), r.tool_name, r.action_kind,
             f"{r.outcome}: {r.reason}" + (" (late)" if r.delivered_late else ""),
             r.preview or r.path or "-"]
            for r in report.stopped
        ]  # fmt: skip
        headers = ["SEQ", "TIME", "TOOL", "KIND", "OUTCOME", "WHAT"]
        text += "\ncalls that did not run:\n" + render_table(headers, stopped, width=TABLE_WIDTH)
    if report.allowed:
        allowed = [
            [str(r.seq), _when(r.ts), r.tool_name, ",".join(r.rule_ids), r.preview or "-"]
            for r in report.allowed
        ]
        headers = ["SEQ", "TIME", "TOOL", "RULES", "WHAT"]
        text += "\nran without asking because a user rule allowed it:\n" + render_table(
            headers, allowed, width=TABLE_WIDTH
        )
    return text + _grants_table(report, wide=False) + _effects_table(report, wide=False)


def _wide_tables(report: AuditReport, external: bool) -> str:
    """Every column of every row (``audit report --wide``)."""
    grants = any(r.grant_id is not None for r in report.rows)
    rows = [
        [
            "-" if r.seq is None else str(r.seq),
            r.ts,
            r.tool_name,
            r.tool_call_id,
            r.action_kind,
            r.classification,
            r.reason or "-",
            r.evidence_id or "-",
            r.consumption or "-",
            "yes" if r.is_error else "no",
            short_hash(r.payload_hash),
            r.preview or r.path or "-",
            *([r.source or "-"] if external else []),
            *([r.grant_id or "-"] if grants else []),
        ]
        for r in report.rows
    ]
    headers = [
        "SEQ",
        "TIME",
        "TOOL",
        "CALL",
        "KIND",
        "CLASS",
        "REASON",
        "EVIDENCE",
        "CONSUMPTION",
        "ERROR",
        "PAYLOAD",
        "WHAT",
        *(["SOURCE"] if external else []),
        *(["GRANT"] if grants else []),
    ]
    text = render_table(headers, rows) if rows else "(no destructive or protected executions)\n"
    if report.stopped:
        stopped = [
            [
                str(r.seq),
                r.ts,
                r.tool_name,
                r.tool_call_id or "-",
                r.action_kind,
                r.outcome,
                r.reason,
                f"yes ({r.occurred_at_iso})" if r.delivered_late else "no",
                short_hash(r.payload_hash),
                r.preview or r.path or "-",
            ]
            for r in report.stopped
        ]
        headers = ["SEQ", "TIME", "TOOL", "CALL", "KIND", "OUTCOME", "REASON", "LATE"]
        text += "\ncalls that did not run:\n" + render_table([*headers, "PAYLOAD", "WHAT"], stopped)
    if report.allowed:
        allowed = [
            [str(r.seq), r.ts, r.tool_name, r.tool_call_id, ",".join(r.rule_ids),
             "yes" if r.is_error else "no", short_hash(r.payload_hash), r.preview or "-"]
            for r in report.allowed
        ]  # fmt: skip
        headers = ["SEQ", "TIME", "TOOL", "CALL", "RULES", "ERROR", "PAYLOAD", "WHAT"]
        text += "\nran without asking because a user rule allowed it:\n" + render_table(
            headers, allowed
        )
    return text + _grants_table(report, wide=True) + _effects_table(report, wide=True)


def _count_by(items: Iterable[tuple[str, int]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for key, n in items:
        counts[key] = counts.get(key, 0) + n
    return counts


def render_report(report: AuditReport, *, wide: bool = False) -> str:
    """Summary lines and the per-call tables for people: within 120 characters a line, or
    every column with ``wide``."""
    s = report.summary
    lines = [
        f"audit report: {report.decision}",
        f"  destructive/protected executions: {s.executions}",
        f"  auditable: {s.auditable}  (consumed: {s.consumed}, not consumed: {s.not_consumed})",
        f"  audit gaps: {s.audit_gaps}",
    ]
    lines.extend(f"    {reason}: {count}" for reason, count in s.gaps_by_reason.items() if count)
    lines.append(f"  confirmed by the operator: {s.confirmations}")
    if s.operator_signed:
        lines.append(f"    signed by the operator's own passkey: {s.operator_signed}")
    if s.rejected_by_reason:
        lines.append("  evidence refused by a consumer:")
        lines.extend(f"    {reason}: {count}" for reason, count in s.rejected_by_reason.items())
    if report.grants or s.covered_by_grant:
        lines.append(
            f"  covered by a scoped grant (no dialog, each its own evidence): {s.covered_by_grant}"
            f" (grants: {len(report.grants)})"
        )
    lines.append(f"  declined by the operator (did not run): {s.declined}")
    if s.stopped:
        lines.append(
            f"  stopped by the operator (No, and stop the agent; did not run): {s.stopped}"
        )
    lines.append(f"  blocked by the guard (did not run): {s.blocked}")
    lines.extend(f"    {reason}: {count}" for reason, count in s.blocked_by_reason.items())
    if s.delivered_late:
        lines.append(f"  delivered late (after a sidecar restart): {s.delivered_late}")
    lines.append(f"  ran without asking because a user rule allowed it: {s.allowed_by_rule}")
    lines.extend(f"    {rule}: {count}" for rule, count in s.allowed_by_rule_id.items())
    if s.ran_unasked:
        lines.append(
            f"  ran without asking, every target restorable from the operator's baseline: "
            f"{s.ran_unasked}"
        )
        lines.extend(f"    {why}: {count}" for why, count in s.ran_unasked_by_reason.items())
    if s.effects_reviewed:
        lines.append(
            f"  effects review: {s.effects_reviewed} commands changed the workspace,"
            f" {s.effects_held} held work for the operator"
        )
        lines.extend(f"    {what}: {count}" for what, count in s.effects_by_outcome.items())
    if len(s.by_session) > 1 or (s.by_session and NO_SESSION not in s.by_session):
        covered = _count_by(
            (g.session or NO_SESSION, g.covered) for g in report.grants if g.covered
        )
        lines.append("  by pi session:")
        lines.extend(
            f"    {safe_cell(session)[:48]}: {c['executions']} risky ran ({c['gaps']} gaps),"
            f" {c['confirmed']} yes, {c['declined']} no, {c['blocked']} blocked,"
            + (f" {c['stopped']} stopped," if c.get("stopped") else "")
            + f" {c['allowedByRule']} by a user rule"
            + (f", {c['ranUnasked']} restorable unasked" if c.get("ranUnasked") else "")
            + (f", {covered[session]} by a grant" if session in covered else "")
            for session, c in s.by_session.items()
        )
    lines.extend(
        f"  also searched {x.kind} in {x.location}: {x.files} files,"
        f" {x.executions} destructive/protected executions, {x.gaps} added as gaps"
        + (f", {x.unreadable} unreadable (not counted)" if x.unreadable else "")
        for x in report.external
    )
    external = any(r.source is not None for r in report.rows)
    if wide:
        text = "\n".join(lines) + "\n\n" + _wide_tables(report, external)
    else:
        text = "\n".join(lines) + "\n\n" + _compact_tables(report, external)
    return text
