"""Each package's public surface, pinned (in the spirit of httpx's test_exported_members).

A name added to or dropped from an ``__all__`` must be added to or dropped from the list here
in the same change, so the public API never changes by accident. Every ``__all__`` is kept in
the order ruff's RUF022 keeps (isort style: CONSTANTS, then Classes, then functions), every
name in it resolves, and nothing public is left out of it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest

AUDIT = [
    "EVENT_MODELS",
    "FAULT_KINDS",
    "GAP_REASONS",
    "GENESIS_DOMAIN",
    "HEAD_DOMAIN",
    "KNOWN_EVENTS",
    "LOG_SCHEMA",
    "MAX_INT_DIGITS",
    "MAX_JSON_BYTES",
    "MAX_LINE_BYTES",
    "MAX_OPERATOR_REASON_CHARS",
    "REDACTED",
    "RESERVED_EVENTS",
    "SET_ASIDE_KIND",
    "WIRE_CONFIG",
    "ActionKind",
    "AllowedRow",
    "AuditError",
    "ApprovalRefusedData",
    "Approver",
    "AuditHead",
    "AuditLog",
    "AuditRecord",
    "AuditReport",
    "CanonicalizationError",
    "Classification",
    "ConfirmationDeclinedData",
    "ConfirmationRecordedData",
    "ConfirmationRequestedData",
    "EffectsResolvedData",
    "EffectsReviewedData",
    "EventDataError",
    "EventError",
    "EvidenceConsumedData",
    "EvidenceId",
    "EvidenceRejectedData",
    "ExternalSource",
    "FaultKind",
    "GapReason",
    "GrantCreatedData",
    "GrantExpiredData",
    "GrantId",
    "GrantPatternData",
    "GrantRevokedData",
    "GrantUseRef",
    "GrantUsedData",
    "HeadSigner",
    "HeldEffectData",
    "IsoMillis",
    "JsonInputError",
    "KeyGeneratedData",
    "KeyId",
    "KeyRetiredData",
    "KeyRotatedData",
    "LogClosedError",
    "LogCreatedData",
    "LogError",
    "LogFormatError",
    "LogIntegrityError",
    "LogNotAFileError",
    "LogNotFoundError",
    "LogRecoveredData",
    "NetworkRefusedData",
    "OperatorEnrolledData",
    "OperatorRemovedData",
    "LogWriteError",
    "NoteError",
    "Origin",
    "PlannerReportedData",
    "ProgressCallback",
    "ProofError",
    "PublicKeys",
    "RecordDataError",
    "RecordTooLargeError",
    "RecoveryResult",
    "ReportRow",
    "ReportSummary",
    "ReservedEventError",
    "SessionEndedData",
    "SessionRef",
    "SessionStartedData",
    "SetAside",
    "Sha256",
    "Signature",
    "SignerError",
    "StoppedRow",
    "ToolExecutedData",
    "UnknownEventError",
    "UsageError",
    "VerifyDecision",
    "VerifyResult",
    "b64url_decode",
    "b64url_encode",
    "build_report",
    "canonical_json",
    "filter_records",
    "format_iso",
    "genesis_hash",
    "load_json",
    "parse_iso",
    "read_records",
    "recover_log",
    "redact_preview",
    "grant_of",
    "render_records",
    "render_records_jsonl",
    "render_report",
    "render_table",
    "set_aside_rows",
    "session_of",
    "sha256_hex",
    "sha256_prefixed",
    "shorten",
    "tty_progress",
    "utc_now",
    "verify_log",
]

PLANNING = [
    "MAX_INPUT_BYTES",
    "PLANNERS",
    "ChannelDecision",
    "ChannelPlan",
    "ChannelPlanInput",
    "PlanInput",
    "PlanInputError",
    "PlanResult",
    "Planner",
    "PlanningError",
    "PreferredChannel",
    "RuntimeConsumptionDecision",
    "RuntimeConsumptionPlan",
    "RuntimeConsumptionPlanInput",
    "SignalSourceDecision",
    "SignalSourcePlan",
    "SignalSourcePlanInput",
    "parse_plan_input",
    "plan_channel",
    "plan_runtime_consumption",
    "plan_signal_source",
]

GUARD = [
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

GUARD_EVIDENCE = [
    "DEFAULT_SKEW",
    "TRUSTED_ORIGINS",
    "ConsumptionLedger",
    "KeyStore",
    "PublicKeyring",
    "Signer",
    "SqliteLedger",
    "check_and_consume",
    "compute_fingerprint",
    "normalize_path",
    "normalize_tool_name",
    "payload_hash",
]

AUDIT_LINES = [
    "Chain",
    "LogLineError",
    "check_line",
    "head_path_for",
    "lines_backward",
    "open_snapshot",
    "pread_exact",
]

AUDIT_TLOG = [
    "EMPTY_ROOT",
    "MAX_NOTE_BYTES",
    "ORIGIN_PREFIX",
    "PROOF_SCHEMA",
    "AnchorDir",
    "Anchored",
    "Checkpoint",
    "ConsistencyProof",
    "EntryCheck",
    "Frontier",
    "InclusionEntry",
    "InclusionProof",
    "NoteKey",
    "NoteSignature",
    "ProofCheck",
    "SignedCheckpoint",
    "TreeState",
    "consistency_proof",
    "inclusion_proof",
    "leaf_hash",
    "log_leaves",
    "node_hash",
    "open_checkpoint",
    "origin_for",
    "parse_checkpoint",
    "parse_vkeys",
    "prove_consistency",
    "prove_records",
    "read_tree_state",
    "records_about",
    "root_of",
    "sign_checkpoint",
    "verify_consistency",
    "verify_inclusion",
    "verify_proof",
]

EXPECTED = {
    "audit": AUDIT,
    "audit.lines": AUDIT_LINES,
    "audit.tlog": AUDIT_TLOG,
    "planning": PLANNING,
    "guard": GUARD,
    "guard.evidence": GUARD_EVIDENCE,
}


def _isort_style(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


@pytest.fixture(params=sorted(EXPECTED))
def package(request: pytest.FixtureRequest) -> ModuleType:
    return importlib.import_module(request.param)


def test_all_is_sorted_without_duplicates(package: ModuleType) -> None:
    exported = list(package.__all__)
    assert exported == sorted(exported, key=_isort_style)
    assert len(exported) == len(set(exported))


def test_all_is_exactly_the_expected_list(package: ModuleType) -> None:
    expected = EXPECTED[package.__name__]
    assert set(package.__all__) == set(expected)
    assert len(expected) == len(set(expected))


def test_every_exported_name_resolves(package: ModuleType) -> None:
    for name in package.__all__:
        assert hasattr(package, name), f"{package.__name__}.{name}"
        assert getattr(package, name) is not None, f"{package.__name__}.{name}"


def test_nothing_public_is_left_out_of_all(package: ModuleType) -> None:
    # A public sub-module (``audit.lines``, ``audit.tlog``) is a face of its own, pinned above, not a name.
    public = {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert public == set(package.__all__)
