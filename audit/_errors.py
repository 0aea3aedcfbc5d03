"""The audit package's exception tree: one base, leaves that carry the bad value.

::

    AuditError
    ├── CanonicalizationError      a value has no RFC 8785 form
    ├── JsonInputError             text the strict JSON loader refuses (``code``, ``problem``)
    ├── EventError                 append refused an event (nothing was written)
    │   ├── UnknownEventError
    │   ├── ReservedEventError
    │   ├── EventDataError
    │   └── RecordTooLargeError
    ├── SignerError                the head signer returned something unusable
    ├── LogError                   a problem with one log file (carries ``path``)
    │   ├── LogNotFoundError
    │   ├── LogNotAFileError       a directory, device or pipe named as a log
    │   ├── LogClosedError
    │   ├── LogWriteError
    │   ├── LogFormatError         a bad line while reading records (``line``, ``kind``)
    │   └── LogIntegrityError      the appender refuses to sign over a damaged log
    ├── LogLineError               one line failed a check (``audit.lines``, raw line readers)
    ├── RecordDataError            a record read back does not fit its event's model
    ├── NoteError                  a signed note / checkpoint refused (``code``, ``detail``)
    ├── ProofError                 an inclusion or consistency proof refused (``code``, ``detail``)
    └── UsageError                 a bad argument to a library function (filters, limits)

Messages never echo event data: a preview or a path may be sensitive. :func:`shorten`
(re-exported as ``audit.shorten``) makes the one-line rendering of a bad value.
"""

from __future__ import annotations

import math
import os
import re

__all__ = [
    "AuditError",
    "CanonicalizationError",
    "EventDataError",
    "EventError",
    "JsonInputError",
    "LogClosedError",
    "LogError",
    "LogFormatError",
    "LogIntegrityError",
    "LogNotAFileError",
    "LogNotFoundError",
    "LogWriteError",
    "NoteError",
    "ProofError",
    "RecordDataError",
    "RecordTooLargeError",
    "ReservedEventError",
    "SignerError",
    "UnknownEventError",
    "UsageError",
    "shorten",
]

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _render(value: object) -> str:
    try:
        return repr(value)
    except ValueError:  # an int past sys.get_int_max_str_digits() has no repr
        if isinstance(value, int):
            return f"<integer of about {math.ceil(value.bit_length() * math.log10(2))} digits>"
        return f"<{type(value).__name__} too large to show>"
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to show>"


def shorten(value: object, limit: int = 120) -> str:
    """One line of at most ``limit`` characters showing ``value`` (``repr`` unless a str).

    Control characters and line separators are escaped; a long value keeps both ends
    (``head…tail``), so the file name at the end of a long path survives. Never raises,
    not even for an integer too long for ``repr``.
    """
    text = value if isinstance(value, str) else _render(value)
    text = _UNPRINTABLE.sub(_escape, text)
    limit = max(limit, 8)
    if len(text) <= limit:
        return text
    head = limit // 3
    return text[:head] + "…" + text[len(text) - (limit - head - 1) :]


class AuditError(Exception):
    """Base of every error the audit package raises on purpose."""


class CanonicalizationError(AuditError):
    """A value has no RFC 8785 canonical form.

    ``code`` is a kebab-case reason; ``value`` is a short rendering of the bad value.
    """

    def __init__(self, code: str, value: object) -> None:
        self.code = code
        self.value = shorten(value, 200)
        super().__init__(f"cannot canonicalize ({code}): {self.value}")


class JsonInputError(AuditError):
    """JSON text that :func:`audit.wire.load_json` refuses; nothing was decoded.

    ``code`` is a kebab-case reason (``invalid-json``, ``not-utf8``, ``too-large``,
    ``duplicate-key``, ``non-finite-number``, ``number-too-long``, ``number-out-of-range``,
    ``too-deep``), ``problem`` says it in words, ``value`` is a short rendering of the
    offending piece (``None`` when there is nothing useful to show).
    """

    def __init__(self, code: str, problem: str, value: str | None = None) -> None:
        self.code = code
        self.problem = problem
        self.value = value
        shown = f" (got {value})" if value is not None else ""
        super().__init__(f"{problem}{shown}")


class EventError(AuditError):
    """:meth:`audit.log.AuditLog.append` refused an event; nothing was written."""

    def __init__(self, event: str, problem: str) -> None:
        self.event = shorten(event, 80)
        self.problem = problem
        super().__init__(f"audit event {self.event!r}: {problem}")


class UnknownEventError(EventError):
    """The event name is not in :data:`audit.wire.KNOWN_EVENTS`."""

    def __init__(self, event: object) -> None:
        super().__init__(str(event), "unknown event name")


