"""Reading and verifying the audit log: ``verify_log`` against the signed head (with its
fault kinds and progress), ``read_records`` (each record checked against the chain), the
report (``pi-guard audit report``: classification, rows, rendering), ``show`` (filtering
and printing records) and plain-text tables.
"""

import typing

from audit._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from audit._checking.verify import (
        FAULT_KINDS,
        FaultKind,
        ProgressCallback,
        VerifyDecision,
        VerifyResult,
        tty_progress,
        verify_log,
    )
    from audit._records.read import (
        read_records,
    )
    from audit._reporting.recovered import (
        SET_ASIDE_KIND,
        SetAside,
        set_aside_rows,
    )
    from audit._reporting.render import (
        render_report,
    )
    from audit._reporting.report import (
        build_report,
    )
    from audit._reporting.rows import (
        GAP_REASONS,
        AllowedRow,
        AuditReport,
        Classification,
        ExternalSource,
        GapReason,
        ReportRow,
        ReportSummary,
        StoppedRow,
    )
    from audit._reporting.show import (
        filter_records,
        grant_of,
        render_records,
        render_records_jsonl,
        session_of,
    )
    from audit._reporting.table import (
        render_table,
    )

__all__ = [
    "FAULT_KINDS",
    "GAP_REASONS",
    "SET_ASIDE_KIND",
    "AllowedRow",
    "AuditReport",
    "Classification",
    "ExternalSource",
    "FaultKind",
    "GapReason",
    "ProgressCallback",
    "ReportRow",
    "ReportSummary",
    "SetAside",
    "StoppedRow",
    "VerifyDecision",
    "VerifyResult",
    "build_report",
    "filter_records",
    "grant_of",
    "read_records",
    "render_records",
    "render_records_jsonl",
    "render_report",
    "render_table",
    "session_of",
    "set_aside_rows",
    "tty_progress",
    "verify_log",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "FAULT_KINDS": "audit._checking.verify",
    "FaultKind": "audit._checking.verify",
    "ProgressCallback": "audit._checking.verify",
    "VerifyDecision": "audit._checking.verify",
    "VerifyResult": "audit._checking.verify",
    "tty_progress": "audit._checking.verify",
    "verify_log": "audit._checking.verify",
    "read_records": "audit._records.read",
    "SET_ASIDE_KIND": "audit._reporting.recovered",
    "SetAside": "audit._reporting.recovered",
    "set_aside_rows": "audit._reporting.recovered",
    "render_report": "audit._reporting.render",
    "build_report": "audit._reporting.report",
    "GAP_REASONS": "audit._reporting.rows",
    "AllowedRow": "audit._reporting.rows",
    "AuditReport": "audit._reporting.rows",
    "Classification": "audit._reporting.rows",
    "ExternalSource": "audit._reporting.rows",
    "GapReason": "audit._reporting.rows",
    "ReportRow": "audit._reporting.rows",
    "ReportSummary": "audit._reporting.rows",
    "StoppedRow": "audit._reporting.rows",
    "filter_records": "audit._reporting.show",
    "grant_of": "audit._reporting.show",
    "render_records": "audit._reporting.show",
    "render_records_jsonl": "audit._reporting.show",
    "session_of": "audit._reporting.show",
    "render_table": "audit._reporting.table",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
