"""Reading the log's lines yourself: for readers that walk the file on their own terms.

Most callers want :func:`audit.verify.read_records` or :func:`audit.verify.verify_log`. A
reader that must stop at a byte offset, resume a chain, or walk backwards from the end (the
guard's ledger sync and recall, the central store's shipper) uses these instead, and then
owns what :func:`audit.verify.verify_log` would have checked for it:

* :func:`open_snapshot` gives a consistent ``(file, size, head bytes)`` under the appenders'
  lock; read no further than ``size``, and treat a final line without its LF as torn;
* :func:`check_line` checks one line (LF removed): its shape, canonical form and own hash,
  nothing about its neighbours; :class:`Chain` then follows ``seq`` and ``prev`` from the
  genesis record or from a known point; both raise :class:`LogLineError`;
* :func:`lines_backward` yields ``(offset, line)`` from the end; a line found this way is
  checked alone, not chained, so the caller trusts it only as far as the log verified;
* :func:`pread_exact` reads bytes at an offset of the snapshot (fewer only at its end).
"""

from audit._errors import LogLineError
from audit._records.chain import (
    Chain,
    head_path_for,
    lines_backward,
    open_snapshot,
    pread_exact,
)
from audit._records.chain import check_body as check_line

__all__ = [
    "Chain",
    "LogLineError",
    "check_line",
    "head_path_for",
    "lines_backward",
    "open_snapshot",
    "pread_exact",
]
