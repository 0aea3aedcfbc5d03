"""Writing the audit log: the appender, the signer of its head and the keys it trusts,
recovery after a crash, and the redaction every preview goes through before it is written.

:meth:`AuditLog.append` takes one typed event (a data model of :mod:`audit.wire`, which
knows its event name; the guard appends only these) or an event name and its data as a
camelCase mapping (the form a record's data has when read back); both are validated by the
event's model and written the same way.
"""

import typing

from audit._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from audit._redaction.redact import (
        REDACTED,
        redact_preview,
    )
    from audit._writing.log import (
        MAX_LINE_BYTES,
        AuditLog,
    )
    from audit._writing.recover import (
        RecoveryResult,
        recover_log,
    )
    from audit._writing.signing import (
        HeadSigner,
        PublicKeys,
    )

__all__ = [
    "MAX_LINE_BYTES",
    "REDACTED",
    "AuditLog",
    "HeadSigner",
    "PublicKeys",
    "RecoveryResult",
    "recover_log",
    "redact_preview",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "REDACTED": "audit._redaction.redact",
    "redact_preview": "audit._redaction.redact",
    "MAX_LINE_BYTES": "audit._writing.log",
    "AuditLog": "audit._writing.log",
    "RecoveryResult": "audit._writing.recover",
    "recover_log": "audit._writing.recover",
    "HeadSigner": "audit._writing.signing",
    "PublicKeys": "audit._writing.signing",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
