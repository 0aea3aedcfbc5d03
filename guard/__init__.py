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
from guard._evidence.fingerprint import Fingerprint
from guard._evidence.keys import Keyring, KeyringEntry
from guard._evidence.models import (
    DEFAULT_TTL_SECONDS,
    EVIDENCE_CUSTOM_TYPE,
    EVIDENCE_SCHEMA,
    MAX_TTL_SECONDS,
    ConsumeResult,
    Evaluation,
    EvidenceDetails,
    EvidenceEnvelope,
    MatchResult,
    RecordResult,
)
from guard._guard import DeclineReason, Guard
from guard._home import default_home
from guard._monitor import Monitor
from guard._pi.install import InstallResult, install
from guard._policy import ConfigProblem, Policy, Verdict
from guard._sidecar.handlers.methods import serve, session_envelopes

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
