"""Each package's public surface, pinned (in the spirit of httpx's test_exported_members).

A name added to or dropped from an ``__all__`` must be added to or dropped from the list here
in the same change, so the public API never changes by accident. Every ``__all__`` is kept in
the order ruff's RUF022 keeps (isort style: CONSTANTS, then Classes, then functions), every
name in it resolves, and nothing public is left out of it. The faces of guard's wings (what
one wing offers the others; ``tests/test_layers.py`` holds every other wing to them) are
pinned the same way in ``WING_FACES``: sorted, exactly the list, every name resolving.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path
from types import ModuleType

import pytest

AUDIT = [
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

AUDIT_LOG = [
    "MAX_LINE_BYTES",
    "REDACTED",
    "AuditLog",
    "HeadSigner",
    "PublicKeys",
    "RecoveryResult",
    "recover_log",
    "redact_preview",
]

AUDIT_VERIFY = [
    "FAULT_KINDS",
    "GAP_REASONS",
    "SET_ASIDE_KIND",
    "AllowedRow",
    "AuditReport",
    "Classification",
    "ExternalSource",
    "FaultKind",
    "GapReason",
    "ProgressCallback",
    "ReportRow",
    "ReportSummary",
    "SetAside",
    "StoppedRow",
    "VerifyDecision",
    "VerifyResult",
    "build_report",
    "filter_records",
    "grant_of",
    "read_records",
    "render_records",
    "render_records_jsonl",
    "render_report",
    "render_table",
    "session_of",
    "set_aside_rows",
    "tty_progress",
    "verify_log",
]

AUDIT_WIRE = [
    "EVENT_MODELS",
    "GENESIS_DOMAIN",
    "HEAD_DOMAIN",
    "KNOWN_EVENTS",
    "LOG_SCHEMA",
    "MAX_INT_DIGITS",
    "MAX_JSON_BYTES",
    "MAX_OPERATOR_REASON_CHARS",
    "RESERVED_EVENTS",
    "WIRE_CONFIG",
    "ActionKind",
    "ApprovalRefusedData",
    "Approver",
    "AuditHead",
    "AuditRecord",
    "ConfirmationDeclinedData",
    "ConfirmationRecordedData",
    "ConfirmationRequestedData",
    "EffectsResolvedData",
    "EffectsReviewedData",
    "EventData",
    "EvidenceConsumedData",
    "EvidenceId",
    "EvidenceRejectedData",
    "GrantCreatedData",
    "GrantExpiredData",
    "GrantId",
    "GrantPatternData",
    "GrantRevokedData",
    "GrantUseRef",
    "GrantUsedData",
    "HeldEffectData",
    "IsoMillis",
    "KeyGeneratedData",
    "KeyId",
    "KeyRetiredData",
    "KeyRotatedData",
    "LogCreatedData",
    "LogRecoveredData",
    "NetworkRefusedData",
    "OperatorEnrolledData",
    "OperatorRemovedData",
    "Origin",
    "PlannerReportedData",
    "SessionEndedData",
    "SessionRef",
    "SessionStartedData",
    "Sha256",
    "Signature",
    "ToolExecutedData",
    "UnaskedTargetData",
    "b64url_decode",
    "b64url_encode",
    "canonical_json",
    "event_of",
    "format_iso",
    "genesis_hash",
    "load_json",
    "parse_iso",
    "sha256_hex",
    "sha256_prefixed",
    "utc_now",
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
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "TRUSTED_ORIGINS",
    "ConsumptionLedger",
    "DecisionStatement",
    "DsseCheck",
    "DsseEnvelope",
    "KeyStore",
    "OperatorDecision",
    "PublicKeyring",
    "Signer",
    "SqliteLedger",
    "check_and_consume",
    "compute_fingerprint",
    "dsse_from_log",
    "normalize_path",
    "normalize_tool_name",
    "payload_hash",
    "read_public_key",
    "sign_statement",
    "statement_for",
    "verify_dsse",
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
    "audit.log": AUDIT_LOG,
    "audit.tlog": AUDIT_TLOG,
    "audit.verify": AUDIT_VERIFY,
    "audit.wire": AUDIT_WIRE,
    "planning": PLANNING,
    "guard": GUARD,
    "guard.evidence": GUARD_EVIDENCE,
}


WING_FACES = {
    "guard._approvals": [
        "APPROVERS",
        "GONE",
        "OUTCOMES",
        "REPLY_TIMEOUT",
        "SOCKET_NAME",
        "Answer",
        "AnswerRequest",
        "ApprovalBroker",
        "ApprovalPage",
        "Approver",
        "Asked",
        "Decision",
        "Enrolment",
        "Listed",
        "Listener",
        "LocalApprovals",
        "Outcome",
        "Pending",
        "Signable",
        "ask_local",
        "ask_sidecar",
        "enrolled_port",
        "pending_in",
        "port_holder",
        "question_digest",
        "sidecar_about",
        "sidecar_dirs",
    ],
    "guard._cli": [
        "ExitCode",
        "build_parser",
        "main",
        "run",
    ],
    "guard._effects": [
        "LAYER_ID",
        "QUIET_RULES",
        "Baseline",
        "Effect",
        "EffectKind",
        "Hold",
        "HoldReason",
        "Review",
        "ReviewDecision",
        "Reviewer",
        "UnaskedReason",
        "UnaskedTarget",
        "apply_effects",
        "effects_digest",
        "judge",
        "read_effects",
        "recover",
        "size_text",
        "summary_line",
        "unasked",
    ],
    "guard._evidence": [
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
    ],
    "guard._facade": [
        "REPLAY_SKEW",
        "SESSION_COUNTS",
        "BlockReason",
        "CallParams",
        "Calls",
        "ClassifiedCall",
        "Consumption",
        "Core",
        "DeclineReason",
        "Effects",
        "Grants",
        "Guard",
        "Late",
        "LateDeclineReason",
        "Monitor",
        "OperatorReasonText",
        "Operators",
        "Outcomes",
        "Planners",
        "ReplayRejected",
        "ReplayReply",
        "Sessions",
        "Spool",
        "SpooledDecline",
        "SpooledEvent",
        "SpooledExecuted",
        "check_tool_call_id",
        "classify_call",
        "fingerprint_fields",
        "ledger_url",
        "logged_spool_ids",
        "open_ledger",
        "operator_reason_text",
        "plan_input",
        "preview_of",
    ],
    "guard._grants": [
        "COVERAGE_REASONS",
        "NEVER_GRANTED",
        "Breadth",
        "Coverage",
        "CoverageReason",
        "GrantDesk",
        "GrantLimits",
        "GrantOffer",
        "GrantPattern",
        "GrantRecord",
        "GrantState",
        "GrantStore",
        "covers",
        "inside",
        "offers",
    ],
    "guard._operator": [
        "ALGORITHMS",
        "OPERATOR_REASONS",
        "RP_NAME",
        "STATEMENT_FIELDS",
        "STATEMENT_SCHEMA",
        "CoseAlgorithm",
        "EnrolmentRefused",
        "OperatorCheck",
        "OperatorCredential",
        "OperatorReason",
        "OperatorSignature",
        "approval_statement",
        "check_operator_signature",
        "creation_options",
        "enrolled_credential",
        "statement_challenge",
    ],
    "guard._pi": [
        "InstallResult",
        "PlannerTool",
        "Target",
        "WarmServer",
        "check_warm",
        "diagnose",
        "guard_absent_rows",
        "newer_than_tested",
        "planner_tools",
        "session_envelopes",
        "warm_server",
    ],
    "guard._policy": [
        "CHECKS",
        "CONFIG_FILE_NAME",
        "PI_TOOLS",
        "PLANNER_TOOL_NAME",
        "TOO_WIDE_HINT",
        "Command",
        "ConfigProblem",
        "LayerName",
        "McpServers",
        "McpTrust",
        "Policy",
        "PolicyCache",
        "PolicyDescription",
        "Rule",
        "SandboxSettings",
        "Settings",
        "TelemetrySettings",
        "ToolFacts",
        "Verdict",
        "analyze",
        "check_config_file",
        "command_mentions",
        "credential_files",
        "describe_source",
        "git_config_names_programs",
        "git_config_values",
        "known_homes",
        "load_layers",
        "note_pi_runtime",
        "pi_file_target",
        "pi_pid",
        "pi_settings_resources",
        "placeholder_lists",
        "read_layer",
        "read_mcp_servers",
        "realpath",
        "remember_home",
        "serve_for",
        "too_wide",
        "within",
        "worktree_hook_files",
    ],
    "guard._sandbox": [
        "MountPath",
        "ProbeResult",
        "SandboxInput",
        "SandboxPlan",
        "SandboxState",
        "SpawnContext",
        "build_argv",
        "collect_input",
        "effective_settings",
        "explain_network",
        "explain_output",
        "filter_env",
        "find_bwrap",
        "plan",
        "probe",
        "shell_prefix",
        "shell_quote",
        "spawn",
        "workspace_stamp",
        "wrap_command",
    ],
    "guard._sidecar": [
        "serve",
    ],
    "guard._storage": [
        "SHIP_BATCH",
        "ConsumptionLedger",
        "InsertOutcome",
        "LogPosition",
        "PgLedger",
        "SqliteLedger",
        "SyncedLedger",
        "is_postgres_url",
        "load_source",
        "psycopg_missing",
        "redact_url",
        "ship_log",
    ],
    "guard._warm": [],
    "guard._telemetry": [
        "CALL_EVENTS",
        "SEMCONV_VERSION",
        "CallFolder",
        "CallSpan",
        "ExportConfig",
        "Telemetry",
        "TelemetryOff",
        "TelemetryStatus",
        "check_telemetry",
        "export_config",
        "off_status",
        "open_telemetry",
    ],
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
    # The faces are lazy: load every exported name first, whatever ran before in this process
    # (under xdist a worker may run this test before any other touched the face).
    for name in package.__all__:
        getattr(package, name)
    public = {
        name
        for name, value in vars(package).items()
        if not name.startswith("_") and not isinstance(value, ModuleType)
    }
    assert public == set(package.__all__)


def _type_only_homes(package: ModuleType) -> dict[str, str]:
    """What mypy sees: each name of the face's ``if typing.TYPE_CHECKING:`` imports, and its home."""
    homes: dict[str, str] = {}
    for node in ast.parse(inspect.getsource(package)).body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "typing.TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module is not None
                for alias in imp.names:
                    name = alias.asname or alias.name
                    homes[name] = (
                        imp.module if alias.asname is None else f"{imp.module}:{alias.name}"
                    )
    return homes


