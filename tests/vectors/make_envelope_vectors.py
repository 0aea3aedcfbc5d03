"""Regenerate evidence/envelopes.json (see README.md). Writes the file.

    python tests/vectors/make_envelope_vectors.py

Evidence envelopes signed by the guard's own code (``guard._evidence``: ``signing_message``
and ``Signer``) with fixed Ed25519 seeds, checked at fixed instants: one valid envelope and one
vector per way to break it, each with the decision and reason code of checks 1 to 5 of the
consumer's check (docs/monitor.md, "The consumer's checks and reason codes") that both the Python
consumer and the TypeScript verifier in ``verifier/`` must reach.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit.wire import b64url_encode, canonical_json, sha256_prefixed
from guard._evidence.envelope import envelope_content, signing_message
from guard._evidence.keys import Signer, key_id_for

OUT = Path(__file__).resolve().parent / "evidence" / "envelopes.json"

ACTIVE_SEED = bytes(range(32))  # the key of evidence-v1.json
RETIRED_SEED = bytes(range(32, 64))
STRANGER_SEED = bytes(range(96, 128))  # in no keyring
RETIRED_AT = "2026-11-22T00:59:00.000Z"
NOW = "2026-11-22T01:00:10.000Z"


def _signer(seed: bytes) -> tuple[Signer, str]:
    private = Ed25519PrivateKey.from_private_bytes(seed)
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return Signer(private, key_id_for(private.public_key())), b64url_encode(raw)


ACTIVE, ACTIVE_PUBLIC = _signer(ACTIVE_SEED)
RETIRED, RETIRED_PUBLIC = _signer(RETIRED_SEED)
STRANGER, _ = _signer(STRANGER_SEED)

KEYRING = {
    "schema": "pi-operator-guard/keyring/v1",
    "keys": [
        {
            "keyId": RETIRED.key_id,
            "publicKey": RETIRED_PUBLIC,
            "status": "retired",
            "createdAtIso": "2026-11-21T00:00:00.000Z",
            "retiredAtIso": RETIRED_AT,
        },
        {
            "keyId": ACTIVE.key_id,
            "publicKey": ACTIVE_PUBLIC,
            "status": "active",
            "createdAtIso": RETIRED_AT,
        },
    ],
}

UNSIGNED: dict[str, Any] = {
    "schema": "pi-operator-guard/evidence/v1",
    "evidenceId": "oce_AAECAwQFBgcICQoLDA0ODw",
    "origin": "runtime-ui-confirm",
    "trusted": True,
    "actionKind": "destructive",
    "toolName": "bash",
    "scope": "/srv/project",
    "payloadHash": sha256_prefixed(canonical_json({"command": "rm -rf build"})),
    "toolCallId": "call_1",
    "createdAtIso": "2026-11-22T01:00:00.000Z",
    "expiresAtIso": "2026-11-22T01:00:30.000Z",
    "dispatchAllowed": False,
    "canOverrideMonitorBlock": False,
    "authorization": "none",
    "keyId": ACTIVE.key_id,
}


MCP_CALL = {
    "toolName": "mcp__files__delete_file",
    "actionKind": "protected",
    "payloadHash": sha256_prefixed(canonical_json({"path": "notes.txt"})),
}


def sign(details: dict[str, Any], signer: Signer = ACTIVE) -> dict[str, Any]:
    """``details`` with the signature ``signer`` makes over exactly them (any shape at all)."""
    return {**details, "signature": b64url_encode(signer.sign(signing_message(details)))}


def envelope(details: dict[str, Any], **top: Any) -> dict[str, Any]:
    content = envelope_content(str(details.get("evidenceId")), str(details.get("toolName")))
    return {
        "customType": "operator-confirmation-evidence",
        "content": content,
        **top,
        "details": details,
    }


def text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def signed(**changes: Any) -> dict[str, Any]:
    """The valid details with ``changes`` (``None`` removes a field), signed by the active key."""
    details = {**UNSIGNED, **changes}
    return sign({k: v for k, v in details.items() if v is not None})


def edited(**changes: Any) -> dict[str, Any]:
    """The valid signed details, then ``changes`` made after signing."""
    return {**signed(), **changes}


def match() -> dict[str, Any]:
    return {"decision": "match", "reasons": []}


def no(decision: str, reason: str) -> dict[str, Any]:
    return {"decision": decision, "reasons": [reason]}


GRANT = {
    "grantId": "grant_ICEiIyQlJicoKSorLC0uLw",
    "use": 2,
    "grantEvidenceId": "oce_MDEyMzQ1Njc4OTo7PD0-Pw",
}
GRANTED = {"origin": "runtime-grant", "coveredBy": GRANT}


def _covered(**changes: Any) -> dict[str, Any]:
    """The valid grant's ``coveredBy`` with ``changes`` (``None`` removes a member)."""
    return {k: v for k, v in {**GRANT, **changes}.items() if v is not None}


