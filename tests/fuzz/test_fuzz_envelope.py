"""Fuzzing the monitor consumer: arbitrary JSON, arbitrary bytes, mutated and forged envelopes.

Two properties, on every input:

* ``check_and_consume`` returns a typed, report-only result (or raises one of our own
  errors); nothing else escapes;
* it never returns ``consumed`` unless the envelope's signed ``details`` are exactly what
  a keyring key signed (only the human ``content`` line is outside the signature).
"""

from __future__ import annotations

import base64
import json
from datetime import datetime
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from audit import AuditError
from audit.wire import canonical_json
from guard import ConsumeResult, GuardError
from guard._evidence.envelope import parse_envelope
from guard.evidence import KeyStore, Signer
from tests.fuzz.conftest import World

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

DETAIL_KEYS = (
    "schema",
    "evidenceId",
    "origin",
    "trusted",
    "actionKind",
    "toolName",
    "path",
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
)
TOP_KEYS = ("customType", "content", "display", "details")

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=16,
)
b64url_sig = st.binary(min_size=64, max_size=64).map(
    lambda raw: base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
)
plausible = st.one_of(
    json_values,
    b64url_sig,
    st.sampled_from(
        [
            "pi-operator-guard/evidence/v1",
            "runtime-ui-confirm",
            "operator-contract-review",
            "destructive",
            "protected",
            "local-safe",
            "bash",
            "none",
            "2026-11-22T01:00:00.000Z",
            "2099-01-01T00:00:00.000Z",
            "2000-01-01T00:00:00.000Z",
            "ed25519:" + "0" * 64,
            "sha256:" + "0" * 64,
            "oce_AAAAAAAAAAAAAAAAAAAAAA",
            True,
            False,
            None,
            "",
        ]
    ),
)

iso = st.datetimes(
    min_value=datetime(2000, 1, 1),
    max_value=datetime(2100, 1, 1),
).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z")
hex64 = st.text("0123456789abcdef", min_size=64, max_size=64)
url_safe = st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1)
# Values that pass the schema for each field, so the signature check is what must refuse them.
VALID = {
    "evidenceId": url_safe.filter(lambda t: 22 <= len(t) <= 64).map(lambda t: "oce_" + t)
    | st.builds(lambda n: "oce_" + "A" * n, st.integers(22, 64)),
    "origin": st.sampled_from(["runtime-ui-confirm", "operator-contract-review"]),
    "actionKind": st.sampled_from(["destructive", "protected"]),
    "toolName": st.text(min_size=1, max_size=20),
    "path": st.none() | st.text(min_size=1, max_size=40),
    "scope": st.none() | st.text(min_size=1, max_size=40),
    "payloadHash": hex64.map(lambda h: "sha256:" + h),
    "toolCallId": st.text(min_size=1, max_size=20),
    "createdAtIso": iso,
    "expiresAtIso": iso,
    "keyId": hex64.map(lambda h: "ed25519:" + h),
    "signature": b64url_sig,
}


def check(world: World, raw: Any, *, stats: bool = True) -> ConsumeResult | None:
    """Consume ``raw``; our own errors are an acceptable answer, anything else fails."""
    try:
        result = world.consume(raw)
    except (GuardError, AuditError):
        return None
    dumped = result.model_dump(mode="json")
    assert dumped["dispatchAllowed"] is False
    assert dumped["canOverrideMonitorBlock"] is False
    assert dumped["authorization"] == "none"
    if stats:
        event(f"{result.match.decision}: {','.join(result.reasons)}")
    if result.decision == "rejected":
        assert result.match.decision != "match"
        assert result.reasons
        assert all(r and r == r.lower() and " " not in r for r in result.reasons)
    return result


@SETTINGS
@given(value=json_values)
def test_arbitrary_json_is_never_consumed(world: World, value: Any) -> None:
    for raw in (value, json.dumps(value), json.dumps(value).encode()):
        result = check(world, raw)
        assert result is None or result.decision == "rejected"


@SETTINGS
@given(data=st.binary(max_size=2048) | st.text(max_size=512).map(str.encode))
def test_arbitrary_bytes_are_never_consumed(world: World, data: bytes) -> None:
    result = check(world, data)
    assert result is None or result.decision == "rejected"


