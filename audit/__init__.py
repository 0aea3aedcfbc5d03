"""The audit log's package: its one exception tree, and the faces by audience beside it.

Each audience has a face of its own, every one lazy (a name is imported on first use):

* :mod:`audit.log`, for writing: the appender :class:`~audit.log.AuditLog` (which takes the
  typed event models of :mod:`audit.wire`), the head's signer and trusted keys, recovery
  after a crash, preview redaction;
* :mod:`audit.verify`, for reading and verifying: ``verify_log`` against the signed head,
  ``read_records``, the report (``pi-guard audit report``) and ``show``;
* :mod:`audit.wire`, the pydantic shapes of the wire and the primitives every layer above
  shares: the record and head lines, each event's data model and registry, strict JSON,
  canonical JSON and SHA-256, timestamps, base64url, the wire config and shared wire types;
* :mod:`audit.tlog` (the transparency log over the records: Merkle trees, checkpoints,
  proofs, anchors) and :mod:`audit.lines` (reading the log's raw lines yourself).

This face keeps what all of them share: the exception tree and ``shorten`` (how its
messages quote a bad value). Imports nothing of ``guard`` or ``planning``. Nothing here
authorizes anything: the log and its report only record and classify what happened.
"""

import typing

from audit._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from audit._errors import (
        AuditError,
        CanonicalizationError,
        EventDataError,
        EventError,
        JsonInputError,
        LogClosedError,
        LogError,
        LogFormatError,
        LogIntegrityError,
        LogNotAFileError,
        LogNotFoundError,
        LogWriteError,
        NoteError,
        ProofError,
        RecordDataError,
        RecordTooLargeError,
        ReservedEventError,
        SignerError,
        UnknownEventError,
        UsageError,
        shorten,
    )

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

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "AuditError": "audit._errors",
    "CanonicalizationError": "audit._errors",
    "EventDataError": "audit._errors",
    "EventError": "audit._errors",
    "JsonInputError": "audit._errors",
    "LogClosedError": "audit._errors",
    "LogError": "audit._errors",
    "LogFormatError": "audit._errors",
    "LogIntegrityError": "audit._errors",
    "LogNotAFileError": "audit._errors",
    "LogNotFoundError": "audit._errors",
    "LogWriteError": "audit._errors",
    "NoteError": "audit._errors",
    "ProofError": "audit._errors",
    "RecordDataError": "audit._errors",
    "RecordTooLargeError": "audit._errors",
    "ReservedEventError": "audit._errors",
    "SignerError": "audit._errors",
    "UnknownEventError": "audit._errors",
    "UsageError": "audit._errors",
    "shorten": "audit._errors",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