class ReservedEventError(EventError):
    """``log.created`` and ``log.recovered`` are written by the log itself, never by callers."""

    def __init__(self, event: str) -> None:
        super().__init__(event, "reserved for the audit log itself")


class EventDataError(EventError):
    """The event data does not fit the event's model.

    ``errors`` lists ``"<field>: <problem>"`` strings; the offending values are not included.
    """

    def __init__(self, event: str, errors: list[str]) -> None:
        self.errors = errors
        super().__init__(event, "invalid data: " + "; ".join(errors))


class RecordTooLargeError(EventError):
    """The record's line would exceed the maximum line size."""

    def __init__(self, event: str, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(event, f"record is {size} bytes, the limit is {limit}")


class SignerError(AuditError):
    """The head signer gave an unusable key id or signature (``what`` names which)."""

    def __init__(self, what: str, value: object) -> None:
        self.what = what
        self.value = shorten(value)
        super().__init__(f"head signer returned a bad {what}: {self.value}")


class LogError(AuditError):
    """A problem with one log file; ``path`` names it."""

    def __init__(self, path: str | os.PathLike[str], problem: str) -> None:
        self.path = os.fspath(path)
        self.problem = problem
        super().__init__(f"{self.path}: {problem}")


class LogNotFoundError(LogError):
    """The log file does not exist."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, "audit log not found")


class LogNotAFileError(LogError):
    """The path names a directory, a device or a pipe, not a log file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, "not a regular file, so not an audit log")


class LogClosedError(LogError):
    """The :class:`audit.log.AuditLog` was closed."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, "audit log is closed")


class LogWriteError(LogError):
    """Reading, writing, syncing or locking the log or its head failed at the OS level."""


class LogFormatError(LogError):
    """A line that is not part of an intact chain, met while reading records.

    ``line`` is 1-based; ``kind`` is a fault kind (see :data:`audit.verify.FAULT_KINDS`).
    """

    def __init__(self, path: str | os.PathLike[str], line: int, kind: str, detail: str) -> None:
        self.line = line
        self.kind = kind
        self.detail = detail
        super().__init__(path, f"line {line}: {kind}: {detail}")


class LogIntegrityError(LogError):
    """The log and its signed head disagree in a way no crash can produce.

    The appender refuses to sign a new head over such a log, because that would
    hide the damage; run ``verify_log`` and keep the files for the auditor.
    ``kind`` is a fault kind (see :data:`audit.verify.FAULT_KINDS`).
    """

    def __init__(self, path: str | os.PathLike[str], kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(path, f"refusing to append ({kind}): {detail}")


class RecordDataError(AuditError):
    """A record's ``data`` does not fit its event's model (``seq`` and ``event`` name it).

    Only a record written by other software, or forged with a correct hash, can do this.
    """

    def __init__(self, seq: int, event: str) -> None:
        self.seq = seq
        self.event = shorten(event, 80)
        super().__init__(f"record {seq} ({self.event}): data does not fit the event's model")


class LogLineError(AuditError):
    """One log line failed a check; ``kind`` is a fault kind (:data:`FAULT_KINDS`), ``detail``
    says why.

    Raised by the raw line readers of :mod:`audit.lines` (``check_line``, ``Chain.accept``);
    this package's own readers turn it into :class:`LogFormatError` (with the path and line
    number) or a ``tampered`` verify result, and a caller of :mod:`audit.lines` into its own
    error about the log.
    """

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(f"{kind}: {detail}")


class NoteError(AuditError):
    """A signed note or checkpoint (C2SP ``signed-note`` / ``tlog-checkpoint``) was refused.

    ``code`` is a kebab-case reason (``note-malformed``, ``checkpoint-malformed``,
    ``origin-mismatch``, ``no-trusted-signature``, ``signature-invalid``, ``vkey-malformed``);
    ``detail`` says it in words and never echoes more than a short piece of the input.
    """

    def __init__(self, code: str, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail}")


class ProofError(AuditError):
    """An inclusion or consistency proof (RFC 9162 section 2.1.3, 2.1.4) does not verify.

    ``code`` is a kebab-case reason (``root-mismatch``, ``old-root-mismatch``,
    ``proof-too-long``, ``proof-too-short``, ``index-out-of-range``, ``size-out-of-range``,
    ``frontier-malformed``, ``proof-malformed``, ``leaf-mismatch``); ``detail`` says why.
    """

    def __init__(self, code: str, detail: str) -> None:
        self.code = code
        self.detail = detail
        super().__init__(f"{code}: {detail}")


class UsageError(AuditError):
    """A bad argument to a library function; ``what`` names it, ``value`` shows it."""

    def __init__(self, what: str, problem: str, value: object) -> None:
        self.what = what
        self.problem = problem
        self.value = shorten(value)
        super().__init__(f"{what}: {problem} (got {self.value})")