@st.composite
def mutations(draw: st.DrawFn) -> list[tuple[str, str, Any]]:
    ops: list[tuple[str, str, Any]] = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        kind = draw(
            st.sampled_from(
                ["valid-set"] * 4
                + ["set", "delete", "add", "top-set", "top-delete", "edit", "edit"]
            )
        )
        if kind == "valid-set":
            key = draw(st.sampled_from(sorted(VALID)))
            ops.append(("set", key, draw(VALID[key])))
            continue
        if kind in ("set", "delete", "edit"):
            key = draw(st.sampled_from(DETAIL_KEYS))
        elif kind in ("top-set", "top-delete"):
            key = draw(st.sampled_from(TOP_KEYS))
        else:
            key = draw(st.text(min_size=1, max_size=12))
        value = (
            draw(plausible)
            if kind != "edit"
            else draw(st.tuples(st.integers(0, 200), st.text(max_size=2)))
        )
        ops.append((kind, key, value))
    return ops


def apply(envelope: dict[str, Any], ops: list[tuple[str, str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(envelope))
    for kind, key, value in ops:
        details = out.get("details")
        if kind in ("set", "add") and isinstance(details, dict):
            details[key] = value
        elif kind == "delete" and isinstance(details, dict):
            details.pop(key, None)
        elif kind == "top-set":
            out[key] = value
        elif kind == "top-delete":
            out.pop(key, None)
        elif kind == "edit" and isinstance(details, dict) and isinstance(details.get(key), str):
            index, text = value
            old = details[key]
            index = min(index, len(old))
            details[key] = old[:index] + text + old[index + 1 :]
    return out


def signed_details_unchanged(raw: Any, original: dict[str, Any]) -> bool:
    _, details = parse_envelope(raw)
    return canonical_json(details) == canonical_json(original["details"])


@SETTINGS
@given(
    ops=mutations(),
    form=st.sampled_from(["object", "text", "bytes"]),
    byte_edit=st.one_of(
        st.none(),
        st.none(),
        st.none(),
        st.tuples(st.integers(0, 4000), st.binary(max_size=3), st.integers(0, 3)),
    ),
)
def test_mutated_envelopes_are_consumed_only_with_their_signed_details_intact(
    world: World,
    ops: list[tuple[str, str, Any]],
    form: str,
    byte_edit: tuple[int, bytes, int] | None,
) -> None:
    original = world.mint()
    mutated = apply(original, ops)
    raw: Any = mutated
    if form != "object" or byte_edit is not None:
        try:
            data = json.dumps(mutated, ensure_ascii=False).encode("utf-8", "surrogatepass")
        except ValueError:
            data = b"{}"
        if byte_edit is not None:
            index, insert, drop = byte_edit
            index = min(index, len(data))
            data = data[:index] + insert + data[index + drop :]
        raw = data if form == "bytes" else data.decode("utf-8", "replace")
    result = check(world, raw)
    if result is not None and result.decision == "consumed":
        assert signed_details_unchanged(raw, original), "consumed with altered signed details"
        assert result.evidence_id == original["details"]["evidenceId"]


@SETTINGS
@given(signature=b64url_sig)
def test_random_signatures_never_verify(world: World, signature: str) -> None:
    envelope = world.mint()
    envelope["details"]["signature"] = signature
    result = check(world, envelope)
    assert result is not None
    assert result.decision == "rejected"
    assert result.reasons == ("signature-invalid",)


def test_a_key_outside_the_keyring_is_untrusted_whatever_key_id_it_claims(
    world: World, tmp_path_factory: Any
) -> None:
    foreign, _ = KeyStore.open(tmp_path_factory.mktemp("foreign")).ensure_key()
    own_id = world.signer.key_id
    result = check(world, world.mint(signer=foreign), stats=False)
    assert result is not None
    assert (result.match.decision, result.reasons) == ("untrusted", ("unknown-key",))
    # A foreign key claiming the keyring key's id: the signature cannot verify.
    impostor = Signer(foreign._private, own_id)
    result = check(world, world.mint(signer=impostor), stats=False)
    assert result is not None
    assert (result.match.decision, result.reasons) == ("untrusted", ("signature-invalid",))
    # The control: the same call with the real key is consumed, exactly once.
    genuine = world.mint()
    first, second = check(world, genuine, stats=False), check(world, genuine, stats=False)
    assert first is not None and first.decision == "consumed"
    assert second is not None and second.reasons == ("replay",)
