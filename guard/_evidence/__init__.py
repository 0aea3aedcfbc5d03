"""The evidence core: fingerprint, keys, envelope, the consumer's check and the ledger.

``models`` holds the wire shapes, ``fingerprint`` binds an action, ``keys`` signs and
verifies, ``envelope`` mints and parses evidence, ``consume`` runs the seven checks and
``single_use`` is the one consume path (the ledger synced from the audit log first).

This face is what the other wings use; :mod:`guard` re-exports the public shapes and
:mod:`guard.evidence` is the face for a careful integrator. The primitives among the
names below are safe only after the checks each leaves to its caller (guard.evidence's
docstring says them in full): :func:`compute_fingerprint` and :func:`payload_hash` only
for a call classified with the policy in force and its input exactly as it will run;
:class:`KeyStore` and :class:`Signer` hold the signing key and stay in the guard home;
:func:`mint_envelope` only after the operator's yes, with the ``confirmation.recorded``
record durable before the evidence leaves the process; :func:`consume_synced` only with
``pending`` recomputed from the call about to run; :func:`sign_statement` only for a
statement built from a verified log (:func:`dsse_from_log` verifies it first). Everything
else here (the models, :class:`Fingerprint`, :class:`PublicKeyring`, the normalizers,
:func:`reserve`, which signs nothing, the doctor's :func:`check_key`, the DSSE shapes,
:func:`verify_dsse` and :func:`read_public_key`) is safe to use anywhere above this floor.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._evidence.anchors import (
        anchor_checkpoint,
        anchor_dir,
        check_audit,
        latest_anchor,
        log_origin,
    )
    from guard._evidence.consume import (
        DEFAULT_SKEW,
    )
    from guard._evidence.doctor import (
        check_key,
    )
    from guard._evidence.dsse import (
        PAYLOAD_TYPE,
        DsseCheck,
        DsseEnvelope,
        dsse_from_log,
        read_public_key,
        sign_statement,
        verify_dsse,
    )
    from guard._evidence.envelope import (
        Reservation,
        mint_envelope,
        reserve,
    )
    from guard._evidence.fingerprint import (
        Fingerprint,
        compute_fingerprint,
        normalize_path,
        normalize_tool_name,
        payload_hash,
    )
    from guard._evidence.keys import (
        KEYRING_FILE,
        Keyring,
        KeyringEntry,
        KeyStore,
        PublicKeyring,
        Signer,
    )
    from guard._evidence.models import (
        DEFAULT_TTL_SECONDS,
        EVIDENCE_CUSTOM_TYPE,
        EVIDENCE_SCHEMA,
        MAX_TTL_SECONDS,
        ConsumeResult,
        CoveredBy,
        Evaluation,
        EvidenceDetails,
        EvidenceEnvelope,
        MatchResult,
        RecordResult,
        ReportOnly,
    )
    from guard._evidence.single_use import (
        consume_synced,
    )
    from guard._evidence.statement import (
        PREDICATE_TYPE,
        STATEMENT_TYPE,
        DecisionStatement,
        OperatorDecision,
        statement_for,
    )

__all__ = [
    "DEFAULT_SKEW",
    "DEFAULT_TTL_SECONDS",
    "EVIDENCE_CUSTOM_TYPE",
    "EVIDENCE_SCHEMA",
    "KEYRING_FILE",
    "MAX_TTL_SECONDS",
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "ConsumeResult",
    "CoveredBy",
    "DecisionStatement",
    "DsseCheck",
    "DsseEnvelope",
    "Evaluation",
    "EvidenceDetails",
    "EvidenceEnvelope",
    "Fingerprint",
    "KeyStore",
    "Keyring",
    "KeyringEntry",
    "MatchResult",
    "OperatorDecision",
    "PublicKeyring",
    "RecordResult",
    "ReportOnly",
    "Reservation",
    "Signer",
    "anchor_checkpoint",
    "anchor_dir",
    "check_audit",
    "check_key",
    "compute_fingerprint",
    "consume_synced",
    "dsse_from_log",
    "latest_anchor",
    "log_origin",
    "mint_envelope",
    "normalize_path",
    "normalize_tool_name",
    "payload_hash",
    "read_public_key",
    "reserve",
    "sign_statement",
    "statement_for",
    "verify_dsse",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "anchor_checkpoint": "guard._evidence.anchors",
    "anchor_dir": "guard._evidence.anchors",
    "check_audit": "guard._evidence.anchors",
    "latest_anchor": "guard._evidence.anchors",
    "log_origin": "guard._evidence.anchors",
    "DEFAULT_SKEW": "guard._evidence.consume",
    "check_key": "guard._evidence.doctor",
    "DsseCheck": "guard._evidence.dsse",
    "DsseEnvelope": "guard._evidence.dsse",
    "PAYLOAD_TYPE": "guard._evidence.dsse",
    "dsse_from_log": "guard._evidence.dsse",
    "read_public_key": "guard._evidence.dsse",
    "sign_statement": "guard._evidence.dsse",
    "verify_dsse": "guard._evidence.dsse",
    "Reservation": "guard._evidence.envelope",
    "mint_envelope": "guard._evidence.envelope",
    "reserve": "guard._evidence.envelope",
    "Fingerprint": "guard._evidence.fingerprint",
    "compute_fingerprint": "guard._evidence.fingerprint",
    "normalize_path": "guard._evidence.fingerprint",
    "normalize_tool_name": "guard._evidence.fingerprint",
    "payload_hash": "guard._evidence.fingerprint",
    "KEYRING_FILE": "guard._evidence.keys",
    "KeyStore": "guard._evidence.keys",
    "Keyring": "guard._evidence.keys",
    "KeyringEntry": "guard._evidence.keys",
    "PublicKeyring": "guard._evidence.keys",
    "Signer": "guard._evidence.keys",
    "ConsumeResult": "guard._evidence.models",
    "CoveredBy": "guard._evidence.models",
    "DEFAULT_TTL_SECONDS": "guard._evidence.models",
    "EVIDENCE_CUSTOM_TYPE": "guard._evidence.models",
    "EVIDENCE_SCHEMA": "guard._evidence.models",
    "Evaluation": "guard._evidence.models",
    "EvidenceDetails": "guard._evidence.models",
    "EvidenceEnvelope": "guard._evidence.models",
    "MAX_TTL_SECONDS": "guard._evidence.models",
    "MatchResult": "guard._evidence.models",
    "RecordResult": "guard._evidence.models",
    "ReportOnly": "guard._evidence.models",
    "consume_synced": "guard._evidence.single_use",
    "DecisionStatement": "guard._evidence.statement",
    "OperatorDecision": "guard._evidence.statement",
    "PREDICATE_TYPE": "guard._evidence.statement",
    "STATEMENT_TYPE": "guard._evidence.statement",
    "statement_for": "guard._evidence.statement",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
