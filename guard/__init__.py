"""Top layer: operator confirmation evidence for the pi coding agent.

A "yes" from the operator becomes signed, short-lived, single-use evidence bound
to the exact action; every step is written to the tamper-evident audit log.
Evidence is report-only: every result says ``dispatchAllowed=false``,
``canOverrideMonitorBlock=false``, ``authorization="none"``.

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
from guard._evidence.consume import DEFAULT_SKEW, TRUSTED_ORIGINS, check_and_consume
from guard._evidence.fingerprint import (
    Fingerprint,
    compute_fingerprint,
    normalize_path,
    normalize_tool_name,
    payload_hash,
)
from guard._evidence.keys import Keyring, KeyringEntry, KeyStore, PublicKeyring, Signer
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
from guard._sidecar.methods import serve, session_envelopes
from guard._storage import ConsumptionLedger, SqliteLedger

__all__ = [
    "DEFAULT_SKEW",
    "DEFAULT_TTL_SECONDS",
    "EVIDENCE_CUSTOM_TYPE",
    "EVIDENCE_SCHEMA",
    "MAX_TTL_SECONDS",
    "TRUSTED_ORIGINS",
    "BadInputError",
    "ConfigError",
    "ConfigProblem",
    "ConsumeResult",
    "ConsumptionLedger",
    "DeclineReason",
    "Evaluation",
    "EvidenceDetails",
    "EvidenceEnvelope",
    "Fingerprint",
    "Guard",
    "GuardError",
    "InstallResult",
    "KeyFileError",
    "KeyStore",
    "Keyring",
    "KeyringEntry",
    "KeyringError",
    "LedgerError",
    "MatchResult",
    "Monitor",
    "Policy",
    "PolicyBlockedError",
    "PublicKeyring",
    "RecordResult",
    "Signer",
    "SqliteLedger",
    "TtlError",
    "Verdict",
    "check_and_consume",
    "compute_fingerprint",
    "default_home",
    "install",
    "normalize_path",
    "normalize_tool_name",
    "payload_hash",
    "serve",
    "session_envelopes",
]
