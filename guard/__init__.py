"""Top layer: operator confirmation evidence for the pi coding agent.

A "yes" from the operator becomes signed, short-lived, single-use evidence bound
to the exact action; every step is written to the tamper-evident audit log.
Evidence is report-only: every result says ``dispatchAllowed=false``,
``canOverrideMonitorBlock=false``, ``authorization="none"``.

These are the recipes (:class:`Guard`, :class:`Monitor`, the models and errors); the
primitives they are built from, safe only with the checks each leaves to its caller, are
in :mod:`guard.evidence`.

>>> from guard import Guard                                 # doctest: +SKIP
>>> with Guard.open("guard-home") as g:                # doctest: +SKIP
...     rec = g.record("bash", {"command": "rm -rf build"}, "/srv/project", confirmed=True)
...     g.consume(rec.envelope.model_dump(mode="json"), "bash",
...               {"command": "rm -rf build"}, "/srv/project").decision
'consumed'
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._errors import (
        BadInputError,
        ConfigError,
        GuardError,
        KeyFileError,
        KeyringError,
        LedgerError,
        PolicyBlockedError,
        TtlError,
    )
    from guard._evidence import (
        DEFAULT_TTL_SECONDS,
        EVIDENCE_CUSTOM_TYPE,
        EVIDENCE_SCHEMA,
        MAX_TTL_SECONDS,
        ConsumeResult,
        Evaluation,
        EvidenceDetails,
        EvidenceEnvelope,
        Fingerprint,
        Keyring,
        KeyringEntry,
        MatchResult,
        RecordResult,
    )
    from guard._facade import (
        DeclineReason,
        Guard,
        Monitor,
    )
    from guard._home import (
        default_home,
    )
    from guard._pi import (
        InstallResult,
        session_envelopes,
    )
    from guard._pi.install import (
        install,
    )
    from guard._policy import (
        ConfigProblem,
        Policy,
        Verdict,
    )
    from guard._sidecar import (
        serve,
    )

__all__ = [
    "DEFAULT_TTL_SECONDS",
    "EVIDENCE_CUSTOM_TYPE",
    "EVIDENCE_SCHEMA",
    "MAX_TTL_SECONDS",
    "BadInputError",
    "ConfigError",
    "ConfigProblem",
    "ConsumeResult",
    "DeclineReason",
    "Evaluation",
    "EvidenceDetails",
    "EvidenceEnvelope",
    "Fingerprint",
    "Guard",
    "GuardError",
    "InstallResult",
    "KeyFileError",
    "Keyring",
    "KeyringEntry",
    "KeyringError",
    "LedgerError",
    "MatchResult",
    "Monitor",
    "Policy",
    "PolicyBlockedError",
    "RecordResult",
    "TtlError",
    "Verdict",
    "default_home",
    "install",
    "serve",
    "session_envelopes",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "BadInputError": "guard._errors",
    "ConfigError": "guard._errors",
    "GuardError": "guard._errors",
    "KeyFileError": "guard._errors",
    "KeyringError": "guard._errors",
    "LedgerError": "guard._errors",
    "PolicyBlockedError": "guard._errors",
    "TtlError": "guard._errors",
    "Fingerprint": "guard._evidence",
    "Keyring": "guard._evidence",
    "KeyringEntry": "guard._evidence",
    "ConsumeResult": "guard._evidence",
    "DEFAULT_TTL_SECONDS": "guard._evidence",
    "EVIDENCE_CUSTOM_TYPE": "guard._evidence",
    "EVIDENCE_SCHEMA": "guard._evidence",
    "Evaluation": "guard._evidence",
    "EvidenceDetails": "guard._evidence",
    "EvidenceEnvelope": "guard._evidence",
    "MAX_TTL_SECONDS": "guard._evidence",
    "MatchResult": "guard._evidence",
    "RecordResult": "guard._evidence",
    "DeclineReason": "guard._facade",
    "Guard": "guard._facade",
    "default_home": "guard._home",
    "Monitor": "guard._facade",
    "InstallResult": "guard._pi",
    "install": "guard._pi.install",
    "ConfigProblem": "guard._policy",
    "Policy": "guard._policy",
    "Verdict": "guard._policy",
    "serve": "guard._sidecar",
    "session_envelopes": "guard._pi",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