def _lazy_faces() -> list[str]:
    """Every face of ours (a package's ``__init__.py`` or a module) that imports its names on
    first use."""
    root = Path(__file__).resolve().parents[1]
    packages = [
        ".".join(init.parent.relative_to(root).parts)
        for top in ("audit", "guard", "planning")
        for init in (root / top).rglob("__init__.py")
        if "_HOMES" in init.read_text(encoding="utf-8")
    ]
    # audit's faces by audience are modules of their own (audit.log, audit.verify, audit.wire).
    modules = [
        f"audit.{face.stem}"
        for face in (root / "audit").glob("[!_]*.py")
        if "_HOMES" in face.read_text(encoding="utf-8")
    ]
    return sorted(packages + modules)


@pytest.mark.parametrize("name", _lazy_faces())
def test_a_lazy_face_imports_each_name_from_where_mypy_sees_it(name: str) -> None:
    # A lazy face (PEP 562) names each export's home twice: for mypy under TYPE_CHECKING and
    # for its ``__getattr__`` in ``_HOMES``; the two must agree, cover ``__all__``, resolve.
    package = importlib.import_module(name)
    assert _type_only_homes(package) == package._HOMES
    # Importing a submodule binds its name on the package, over a lazy name it shadows.
    here = Path(package.__file__).parent  # type: ignore[arg-type]
    submodules = {p.stem for p in here.glob("*.py")} | {
        p.parent.name for p in here.glob("*/__init__.py")
    }
    assert set(package.__all__).isdisjoint(submodules), "export such a name eagerly"
    assert set(package._HOMES) == set(package.__all__)
    for exported in package.__all__:
        assert getattr(package, exported) is not None, f"{name}.{exported}"


def test_the_public_faces_are_lazy() -> None:
    assert {"audit", "guard", "planning"} <= set(_lazy_faces())


@pytest.mark.parametrize("name", sorted(WING_FACES))
def test_a_wing_face_exports_exactly_its_pinned_sorted_names(name: str) -> None:
    face = importlib.import_module(name)
    expected = WING_FACES[name]
    assert list(face.__all__) == sorted(face.__all__, key=_isort_style)
    assert set(face.__all__) == set(expected), f"{name}: pin the change in WING_FACES"
    assert len(expected) == len(set(expected))
    for exported in face.__all__:
        assert getattr(face, exported) is not None, f"{name}.{exported}"


def test_every_wing_of_guard_has_a_pinned_face() -> None:
    root = Path(__file__).resolve().parents[1] / "guard"
    wings = {
        f"guard.{p.name}"
        for p in root.iterdir()
        if p.name.startswith("_") and (p / "__init__.py").is_file()
    }
    assert wings == set(WING_FACES)