def _flip_signature(details: dict[str, Any]) -> dict[str, Any]:
    sig = details["signature"]
    return {**details, "signature": sig[:10] + ("A" if sig[10] != "A" else "B") + sig[11:]}


def _trailing_bits(details: dict[str, Any]) -> dict[str, Any]:
    # 64 bytes take 85 1/3 base64 characters: the last one carries 2 unused bits. Setting one
    # decodes to the same bytes but is not the canonical text.
    sig = details["signature"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return {**details, "signature": sig[:-1] + alphabet[alphabet.index(sig[-1]) ^ 1]}


Vector = tuple[str, str | bytes, str, dict[str, Any]]


def vectors() -> list[Vector]:
    good = envelope(signed())
    retired_ok = signed(keyId=RETIRED.key_id, createdAtIso="2026-11-22T00:58:59.000Z")
    retired_ok = sign({k: v for k, v in retired_ok.items() if k != "signature"}, RETIRED)
    retired_late = sign({**UNSIGNED, "keyId": RETIRED.key_id}, RETIRED)
    retired_grace = sign(
        {
            **UNSIGNED,
            "keyId": RETIRED.key_id,
            "createdAtIso": "2026-11-22T00:58:59.000Z",
            "expiresAtIso": "2026-11-22T01:08:59.000Z",
        },
        RETIRED,
    )
    astral = "\U0001d54f" * 256  # 256 code points, 512 UTF-16 units
    out: list[Vector] = [
        ("valid", text(good), NOW, match()),
        ("valid-at-creation", text(good), "2026-11-22T01:00:00.000Z", match()),
        ("valid-created-within-skew", text(good), "2026-11-22T00:59:55.000Z", match()),
        ("valid-last-millisecond", text(good), "2026-11-22T01:00:29.999Z", match()),
        ("valid-with-path", text(envelope(signed(path="/srv/project/build"))), NOW, match()),
        (
            "valid-without-optional-fields",
            text(envelope(signed(scope=None, toolCallId=None))),
            NOW,
            match(),
        ),
        ("valid-path-null", text(envelope(sign({**UNSIGNED, "path": None}))), NOW, match()),
        (
            "valid-operator-contract-review",
            text(envelope(signed(origin="operator-contract-review"))),
            NOW,
            match(),
        ),
        (
            "valid-runtime-effects-confirm",
            text(envelope(signed(origin="runtime-effects-confirm"))),
            NOW,
            match(),
        ),
        ("valid-protected", text(envelope(signed(actionKind="protected"))), NOW, match()),
        # A tool of an MCP server (pi's ``mcp__<server>__<tool>``): bound to the server too.
        ("valid-mcp-tool", text(envelope(signed(**MCP_CALL))), NOW, match()),
        (
            "mcp-tool-of-another-server-after-signing",
            text(envelope({**signed(**MCP_CALL), "toolName": "mcp__filez__delete_file"})),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "valid-ttl-600",
            text(envelope(signed(expiresAtIso="2026-11-22T01:10:00.000Z"))),
            NOW,
            match(),
        ),
        (
            "valid-tool-name-256-astral-code-points",
            text(envelope(signed(toolName=astral))),
            NOW,
            match(),
        ),
        (
            "valid-without-custom-type-and-display",
            text({"content": "x", "details": signed()}),
            NOW,
            match(),
        ),
        ("valid-display-false", text(envelope(signed(), display=False)), NOW, match()),
        ("valid-retired-key-before-retirement", text(envelope(retired_ok)), NOW, match()),
        (
            "valid-non-ascii",
            text(envelope(signed(path="/srv/projekt/\u00e9t\u00e9/\u2028"))),
            NOW,
            match(),
        ),
        (
            "valid-escaped-forms",
            text(good).replace('"bash"', '"\\u0062ash"').replace("/", "\\/"),
            NOW,
            match(),
        ),
        # each field edited after signing
        (
            "edited-evidence-id",
            text(envelope(edited(evidenceId="oce_AAECAwQFBgcICQoLDA0OEA"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-origin",
            text(envelope(edited(origin="operator-contract-review"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-action-kind",
            text(envelope(edited(actionKind="protected"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-tool-name",
            text(envelope(edited(toolName="write"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-path-added",
            text(envelope(edited(path="/srv/project/src"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-path-null-added",
            text(envelope(edited(path=None))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-scope",
            text(envelope(edited(scope="/"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-payload-hash",
            text(envelope(edited(payloadHash="sha256:" + "0" * 64))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-tool-call-id",
            text(envelope(edited(toolCallId="call_2"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-created",
            text(envelope(edited(createdAtIso="2026-11-22T01:00:00.001Z"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-expires",
            text(envelope(edited(expiresAtIso="2026-11-22T01:05:00.000Z"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-key-id-to-retired-key",
            text(envelope(edited(keyId=RETIRED.key_id, createdAtIso="2026-11-22T00:58:00.000Z"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-tool-call-id-removed",
            text(envelope({k: v for k, v in signed().items() if k != "toolCallId"})),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        ("edited-content", text({**good, "content": "anything at all"}), NOW, match()),
        (
            "signature-bit-changed",
            text(envelope(_flip_signature(signed()))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "signature-non-canonical",
            text(envelope(_trailing_bits(signed()))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "signature-by-unknown-key",
            text(envelope(sign({**UNSIGNED, "keyId": STRANGER.key_id}, STRANGER))),
            NOW,
            no("untrusted", "unknown-key"),
        ),
        (
            "signature-by-another-key",
            text(envelope(sign(UNSIGNED, RETIRED))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "signature-over-details-without-domain",
            text(
                envelope(
                    {**UNSIGNED, "signature": b64url_encode(ACTIVE.sign(canonical_json(UNSIGNED)))}
                )
            ),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "retired-key-after-retirement",
            text(envelope(retired_late)),
            NOW,
            no("untrusted", "key-retired"),
        ),
        (
            "retired-key-past-grace",
            text(envelope(retired_grace)),
            "2026-11-22T01:09:05.000Z",
            no("untrusted", "key-retired"),
        ),
        (
            "retired-key-within-grace",
            text(envelope(retired_grace)),
            "2026-11-22T01:08:58.999Z",
            match(),
        ),
        (
            "retired-key-within-grace-but-expired",
            text(envelope(retired_grace)),
            "2026-11-22T01:09:04.999Z",
            no("expired", "expired"),
        ),
        ("expired", text(good), "2026-11-22T01:00:30.000Z", no("expired", "expired")),
        ("expired-long-ago", text(good), "2026-11-23T00:00:00.000Z", no("expired", "expired")),
        (
            "created-in-future",
            text(good),
            "2026-11-22T00:59:54.999Z",
            no("not-yet-valid", "created-in-future"),
        ),
        (
            "ttl-over-max",
            text(envelope(signed(expiresAtIso="2026-11-22T01:10:00.001Z"))),
            NOW,
            no("expired", "ttl-out-of-range"),
        ),
        (
            "ttl-zero",
            text(envelope(signed(expiresAtIso="2026-11-22T01:00:00.000Z"))),
            NOW,
            no("expired", "ttl-out-of-range"),
        ),
        (
            "ttl-negative",
            text(envelope(signed(expiresAtIso="2026-11-22T00:59:00.000Z"))),
            NOW,
            no("expired", "ttl-out-of-range"),
        ),
        (
            "origin-untrusted",
            text(envelope(signed(origin="operator-contract-review"))),
            NOW,
            no("untrusted", "origin-untrusted"),
        ),
        # structure
        (
            "extra-field-in-details",
            text(envelope(signed(approved=True))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "extra-field-at-top",
            text(envelope(signed(), authorized=True)),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "missing-key-id",
            text(envelope(signed(keyId=None))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        ("missing-content", text({"details": signed()}), NOW, no("malformed", "schema-violation")),
        ("missing-details", text({"content": "x"}), NOW, no("malformed", "schema-violation")),
        (
            "details-a-list",
            text({"content": "x", "details": [signed()]}),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "dispatch-allowed-true",
            text(envelope(signed(dispatchAllowed=True))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "can-override-true",
            text(envelope(signed(canOverrideMonitorBlock=True))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "authorization-granted",
            text(envelope(signed(authorization="granted"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "trusted-false",
            text(envelope(signed(trusted=False))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "trusted-the-number-1",
            text(envelope(signed(trusted=1))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "trusted-the-number-1.0",
            text(envelope(signed(trusted=1.0))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "display-the-number-0",
            text(envelope(signed(), display=0)),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "dispatch-allowed-the-number-0",
            text(envelope(signed(dispatchAllowed=0))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "display-true",
            text(envelope(signed(), display=True)),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "display-null",
            text(envelope(signed(), display=None)),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "snake-case-field",
            text(
                envelope(
                    {
                        **{k: v for k, v in signed().items() if k != "evidenceId"},
                        "evidence_id": UNSIGNED["evidenceId"],
                    }
                )
            ),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "snake-case-field-signed",
            text(
                envelope(
                    sign(
                        {
                            **{k: v for k, v in UNSIGNED.items() if k != "toolName"},
                            "tool_name": "bash",
                        }
                    )
                )
            ),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "schema-v2",
            text(envelope(signed(schema="pi-operator-guard/evidence/v2"))),
            NOW,
            no("malformed", "unsupported-schema"),
        ),
        (
            "schema-null",
            text(envelope(sign({**UNSIGNED, "schema": None}))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "custom-type-other",
            text(envelope(signed(), customType="operator-confirmation")),
            NOW,
            no("malformed", "wrong-custom-type"),
        ),
        (
            "custom-type-null",
            text(envelope(signed(), customType=None)),
            NOW,
            no("malformed", "wrong-custom-type"),
        ),
        (
            "origin-unknown",
            text(envelope(signed(origin="model-said-yes"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "action-kind-local-safe",
            text(envelope(signed(actionKind="local-safe"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "evidence-id-short",
            text(envelope(signed(evidenceId="oce_AAECAwQFBgcICQoLDA0O"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "tool-name-empty",
            text(envelope(signed(toolName=""))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "tool-name-257-code-points",
            text(envelope(signed(toolName="x" * 257))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "payload-hash-uppercase",
            text(envelope(signed(payloadHash=UNSIGNED["payloadHash"].upper()))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "key-id-short",
            text(envelope(signed(keyId=ACTIVE.key_id[:-1]))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "signature-padded",
            text(envelope({**signed(), "signature": signed()["signature"] + "=="})),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "created-without-milliseconds",
            text(envelope(signed(createdAtIso="2026-11-22T01:00:00Z"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "created-with-offset",
            text(envelope(signed(createdAtIso="2026-11-22T01:00:00.000+00:00"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "created-february-30",
            text(envelope(signed(createdAtIso="2026-02-30T01:00:00.000Z"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "created-hour-24",
            text(envelope(signed(createdAtIso="2026-11-22T24:00:00.000Z"))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "created-a-number",
            text(envelope(signed(createdAtIso=1795309200000))),
            NOW,
            no("malformed", "schema-violation"),
        ),
        (
            "tool-name-lone-surrogate",
            text(envelope(signed(toolName="bash"))).replace(
                '"toolName": "bash"', '"toolName": "\\ud800"'
            ),
            NOW,
            no("malformed", "schema-violation"),
        ),
        # not even JSON
        ("empty", "", NOW, no("missing", "no-evidence")),
        ("empty-object", "{}", NOW, no("malformed", "schema-violation")),
        ("not-json", text(good)[:-1], NOW, no("malformed", "invalid-json")),
        (
            "duplicate-key",
            text(good).replace('"toolName": "bash"', '"toolName": "bash", "toolName": "write"'),
            NOW,
            no("malformed", "duplicate-key"),
        ),
        ("byte-order-mark", "\ufeff" + text(good), NOW, no("malformed", "invalid-json")),
        ("not-utf8", text(good).encode("utf-8")[:-1] + b"\xff}", NOW, no("malformed", "not-utf8")),
        (
            "nan",
            text(good).replace('"content"', '"n": NaN, "content"', 1),
            NOW,
            no("malformed", "non-finite-number"),
        ),
        (
            "integer-401-digits",
            text(good).replace('"content"', '"n": ' + "9" * 401 + ', "content"', 1),
            NOW,
            no("malformed", "number-too-long"),
        ),
        (
            "float-overflow",
            text(good).replace('"content"', '"n": 1e400, "content"', 1),
            NOW,
            no("malformed", "number-out-of-range"),
        ),
        ("top-level-array", text([good]), NOW, no("malformed", "not-an-object")),
        ("top-level-string", text(text(good)), NOW, no("malformed", "not-an-object")),
        (
            "too-large",
            text(envelope(signed(), content="x" * 17000)),
            NOW,
            no("malformed", "too-large"),
        ),
        (
            "content-over-2048",
            text(envelope(signed(), content="x" * 2049)),
            NOW,
            no("malformed", "schema-violation"),
        ),
    ]
    return out + grant_vectors() + approver_vectors() + call_id_vectors()


def grant_vectors() -> list[Vector]:
    """Evidence a scoped grant covered: ``origin: runtime-grant`` and a signed ``coveredBy``."""
    granted = envelope(signed(**GRANTED))
    malformed = no("malformed", "schema-violation")
    out: list[Vector] = [
        ("valid-runtime-grant", text(granted), NOW, match()),
        (
            "valid-runtime-grant-use-1000",
            text(envelope(signed(origin="runtime-grant", coveredBy=_covered(use=1000)))),
            NOW,
            match(),
        ),
        (
            "valid-covered-by-null",
            text(envelope(sign({**UNSIGNED, "coveredBy": None}))),
            NOW,
            match(),
        ),
        # requireDialog (the vector says so): refused once checks 1 to 5 pass
        ("require-dialog-runtime-grant", text(granted), NOW, no("not-dialog", "grant-covered")),
        ("require-dialog-runtime-ui-confirm", text(envelope(signed())), NOW, match()),
        (
            "require-dialog-runtime-grant-expired",
            text(granted),
            "2026-11-22T01:00:30.000Z",
            no("expired", "expired"),
        ),
        (
            "require-dialog-runtime-grant-edited",
            text(envelope({**signed(**GRANTED), "coveredBy": _covered(use=3)})),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        # the origin and coveredBy disagree (signed as they are)
        (
            "runtime-grant-without-covered-by",
            text(envelope(signed(origin="runtime-grant"))),
            NOW,
            malformed,
        ),
        (
            "runtime-grant-covered-by-null",
            text(envelope(sign({**UNSIGNED, "origin": "runtime-grant", "coveredBy": None}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-with-runtime-ui-confirm",
            text(envelope(signed(coveredBy=GRANT))),
            NOW,
            malformed,
        ),
        (
            "covered-by-with-operator-contract-review",
            text(envelope(signed(origin="operator-contract-review", coveredBy=GRANT))),
            NOW,
            malformed,
        ),
        # a malformed coveredBy (signed as it is)
        (
            "covered-by-grant-id-short",
            text(
                envelope(
                    signed(
                        **{**GRANTED, "coveredBy": _covered(grantId="grant_ICEiIyQlJicoKSorLC0u")}
                    )
                )
            ),
            NOW,
            malformed,
        ),
        (
            "covered-by-grant-id-long",
            text(
                envelope(
                    signed(**{**GRANTED, "coveredBy": _covered(grantId=GRANT["grantId"] + "A")})
                )
            ),
            NOW,
            malformed,
        ),
        (
            "covered-by-grant-id-evidence-prefix",
            text(
                envelope(
                    signed(
                        **{**GRANTED, "coveredBy": _covered(grantId="oce_ICEiIyQlJicoKSorLC0uLw")}
                    )
                )
            ),
            NOW,
            malformed,
        ),
        (
            "covered-by-grant-id-padded",
            text(
                envelope(
                    signed(
                        **{**GRANTED, "coveredBy": _covered(grantId="grant_ICEiIyQlJicoKSorLC0u==")}
                    )
                )
            ),
            NOW,
            malformed,
        ),
        (
            "covered-by-use-0",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(use=0)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-use-negative",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(use=-1)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-use-1001",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(use=1001)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-use-the-float-2.0",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(use=2.0)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-use-true",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(use=True)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-use-a-string",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(use="2")}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-grant-evidence-id-bad",
            text(
                envelope(signed(**{**GRANTED, "coveredBy": _covered(grantEvidenceId="oce_short")}))
            ),
            NOW,
            malformed,
        ),
        (
            "covered-by-missing-grant-id",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(grantId=None)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-missing-use",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(use=None)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-missing-grant-evidence-id",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(grantEvidenceId=None)}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-extra-field",
            text(envelope(signed(**{**GRANTED, "coveredBy": _covered(scope="/")}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-snake-case",
            text(
                envelope(
                    signed(
                        **{
                            **GRANTED,
                            "coveredBy": {**_covered(grantId=None), "grant_id": GRANT["grantId"]},
                        }
                    )
                )
            ),
            NOW,
            malformed,
        ),
        (
            "covered-by-a-string",
            text(envelope(signed(**{**GRANTED, "coveredBy": GRANT["grantId"]}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-a-list",
            text(envelope(signed(**{**GRANTED, "coveredBy": [GRANT]}))),
            NOW,
            malformed,
        ),
        (
            "covered-by-empty",
            text(envelope(signed(**{**GRANTED, "coveredBy": {}}))),
            NOW,
            malformed,
        ),
    ]
    return out


APPROVERS = ("pi-dialog", "cli", "web")


def approver_vectors() -> list[Vector]:
    """Evidence that says which screen answered: ``approver``, signed, absent or one of three."""
    malformed = no("malformed", "schema-violation")
    out: list[Vector] = [
        (f"valid-approver-{who}", text(envelope(signed(approver=who))), NOW, match())
        for who in APPROVERS
    ]
    out += [
        (
            "valid-runtime-grant-approver-cli",
            text(envelope(signed(**GRANTED, approver="cli"))),
            NOW,
            match(),
        ),
        # changed, added or removed after signing
        (
            "edited-approver",
            text(envelope({**signed(approver="web"), "approver": "pi-dialog"})),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-approver-added",
            text(envelope(edited(approver="pi-dialog"))),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        (
            "edited-approver-removed",
            text(envelope({k: v for k, v in signed(approver="cli").items() if k != "approver"})),
            NOW,
            no("untrusted", "signature-invalid"),
        ),
        # not one of the three (signed as it is)
        ("approver-unknown", text(envelope(signed(approver="terminal"))), NOW, malformed),
        ("approver-uppercase", text(envelope(signed(approver="CLI"))), NOW, malformed),
        ("approver-empty", text(envelope(signed(approver=""))), NOW, malformed),
        ("approver-a-number", text(envelope(signed(approver=1))), NOW, malformed),
        ("approver-null", text(envelope(sign({**UNSIGNED, "approver": None}))), NOW, malformed),
        ("approver-true", text(envelope(signed(approver=True))), NOW, malformed),
        ("approver-a-list", text(envelope(signed(approver=["cli"]))), NOW, malformed),
        ("approver-an-object", text(envelope(signed(approver={"name": "cli"}))), NOW, malformed),
        (
            "approver-null-added-after-signing",
            text(envelope({**signed(), "approver": None})),
            NOW,
            malformed,
        ),
    ]
    return out


def call_id_vectors() -> list[Vector]:
    """The call id (check 6): a consumer that names no pending call is refused by default;
    what each passes is in ``CALL_ID_VECTORS``."""
    good = text(envelope(signed()))
    return [
        ("call-id-required", good, NOW, no("mismatch", "call-id-required")),
        ("call-id-other-call", good, NOW, no("mismatch", "tool-call-id-mismatch")),
        ("call-id-checked-elsewhere", good, NOW, match()),
        (
            "call-id-given-for-unbound-evidence",
            text(envelope(signed(toolCallId=None))),
            NOW,
            match(),
        ),
    ]


def pending_call_id(raw: str | bytes) -> str | None:
    """The id of the pending call a vector's consumer passes: the one the envelope is bound
    to (its details' ``toolCallId``), none for an envelope without one or that does not parse."""
    try:
        details = json.loads(raw).get("details")
    except (ValueError, AttributeError):
        return None
    call = details.get("toolCallId") if isinstance(details, dict) else None
    return call if isinstance(call, str) else None


# The call-id part of check 6, by vector name: what the consumer passes instead of the
# envelope's own call id (nothing at all, another call's, or the explicit opt-out).
CALL_ID_VECTORS: dict[str, dict[str, Any]] = {
    "call-id-required": {},
    "call-id-other-call": {"toolCallId": "call_2"},
    "call-id-checked-elsewhere": {"callCheckedElsewhere": True},
    "call-id-given-for-unbound-evidence": {"toolCallId": "call_1"},
}


def main() -> None:
    out = []
    for name, raw, now, expected in vectors():
        vector: dict[str, Any] = {"id": name}
        if isinstance(raw, bytes):
            vector["envelopeBase64"] = base64.b64encode(raw).decode("ascii")
        else:
            vector["envelope"] = raw
        vector["now"] = now
        vector["skewSeconds"] = 5
        vector["maxTtlSeconds"] = 600
        if name in CALL_ID_VECTORS:
            vector.update(CALL_ID_VECTORS[name])
        elif (call := pending_call_id(raw)) is not None:
            vector["toolCallId"] = call
        if name == "origin-untrusted":
            vector["trustedOrigins"] = ["runtime-ui-confirm"]
        if name.startswith("require-dialog-"):
            vector["requireDialog"] = True
        vector["expected"] = expected
        out.append(vector)
    doc = {
        "activeSeedHex": ACTIVE_SEED.hex(),
        "retiredSeedHex": RETIRED_SEED.hex(),
        "strangerSeedHex": STRANGER_SEED.hex(),
        "keyring": KEYRING,
        "vectors": out,
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
