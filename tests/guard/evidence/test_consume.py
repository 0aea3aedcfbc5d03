"""The consumer's seven checks, each failing in isolation.

See docs/monitor.md, "The consumer's checks and reason codes".
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from freezegun import freeze_time
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from audit.wire import b64url_encode
from guard import ConsumeResult, Fingerprint
from guard._evidence.envelope import mint_envelope, signing_message
from guard.evidence import KeyStore, SqliteLedger, check_and_consume, compute_fingerprint
from tests.guard.conftest import Keys

T0 = datetime(2026, 11, 22, 1, 0, 0, tzinfo=UTC)
CALL = {"command": "rm -rf build"}


def fp(project: Path, tool_input: dict[str, Any] | None = None) -> Fingerprint:
    return compute_fingerprint("destructive", "bash", tool_input or CALL, project)


def mint(keys: Keys, project: Path, ttl: int = 30, at: datetime = T0) -> dict[str, Any]:
    env = mint_envelope(
        keys.signer,
        fp(project),
        origin="runtime-ui-confirm",
        ttl_seconds=ttl,
        now=at,
        tool_call_id="call_1",
    )
    return env.model_dump(mode="json", exclude_none=True)


def check(
    keys: Keys,
    ledger: SqliteLedger,
    raw: Any,
    pending: Fingerprint | None,
    now: datetime = T0,
    **options: Any,
) -> ConsumeResult:
    """The consumer's check of the pending call ``call_1`` (unless ``options`` say otherwise)."""
    call: dict[str, Any] = {"tool_call_id": "call_1", **options}
    return check_and_consume(raw, pending, keyring=keys.keyring(), ledger=ledger, now=now, **call)


def resign(keys: Keys, env: dict[str, Any]) -> dict[str, Any]:
    details = {k: v for k, v in env["details"].items() if k != "signature"}
    details["signature"] = b64url_encode(keys.signer.sign(signing_message(details)))
    return {**env, "details": details}


def test_fresh_envelope_is_consumed_once(keys: Keys, ledger: SqliteLedger, project: Path) -> None:
    env = mint(keys, project)
    first = check(keys, ledger, env, fp(project))
    assert (first.decision, first.match.decision) == ("consumed", "match")
    again = check(keys, ledger, env, fp(project))
    assert (again.decision, again.match.decision, again.reasons) == (
        "rejected",
        "consumed",
        ("replay",),
    )
    for result in (first, again):
        dumped = result.model_dump(mode="json")
        assert dumped["dispatchAllowed"] is False
        assert dumped["canOverrideMonitorBlock"] is False
        assert dumped["authorization"] == "none"


def test_accepts_json_text_and_bytes(keys: Keys, ledger: SqliteLedger, project: Path) -> None:
    text = json.dumps(mint(keys, project))
    assert check(keys, ledger, text, fp(project)).decision == "consumed"
    assert (
        check(keys, ledger, json.dumps(mint(keys, project)).encode(), fp(project)).decision
        == "consumed"
    )


@pytest.mark.parametrize("raw", [None, "", b"", {}])
def test_missing(keys: Keys, ledger: SqliteLedger, project: Path, raw: Any) -> None:
    assert check(keys, ledger, raw, fp(project)).match.decision == "missing"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("{", "invalid-json"),
        ("[1]", "not-an-object"),
        (b"\xff\xfe", "not-utf8"),
        ('{"a": 1, "a": 2}', "duplicate-key"),
        ('{"a": NaN}', "non-finite-number"),
        ('{"customType": "other"}', "wrong-custom-type"),
        ("x" * 20000, "too-large"),
        ("[" * 5000 + "]" * 5000, "too-deep"),
    ],
)
def test_malformed_text(
    keys: Keys, ledger: SqliteLedger, project: Path, raw: Any, code: str
) -> None:
    result = check(keys, ledger, raw, fp(project))
    assert (result.match.decision, result.reasons) == ("malformed", (code,))


def test_deep_nesting_in_a_mapping_is_malformed_not_a_crash(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    nested: Any = {}
    for _ in range(200):
        nested = {"x": nested}
    result = check(
        keys,
        ledger,
        {"customType": "operator-confirmation-evidence", "details": nested},
        fp(project),
    )
    assert (result.match.decision, result.reasons) == ("malformed", ("not-canonicalizable",))


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("extra", 1),
        ("dispatchAllowed", True),
        ("canOverrideMonitorBlock", True),
        ("authorization", "granted"),
        ("trusted", False),
        ("schema", "pi-operator-guard/evidence/v2"),
        ("actionKind", "local-safe"),
        ("evidenceId", "oce_short"),
        ("payloadHash", "sha256:XYZ"),
        ("toolName", "x" * 300),
        ("createdAtIso", "2026-11-22T01:00:00Z"),
        ("signature", "A" * 87),
    ],
)
def test_structural_violations_are_malformed(
    keys: Keys, ledger: SqliteLedger, project: Path, field: str, value: Any
) -> None:
    env = mint(keys, project)
    env["details"][field] = value
    result = check(keys, ledger, env, fp(project))
    assert result.match.decision == "malformed", result
    assert result.decision == "rejected"


