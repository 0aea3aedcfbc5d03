"""The names of what can be wrong with a log: shared by the scanner, verify and the appender."""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["FAULT_KINDS", "FaultKind"]

FaultKind = Literal[
    "torn-line",
    "malformed-line",
    "hash-mismatch",
    "seq-mismatch",
    "prev-mismatch",
    "genesis-invalid",
    "records-missing-at-end",
    "records-after-head",
    "head-mismatch",
    "head-missing",
    "head-malformed",
    "head-unknown-key",
    "head-signature-invalid",
    "head-origin-mismatch",
    "root-mismatch",
    "rolled-back",
    "checkpoint-fork",
    "checkpoint-untrusted",
    "log-replaced",
]
FAULT_KINDS: tuple[str, ...] = get_args(FaultKind)
"""Every fault kind ``verify_log`` or :class:`audit.LogIntegrityError` can name."""