def test_unknown_key_is_untrusted(
    keys: Keys, ledger: SqliteLedger, project: Path, tmp_path: Path
) -> None:
    stranger = KeyStore.open(tmp_path / "stranger")
    signer, _ = stranger.ensure_key()
    env = mint(Keys(stranger, signer), project)
    result = check(keys, ledger, env, fp(project))
    assert (result.match.decision, result.reasons) == ("untrusted", ("unknown-key",))


def test_bad_signature(keys: Keys, ledger: SqliteLedger, project: Path) -> None:
    env = mint(keys, project)
    env["details"]["payloadHash"] = "sha256:" + "0" * 64
    result = check(keys, ledger, env, compute_fingerprint("destructive", "bash", CALL, project))
    assert (result.match.decision, result.reasons) == ("untrusted", ("signature-invalid",))


def test_non_canonical_signature_encoding_is_rejected(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project)
    sig = env["details"]["signature"]
    # The last base64url character of a 64-byte value carries 4 unused bits; set one.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    bumped = alphabet[alphabet.index(sig[-1]) ^ 1]
    env["details"]["signature"] = sig[:-1] + bumped
    result = check(keys, ledger, env, fp(project))
    assert result.reasons == ("signature-invalid",)


def test_explicit_null_changes_the_signed_bytes(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project)
    assert "path" not in env["details"]
    env["details"]["path"] = None
    assert check(keys, ledger, env, fp(project)).reasons == ("signature-invalid",)


# -- time (freezegun) ---------------------------------------------------------


def test_ttl_boundaries(keys: Keys, ledger: SqliteLedger, project: Path) -> None:
    env = mint(keys, project, ttl=30)
    expires = T0 + timedelta(seconds=30)
    with freeze_time(expires - timedelta(milliseconds=1)):
        assert (
            check(keys, ledger, copy.deepcopy(env), fp(project), now=datetime.now(UTC)).decision
            == "consumed"
        )
    env2 = mint(keys, project, ttl=30)
    with freeze_time(expires):
        late = check(keys, ledger, env2, fp(project), now=datetime.now(UTC))
    assert (late.match.decision, late.reasons) == ("expired", ("expired",))


def test_clock_skew_on_created(keys: Keys, ledger: SqliteLedger, project: Path) -> None:
    env = mint(keys, project, ttl=60)
    early_ok = check(keys, ledger, env, fp(project), now=T0 - timedelta(seconds=5))
    assert early_ok.decision == "consumed"
    env2 = mint(keys, project, ttl=60)
    too_early = check(
        keys, ledger, env2, fp(project), now=T0 - timedelta(seconds=5, milliseconds=1)
    )
    assert (too_early.match.decision, too_early.reasons) == (
        "not-yet-valid",
        ("created-in-future",),
    )


def test_lifetime_over_max_ttl_is_rejected_even_if_signed(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    env = mint(keys, project, ttl=600)
    assert (
        check(keys, ledger, env, fp(project), now=T0 + timedelta(seconds=599)).decision
        == "consumed"
    )
    env = mint(keys, project, ttl=30)
    env["details"]["expiresAtIso"] = "2026-11-22T01:10:00.001Z"  # 600.001 s
    result = check(keys, ledger, resign(keys, env), fp(project))
    assert (result.match.decision, result.reasons) == ("expired", ("ttl-out-of-range",))


# -- exact match ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("pending", "reason"),
    [
        (lambda p: compute_fingerprint("protected", "bash", CALL, p), "action-kind-mismatch"),
        (lambda p: compute_fingerprint("destructive", "shell", CALL, p), "tool-name-mismatch"),
        (lambda p: compute_fingerprint("destructive", "bash", CALL, p, path="/x"), "path-mismatch"),
        (lambda p: compute_fingerprint("destructive", "bash", CALL, p / "sub"), "scope-mismatch"),
        (
            lambda p: compute_fingerprint("destructive", "bash", {"command": "rm -rf src"}, p),
            "payload-hash-mismatch",
        ),
    ],
)
def test_each_fingerprint_field_mismatch(
    keys: Keys, ledger: SqliteLedger, project: Path, pending: Any, reason: str
) -> None:
    result = check(keys, ledger, mint(keys, project), pending(project))
    assert (result.match.decision, result.reasons) == ("mismatch", (reason,))
    # A mismatch consumes nothing: the right call can still use it.
    assert check(keys, ledger, mint(keys, project), fp(project)).decision == "consumed"


def test_mismatch_does_not_consume(keys: Keys, ledger: SqliteLedger, project: Path) -> None:
    env = mint(keys, project)
    assert check(keys, ledger, env, fp(project, {"command": "ls"})).match.decision == "mismatch"
    assert check(keys, ledger, env, fp(project)).decision == "consumed"


def test_local_safe_pending_call_never_matches(
    keys: Keys, ledger: SqliteLedger, project: Path
) -> None:
    result = check(keys, ledger, mint(keys, project), None)
    assert (result.match.decision, result.reasons) == ("mismatch", ("action-kind-mismatch",))


# -- properties (hypothesis) ------------------------------------------------------

_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

DETAIL_FIELDS = [
    "schema",
    "evidenceId",
    "origin",
    "trusted",
    "actionKind",
    "toolName",
    "scope",
    "payloadHash",
    "toolCallId",
    "createdAtIso",
    "expiresAtIso",
    "dispatchAllowed",
    "canOverrideMonitorBlock",
    "authorization",
    "keyId",
    "signature",
]
json_values = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**53) + 1, 2**53 - 1), st.text(max_size=40)
)


@_SETTINGS
@given(field=st.sampled_from(DETAIL_FIELDS), value=json_values)
def test_changing_any_single_field_rejects(
    keys: Keys, ledger: SqliteLedger, project: Path, field: str, value: Any
) -> None:
    env = mint(keys, project)
    assume(env["details"][field] != value)
    env["details"][field] = value
    result = check(keys, ledger, env, fp(project))
    assert result.decision == "rejected"
    assert result.match.decision in {"malformed", "untrusted"}


@_SETTINGS
@given(position=st.integers(0, 85), char=st.sampled_from("AQgw-_09"))
def test_changing_the_signature_rejects(
    keys: Keys, ledger: SqliteLedger, project: Path, position: int, char: str
) -> None:
    env = mint(keys, project)
    sig = env["details"]["signature"]
    assume(sig[position] != char)
    env["details"]["signature"] = sig[:position] + char + sig[position + 1 :]
    assert check(keys, ledger, env, fp(project)).reasons == ("signature-invalid",)


@_SETTINGS
@given(
    which=st.sampled_from(["tool", "input", "cwd"]),
    text=st.text(min_size=1, max_size=30).filter(lambda s: "\x00" not in s),
)
def test_changing_any_fingerprint_input_mismatches(
    keys: Keys, ledger: SqliteLedger, project: Path, which: str, text: str
) -> None:
    env = mint(keys, project)
    if which == "tool":
        import unicodedata

        name = unicodedata.normalize("NFC", text)
        assume(name != "bash" and not any(unicodedata.category(c) == "Cc" for c in name))
        pending = compute_fingerprint("destructive", name, CALL, project)
        want = "tool-name-mismatch"
    elif which == "input":
        assume(text != CALL["command"])
        pending = compute_fingerprint("destructive", "bash", {"command": text}, project)
        want = "payload-hash-mismatch"
    else:
        pending = compute_fingerprint(
            "destructive",
            "bash",
            CALL,
            project / "x" / text.replace("/", "_").replace("\\", "_").replace(".", "d"),
        )
        want = "scope-mismatch"
    result = check(keys, ledger, env, pending)
    assert (result.match.decision, result.reasons) == ("mismatch", (want,))


@pytest.mark.parametrize(
    ("options", "reasons"),
    [
        ({"tool_call_id": None}, ("call-id-required",)),
        ({"tool_call_id": None, "call_checked_elsewhere": False}, ("call-id-required",)),
        ({"tool_call_id": "call_2"}, ("tool-call-id-mismatch",)),
        ({"tool_call_id": "call_2", "call_checked_elsewhere": True}, ("tool-call-id-mismatch",)),
        ({"tool_call_id": None, "call_checked_elsewhere": True}, ()),
        ({}, ()),
    ],
)
def test_the_call_id_is_required_unless_the_consumer_opts_out(
    keys: Keys,
    ledger: SqliteLedger,
    project: Path,
    options: dict[str, Any],
    reasons: tuple[str, ...],
) -> None:
    env = mint(keys, project)
    result = check(keys, ledger, env, fp(project), **options)
    assert result.reasons == reasons
    # A refusal spends nothing: the consumer that names the call still consumes it.
    after = check(keys, ledger, env, fp(project))
    assert after.decision == ("consumed" if reasons else "rejected")
