"""Regenerate operator/envelopes.json (see README.md). Writes the file.

    python tests/vectors/make_operator_vectors.py

Evidence envelopes that carry the operator's own WebAuthn signature (``operatorSignature``,
inside the guard-signed details), checked against a keyring that enrols the operator's
credentials (``operators``): a valid one for each algorithm (ES256, EdDSA, RS256) and one vector
per way to break it, each with the decision and reason code both the Python consumer
(``guard.evidence.check_and_consume``) and the TypeScript verifier in ``verifier/`` must reach.

Everything is made here from the formats, not by the guard's own WebAuthn code: a small software
authenticator (fixed keys: a P-256 scalar, an Ed25519 seed, an RSA key from primes derived from a
fixed label) writes the authenticator data and the browser's clientDataJSON, and signs them;
the guard's fixed Ed25519 seed (the evidence vectors' ``activeSeedHex``) signs the details. Every
signature is deterministic (ECDSA per RFC 6979), so running this again writes the same file.

The threat most vectors play: a host that stole the guard's key. It can sign any details, but
not the operator's assertion, so every vector that changes a statement field re-signs the
details with the guard's key (the guard's signature verifies) and leaves the assertion as the
operator's authenticator made it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from make_envelope_vectors import pending_call_id  # run from this folder, like it

from audit.wire import b64url_encode, canonical_json, sha256_prefixed
from guard._evidence.envelope import envelope_content, signing_message
from guard._evidence.keys import Signer, key_id_for

OUT = Path(__file__).resolve().parent / "operator" / "envelopes.json"

GUARD_SEED = bytes(range(32))  # the evidence vectors' active key
OLD_GUARD_SEED = bytes(range(32, 64))  # retired at 01:00:05, still verifying what it signed before
ES256_SCALAR = int.from_bytes(bytes(range(160, 192)), "big")
EDDSA_SEED = bytes(range(192, 224))
RSA_LABEL = b"pi-operator-guard operator vectors RS256"
REMOVED_SCALAR = int.from_bytes(bytes(range(224, 256)), "big")
STRANGER_SCALAR = int.from_bytes(bytes(range(1, 33)), "big")  # enrolled nowhere

RP_ID = "localhost"
ORIGIN = "http://localhost:8790"
NOW = "2026-11-22T01:00:10.000Z"
ENROLLED = "2026-11-21T12:00:00.000Z"
UP, UV, BE, BS, AT, ED = 0x01, 0x04, 0x08, 0x10, 0x40, 0x80
STATEMENT_SCHEMA = "pi-operator-guard/approval-statement/v1"
STATEMENT_FIELDS = (
    "evidenceId",
    "actionKind",
    "toolName",
    "path",
    "scope",
    "payloadHash",
    "toolCallId",
    "createdAtIso",
    "expiresAtIso",
    "keyId",
)


def _guard(seed: bytes) -> tuple[Signer, str]:
    private = Ed25519PrivateKey.from_private_bytes(seed)
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return Signer(private, key_id_for(private.public_key())), b64url_encode(raw)


GUARD, GUARD_PUBLIC = _guard(GUARD_SEED)
OLD_GUARD, OLD_GUARD_PUBLIC = _guard(OLD_GUARD_SEED)


# --- RSA from fixed primes -----------------------------------------------------------------

_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % d for d in range(2, int(p**0.5) + 1))]


def _probable_prime(n: int) -> bool:
    if any(n % p == 0 for p in _SMALL_PRIMES):
        return n in _SMALL_PRIMES
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for base in _SMALL_PRIMES[:24]:  # Miller-Rabin, fixed bases: deterministic
        x = pow(base, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(label: bytes, bits: int = 1024) -> int:
    """The first probable prime at or above a number derived from ``label`` (top two bits set)."""
    stream = b"".join(hashlib.sha512(label + bytes([i])).digest() for i in range(bits // 512))
    candidate = int.from_bytes(stream[: bits // 8], "big") | (3 << (bits - 2)) | 1
    while not (_probable_prime(candidate) and (candidate - 1) % 65537 != 0):
        candidate += 2
    return candidate


def _rsa_key() -> rsa.RSAPrivateKey:
    p, q, e = _prime(RSA_LABEL + b" p"), _prime(RSA_LABEL + b" q"), 65537
    d = pow(e, -1, (p - 1) * (q - 1))
    public = rsa.RSAPublicNumbers(e, p * q)
    return rsa.RSAPrivateNumbers(
        p, q, d, rsa.rsa_crt_dmp1(d, p), rsa.rsa_crt_dmq1(d, q), rsa.rsa_crt_iqmp(p, q), public
    ).private_key()


# --- a software authenticator and browser ---------------------------------------------------

PrivateKey = ec.EllipticCurvePrivateKey | Ed25519PrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class Authenticator:
    """One credential: its id, key and algorithm, enrolled (or not) with ``sign_count``."""

    algorithm: int
    credential_id: bytes
    key: PrivateKey
    sign_count: int

    @property
    def id(self) -> str:
        return b64url_encode(self.credential_id)

    def cose_key(self) -> bytes:
        """The COSE_Key (RFC 9052, section 7) as an authenticator writes it."""
        if isinstance(self.key, ec.EllipticCurvePrivateKey):
            numbers = self.key.public_key().public_numbers()
            return cbor2.dumps(
                {
                    1: 2,
                    3: -7,
                    -1: 1,
                    -2: numbers.x.to_bytes(32, "big"),
                    -3: numbers.y.to_bytes(32, "big"),
                }
            )
        if isinstance(self.key, Ed25519PrivateKey):
            raw = self.key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
            return cbor2.dumps({1: 1, 3: -8, -1: 6, -2: raw})
        numbers_rsa = self.key.public_key().public_numbers()
        return cbor2.dumps(
            {
                1: 3,
                3: -257,
                -1: numbers_rsa.n.to_bytes(256, "big"),
                -2: numbers_rsa.e.to_bytes(3, "big"),
            }
        )

    def sign(self, data: bytes) -> bytes:
        if isinstance(self.key, ec.EllipticCurvePrivateKey):
            return self.key.sign(data, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))
        if isinstance(self.key, Ed25519PrivateKey):
            return self.key.sign(data)
        return self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())

    def credential(self, **changes: Any) -> dict[str, Any]:
        """The keyring's ``operators`` entry for this credential."""
        entry = {
            "credentialId": self.id,
            "publicKey": b64url_encode(self.cose_key()),
            "algorithm": self.algorithm,
            "signCount": self.sign_count,
            "label": {-7: "laptop passkey", -8: "security key", -257: "old platform key"}[
                self.algorithm
            ],
            "rpId": RP_ID,
            "origin": ORIGIN,
            "status": "active",
            "enrolledAtIso": ENROLLED,
            **changes,
        }
        return {k: v for k, v in entry.items() if v is not None}


ES256 = Authenticator(-7, bytes(range(16)), ec.derive_private_key(ES256_SCALAR, ec.SECP256R1()), 41)
EDDSA = Authenticator(-8, bytes(range(16, 48)), Ed25519PrivateKey.from_private_bytes(EDDSA_SEED), 0)
RS256 = Authenticator(-257, bytes(range(48, 64)), _rsa_key(), 7)
REMOVED = Authenticator(
    -7, bytes(range(64, 80)), ec.derive_private_key(REMOVED_SCALAR, ec.SECP256R1()), 3
)
STRANGER = Authenticator(
    -7, bytes(range(80, 96)), ec.derive_private_key(STRANGER_SCALAR, ec.SECP256R1()), 0
)


def _keyring(operators: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The public keyring, signed by the guard's active key over the JCS of everything but
    ``signatures`` (as ``Keyring.signing_message``), ``operators`` included."""
    keyring: dict[str, Any] = {
        "schema": "pi-operator-guard/keyring/v1",
        "keys": [
            {
                "keyId": OLD_GUARD.key_id,
                "publicKey": OLD_GUARD_PUBLIC,
                "status": "retired",
                "createdAtIso": "2026-11-21T00:00:00.000Z",
                "retiredAtIso": "2026-11-22T01:00:05.000Z",
            },
            {
                "keyId": GUARD.key_id,
                "publicKey": GUARD_PUBLIC,
                "status": "active",
                "createdAtIso": "2026-11-22T01:00:05.000Z",
            },
        ],
    }
    if operators is not None:
        keyring["operators"] = operators
    message = b"pi-operator-guard/keyring/v1\n" + canonical_json(keyring)
    keyring["signatures"] = [
        {"keyId": GUARD.key_id, "signature": b64url_encode(GUARD.sign(message))}
    ]
    return keyring


KEYRING = _keyring(
    [
        ES256.credential(),
        EDDSA.credential(),
        RS256.credential(),
        REMOVED.credential(status="removed", removedAtIso="2026-11-22T00:30:00.000Z"),
    ]
)
KEYRING_WITHOUT_OPERATORS = _keyring(None)


def client_data(challenge: bytes | str, **changes: Any) -> bytes:
    """clientDataJSON as a browser writes it (compact, in this order); ``None`` removes."""
    data = {
        "type": "webauthn.get",
        "challenge": challenge if isinstance(challenge, str) else b64url_encode(challenge),
        "origin": ORIGIN,
        "crossOrigin": False,
        **changes,
    }
    return json.dumps(
        {k: v for k, v in data.items() if v is not None}, separators=(",", ":")
    ).encode()


def authenticator_data(counter: int, *, flags: int = UP | UV, rp_id: str = RP_ID) -> bytes:
    return hashlib.sha256(rp_id.encode()).digest() + bytes([flags]) + struct.pack(">I", counter)


def assertion(
    auth: Authenticator,
    challenge: bytes,
    *,
    counter: int | None = None,
    flags: int = UP | UV,
    rp_id: str = RP_ID,
    auth_extra: bytes = b"",
    client: bytes | None = None,
    **client_changes: Any,
) -> dict[str, str]:
    """The operator's assertion over ``challenge``: authenticator data (``counter`` one above
    the enrolled count unless given), clientDataJSON and the signature over both."""
    count = auth.sign_count + 1 if counter is None else counter
    auth_data = authenticator_data(count, flags=flags, rp_id=rp_id) + auth_extra
    client_bytes = client if client is not None else client_data(challenge, **client_changes)
    return {
        "credentialId": auth.id,
        "authenticatorData": b64url_encode(auth_data),
        "clientDataJson": b64url_encode(client_bytes),
        "signature": b64url_encode(auth.sign(auth_data + hashlib.sha256(client_bytes).digest())),
    }


# --- envelopes --------------------------------------------------------------------------------

UNSIGNED: dict[str, Any] = {
    "schema": "pi-operator-guard/evidence/v1",
    "evidenceId": "oce_ZGVmZ2hpamtsbW5vcHFycw",
    "origin": "runtime-ui-confirm",
    "trusted": True,
    "actionKind": "destructive",
    "toolName": "bash",
    "scope": "/srv/project",
    "payloadHash": sha256_prefixed(canonical_json({"command": "rm -rf build"})),
    "toolCallId": "call_7",
    "createdAtIso": "2026-11-22T01:00:00.000Z",
    "expiresAtIso": "2026-11-22T01:00:30.000Z",
    "dispatchAllowed": False,
    "canOverrideMonitorBlock": False,
    "authorization": "none",
    "keyId": GUARD.key_id,
    "approver": "web",
}
OTHER_CALL: dict[str, Any] = {
    **UNSIGNED,
    "evidenceId": "oce_dHV2d3h5ent8fX5_gIGCgw",
    "payloadHash": sha256_prefixed(canonical_json({"command": "rm -rf /"})),
    "toolCallId": "call_8",
}


def details(**changes: Any) -> dict[str, Any]:
    """The unsigned details with ``changes`` (``None`` removes a field)."""
    return {k: v for k, v in {**UNSIGNED, **changes}.items() if v is not None}


def statement(unsigned: dict[str, Any]) -> dict[str, Any]:
    """The approval statement of ``unsigned``: written from the format, not the guard's code."""
    out: dict[str, Any] = {"schema": STATEMENT_SCHEMA}
    out.update({k: unsigned[k] for k in STATEMENT_FIELDS if unsigned.get(k) is not None})
    return out


def challenge(unsigned: dict[str, Any]) -> bytes:
    return hashlib.sha256(canonical_json(statement(unsigned))).digest()


def guard_signed(unsigned: dict[str, Any], signer: Signer = GUARD) -> dict[str, Any]:
    """``unsigned`` (any shape) with the guard's signature over exactly it."""
    return {**unsigned, "signature": b64url_encode(signer.sign(signing_message(unsigned)))}


def envelope(signed_details: dict[str, Any]) -> str:
    content = envelope_content(
        str(signed_details.get("evidenceId")), str(signed_details.get("toolName"))
    )
    return json.dumps(
        {
            "customType": "operator-confirmation-evidence",
            "content": content,
            "details": signed_details,
        },
        ensure_ascii=False,
    )


def approved(
    unsigned: dict[str, Any] | None = None,
    auth: Authenticator = ES256,
    *,
    over: dict[str, Any] | None = None,
    signer: Signer = GUARD,
    **bend: Any,
) -> str:
    """The envelope of ``unsigned`` with the operator's assertion over the statement of ``over``
    (default: ``unsigned`` itself), the guard's signature over both."""
    unsigned = details() if unsigned is None else unsigned
    signed_by_operator = assertion(auth, challenge(unsigned if over is None else over), **bend)
    return envelope(guard_signed({**unsigned, "operatorSignature": signed_by_operator}, signer))


def with_operator_signature(operator_signature: Any, unsigned: dict[str, Any] | None = None) -> str:
    """An envelope whose ``operatorSignature`` is exactly ``operator_signature``, guard-signed."""
    unsigned = details() if unsigned is None else unsigned
    return envelope(guard_signed({**unsigned, "operatorSignature": operator_signature}))


def good_signature(**changes: Any) -> dict[str, Any]:
    """The valid ES256 assertion over the base details, with ``changes`` (``None`` removes)."""
    base = assertion(ES256, challenge(details()))
    return {k: v for k, v in {**base, **changes}.items() if v is not None}


def _flip(text: str, at: int = 10) -> str:
    return text[:at] + ("A" if text[at] != "A" else "B") + text[at + 1 :]


def _trailing_bits(text: str) -> str:
    """Decodes to the same bytes, but is not the canonical text (the last character's unused bits)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return text[:-1] + alphabet[alphabet.index(text[-1]) ^ 1]


def match(signed: bool = True) -> dict[str, Any]:
    return {
        "decision": "match",
        "reasons": [],
        "operatorSignature": "verified" if signed else "none",
    }


def no(decision: str, reason: str) -> dict[str, Any]:
    return {"decision": decision, "reasons": [reason], "operatorSignature": None}


def untrusted(reason: str) -> dict[str, Any]:
    return no("untrusted", reason)


Vector = tuple[str, str, dict[str, Any]] | tuple[str, str, dict[str, Any], dict[str, Any]]
MALFORMED = no("malformed", "schema-violation")
GRANT = {
    "origin": "runtime-grant",
    "coveredBy": {
        "grantId": "grant_ICEiIyQlJicoKSorLC0uLw",
        "use": 2,
        "grantEvidenceId": "oce_MDEyMzQ1Njc4OTo7PD0-Pw",
    },
}


def valid_vectors() -> list[Vector]:
    with_path = details(path="/srv/project/build")
    extensions = cbor2.dumps({"appid": False})
    chrome = "do not compare clientDataJSON against a template. See https://goo.gl/yabPex"
    return [
        ("valid-es256", approved(), match()),
        ("valid-eddsa", approved(auth=EDDSA, counter=3), match()),
        ("valid-eddsa-without-a-counter", approved(auth=EDDSA, counter=0), match()),
        ("valid-rs256", approved(auth=RS256), match()),
        ("valid-es256-counter-far-ahead", approved(counter=0xFFFFFFFF), match()),
        ("valid-with-path", approved(with_path), match()),
        ("valid-path-null", approved(details(path=None) | {"path": None}), match()),
        ("valid-without-optional-fields", approved(details(scope=None, toolCallId=None)), match()),
        ("valid-without-approver", approved(details(approver=None)), match()),
        (
            "valid-runtime-effects-confirm",
            approved(details(origin="runtime-effects-confirm")),
            match(),
        ),
        ("valid-runtime-grant", approved(details(**GRANT)), match()),
        # the details' members outside the statement: the operator's signature does not bind them
        (
            "valid-origin-outside-the-statement",
            approved(details(origin="operator-contract-review"), over=details()),
            match(),
        ),
        (
            "valid-approver-outside-the-statement",
            approved(details(approver="cli"), over=details()),
            match(),
        ),
        ("valid-top-origin-same", approved(topOrigin=ORIGIN), match()),
        ("valid-cross-origin-absent", approved(crossOrigin=None), match()),
        ("valid-client-data-extra-member", approved(other_keys_can_be_added_here=chrome), match()),
        ("valid-token-binding-present", approved(tokenBinding={"status": "present"}), match()),
        ("valid-token-binding-supported", approved(tokenBinding={"status": "supported"}), match()),
        ("valid-token-binding-not-an-object", approved(tokenBinding="present"), match()),
        ("valid-backup-eligible-and-backed-up", approved(flags=UP | UV | BE | BS), match()),
        ("valid-backup-eligible", approved(flags=UP | UV | BE), match()),
        ("valid-with-extensions", approved(flags=UP | UV | ED, auth_extra=extensions), match()),
        ("valid-without-operator-signature", envelope(guard_signed(details())), match(False)),
    ]


def refusal_vectors() -> list[Vector]:
    base = details()
    with_path = details(path="/srv/project/build")
    other_call = approved(OTHER_CALL)
    moved = json.loads(other_call)["details"]["operatorSignature"]
    out: list[Vector] = [
        # the challenge: this envelope's statement, and nothing else
        (
            "challenge-for-another-envelope",
            approved(over=OTHER_CALL),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            "assertion-moved-from-another-envelope",
            with_operator_signature(moved),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            "challenge-over-the-whole-details",
            envelope(
                guard_signed(
                    {
                        **base,
                        "operatorSignature": assertion(
                            ES256, hashlib.sha256(canonical_json(base)).digest()
                        ),
                    }
                )
            ),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            "challenge-over-a-statement-keeping-null",
            envelope(
                guard_signed(
                    {
                        **base,
                        "path": None,
                        "operatorSignature": assertion(
                            ES256,
                            hashlib.sha256(
                                canonical_json({**statement(base), "path": None})
                            ).digest(),
                        ),
                    }
                )
            ),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            "challenge-over-a-statement-of-another-schema",
            envelope(
                guard_signed(
                    {
                        **base,
                        "operatorSignature": assertion(
                            ES256,
                            hashlib.sha256(
                                canonical_json(
                                    {**statement(base), "schema": "pi-operator-guard/evidence/v1"}
                                )
                            ).digest(),
                        ),
                    }
                )
            ),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            "challenge-padded",
            approved(client=client_data(b64url_encode(challenge(base)) + "=")),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            "challenge-raw-bytes-hex",
            approved(client=client_data(challenge(base).hex())),
            untrusted("operator-challenge-mismatch"),
        ),
    ]
    # each statement field changed (re-signed with the guard's key): the operator signed another
    changed: dict[str, dict[str, Any]] = {
        "evidence-id-changed": details(evidenceId="oce_ZGVmZ2hpamtsbW5vcHFyeA"),
        "action-kind-changed": details(actionKind="protected"),
        "tool-name-changed": details(toolName="write"),
        "path-added": with_path,
        "scope-changed": details(scope="/"),
        "payload-hash-changed": details(payloadHash="sha256:" + "0" * 64),
        "tool-call-id-changed": details(toolCallId="call_9"),
        "tool-call-id-removed": details(toolCallId=None),
        "scope-removed": details(scope=None),
        "created-changed": details(createdAtIso="2026-11-22T01:00:00.001Z"),
        "expires-changed": details(expiresAtIso="2026-11-22T01:05:00.000Z"),
    }
    out += [
        (
            f"statement-{name}",
            approved(new, over=base),
            untrusted("operator-challenge-mismatch"),
        )
        for name, new in changed.items()
    ]
    out += [
        (
            "statement-path-removed",
            approved(base, over=with_path),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            # the old guard key (retired at 01:00:05) still verifies what it signed before
            "statement-key-id-changed",
            approved(details(keyId=OLD_GUARD.key_id), over=base, signer=OLD_GUARD),
            untrusted("operator-challenge-mismatch"),
        ),
        (
            "valid-signed-by-the-old-guard-key",
            approved(details(keyId=OLD_GUARD.key_id), signer=OLD_GUARD),
            match(),
        ),
        # origin
        (
            "wrong-origin-port",
            approved(origin="http://localhost:8791"),
            untrusted("operator-wrong-origin"),
        ),
        (
            "wrong-origin-scheme",
            approved(origin="https://localhost:8790"),
            untrusted("operator-wrong-origin"),
        ),
        (
            "wrong-origin-trailing-slash",
            approved(origin=ORIGIN + "/"),
            untrusted("operator-wrong-origin"),
        ),
        ("origin-missing", approved(origin=None), untrusted("operator-wrong-origin")),
        ("cross-origin", approved(crossOrigin=True), untrusted("operator-wrong-origin")),
        (
            "top-origin-other",
            approved(topOrigin="https://evil.example"),
            untrusted("operator-wrong-origin"),
        ),
        (
            "top-origin-null",
            approved(client=client_data(challenge(base))[:-1] + b',"topOrigin":null}'),
            untrusted("operator-wrong-origin"),
        ),
        # RP id
        ("wrong-rp-id", approved(rp_id="example.com"), untrusted("operator-wrong-rp-id")),
        ("rp-id-with-port", approved(rp_id="localhost:8790"), untrusted("operator-wrong-rp-id")),
        # flags
        ("not-present", approved(flags=UV), untrusted("operator-not-present")),
        ("not-verified", approved(flags=UP), untrusted("operator-not-verified")),
        ("no-flags", approved(flags=0), untrusted("operator-not-present")),
        # the sign count
        ("sign-count-equal", approved(counter=41), untrusted("operator-sign-count")),
        ("sign-count-lower", approved(counter=40), untrusted("operator-sign-count")),
        (
            "sign-count-zero-after-enrolled-41",
            approved(counter=0),
            untrusted("operator-sign-count"),
        ),
        (
            "rs256-sign-count-equal",
            approved(auth=RS256, counter=7),
            untrusted("operator-sign-count"),
        ),
        # type
        ("wrong-type-create", approved(type="webauthn.create"), untrusted("operator-wrong-type")),
        ("type-missing", approved(type=None), untrusted("operator-wrong-type")),
        (
            "wrong-type-before-wrong-challenge",
            approved(over=OTHER_CALL, type="payment.get"),
            untrusted("operator-wrong-type"),
        ),
        # the credential
        ("unknown-credential", approved(auth=STRANGER), untrusted("operator-unknown-credential")),
        (
            "removed-credential",
            approved(auth=REMOVED),
            untrusted("operator-credential-removed"),
        ),
        (
            "removed-credential-before-malformed",
            with_operator_signature(
                {
                    **json.loads(approved(auth=REMOVED))["details"]["operatorSignature"],
                    "authenticatorData": "AAAA",
                }
            ),
            untrusted("operator-credential-removed"),
        ),
        (
            "credential-id-non-canonical",
            with_operator_signature(good_signature(credentialId=_trailing_bits(ES256.id))),
            untrusted("operator-unknown-credential"),
        ),
        # the signature
        (
            "signature-bit-changed",
            with_operator_signature(good_signature(signature=_flip(good_signature()["signature"]))),
            untrusted("operator-signature-invalid"),
        ),
        (
            "signature-by-another-key",
            with_operator_signature(
                good_signature(
                    signature=assertion(STRANGER, challenge(base), counter=42)["signature"]
                )
            ),
            untrusted("operator-signature-invalid"),
        ),
        (
            "signature-es256-raw-r-s",
            with_operator_signature(
                good_signature(signature=b64url_encode(_raw_rs(good_signature()["signature"])))
            ),
            untrusted("operator-signature-invalid"),
        ),
        (
            "signature-eddsa-bit-changed",
            with_operator_signature(
                {
                    **(s := _operator_signature(approved(auth=EDDSA))),
                    "signature": _flip(s["signature"]),
                }
            ),
            untrusted("operator-signature-invalid"),
        ),
        (
            "signature-rs256-bit-changed",
            with_operator_signature(
                {
                    **(s := _operator_signature(approved(auth=RS256))),
                    "signature": _flip(s["signature"]),
                }
            ),
            untrusted("operator-signature-invalid"),
        ),
        (
            "signature-of-another-credential",
            with_operator_signature(good_signature(credentialId=EDDSA.id)),
            untrusted("operator-signature-invalid"),
        ),
        (
            "client-data-edited-after-signing",
            with_operator_signature(
                good_signature(clientDataJson=b64url_encode(client_data(challenge(base), extra=1)))
            ),
            untrusted("operator-signature-invalid"),
        ),
        (
            "authenticator-data-counter-edited-after-signing",
            with_operator_signature(
                good_signature(authenticatorData=b64url_encode(authenticator_data(43)))
            ),
            untrusted("operator-signature-invalid"),
        ),
        # what the WebAuthn library also refuses (signed by the operator as it is)
        (
            "token-binding-not-supported",
            approved(tokenBinding={"status": "not-supported"}),
            untrusted("operator-signature-invalid"),
        ),
        (
            "token-binding-without-status",
            approved(tokenBinding={"id": "abc"}),
            untrusted("operator-signature-invalid"),
        ),
        (
            "backed-up-but-not-eligible",
            approved(flags=UP | UV | BS),
            untrusted("operator-signature-invalid"),
        ),
        (
            "authenticator-data-trailing-byte",
            approved(auth_extra=b"\x00"),
            untrusted("operator-signature-invalid"),
        ),
        (
            "extensions-flag-without-extensions",
            approved(flags=UP | UV | ED),
            untrusted("operator-signature-invalid"),
        ),
        (
            "attested-credential-flag-without-data",
            approved(flags=UP | UV | AT),
            untrusted("operator-signature-invalid"),
        ),
        # malformed (the shape is right: base64url strings; their contents are not)
        (
            "authenticator-data-36-bytes",
            with_operator_signature(
                good_signature(authenticatorData=b64url_encode(authenticator_data(42)[:36]))
            ),
            untrusted("operator-malformed"),
        ),
        (
            "authenticator-data-non-canonical",
            with_operator_signature(
                good_signature(
                    authenticatorData=_trailing_bits(good_signature()["authenticatorData"])
                )
            ),
            untrusted("operator-malformed"),
        ),
        (
            "client-data-non-canonical",
            with_operator_signature(
                good_signature(clientDataJson=_trailing_bits(good_signature()["clientDataJson"]))
            ),
            untrusted("operator-malformed"),
        ),
        (
            "signature-non-canonical",
            with_operator_signature(
                good_signature(signature=_trailing_bits(good_signature()["signature"]))
            ),
            untrusted("operator-malformed"),
        ),
        (
            "client-data-not-json",
            approved(client=b"type=webauthn.get"),
            untrusted("operator-malformed"),
        ),
        ("client-data-a-list", approved(client=b"[]"), untrusted("operator-malformed")),
        (
            "client-data-a-string",
            approved(client=b'"webauthn.get"'),
            untrusted("operator-malformed"),
        ),
        (
            "client-data-not-utf8",
            approved(client=client_data(challenge(base))[:-1] + b',"x":"\xff"}'),
            untrusted("operator-malformed"),
        ),
        (
            "client-data-a-nul-byte",
            with_operator_signature(good_signature(clientDataJson="AA")),
            untrusted("operator-malformed"),
        ),
    ]
    return out


def _operator_signature(text: str) -> dict[str, str]:
    found: dict[str, str] = json.loads(text)["details"]["operatorSignature"]
    return found


def _raw_rs(der_b64: str) -> bytes:
    """An ES256 signature as raw r || s (what WebCrypto writes), not the DER WebAuthn uses."""
    r, s = decode_dss_signature(base64.urlsafe_b64decode(der_b64 + "=" * (-len(der_b64) % 4)))
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def structure_vectors() -> list[Vector]:
    """``operatorSignature``'s shape (guard-signed as it is): exactly four base64url strings."""
    good = good_signature()
    out: list[Vector] = [
        ("operator-signature-null", with_operator_signature(None), MALFORMED),
        ("operator-signature-a-string", with_operator_signature(good["signature"]), MALFORMED),
        ("operator-signature-a-list", with_operator_signature([good]), MALFORMED),
        ("operator-signature-empty", with_operator_signature({}), MALFORMED),
        (
            "operator-signature-extra-member",
            with_operator_signature({**good, "userHandle": "AA"}),
            MALFORMED,
        ),
        (
            "operator-signature-member-null",
            with_operator_signature({**good, "signature": None}),
            MALFORMED,
        ),
        (
            "operator-signature-member-a-number",
            with_operator_signature({**good, "signature": 1}),
            MALFORMED,
        ),
        (
            "operator-signature-member-empty",
            with_operator_signature({**good, "signature": ""}),
            MALFORMED,
        ),
        (
            "operator-signature-member-padded",
            with_operator_signature({**good, "signature": good["signature"] + "=="}),
            MALFORMED,
        ),
        (
            "operator-signature-member-standard-base64",
            with_operator_signature({**good, "credentialId": "AAEC+/8"}),
            MALFORMED,
        ),
        (
            "operator-signature-member-over-4096",
            with_operator_signature({**good, "clientDataJson": "A" * 4097}),
            MALFORMED,
        ),
        (
            "operator-signature-client-data-json-webauthn-spelling",
            with_operator_signature(
                {**good_signature(clientDataJson=None), "clientDataJSON": good["clientDataJson"]}
            ),
            MALFORMED,
        ),
        (
            "operator-signature-snake-case",
            with_operator_signature(
                {**good_signature(credentialId=None), "credential_id": good["credentialId"]}
            ),
            MALFORMED,
        ),
    ]
    out += [
        (
            f"operator-signature-missing-{name}",
            with_operator_signature(good_signature(**{name: None})),
            MALFORMED,
        )
        for name in ("credentialId", "authenticatorData", "clientDataJson", "signature")
    ]
    signed = json.loads(approved())["details"]
    out += [
        # edited after the guard signed: the guard's own signature fails first
        (
            "operator-signature-added-after-signing",
            envelope({**guard_signed(details()), "operatorSignature": good}),
            untrusted("signature-invalid"),
        ),
        (
            "operator-signature-removed-after-signing",
            envelope({k: v for k, v in signed.items() if k != "operatorSignature"}),
            untrusted("signature-invalid"),
        ),
        (
            "operator-signature-replaced-after-signing",
            envelope(
                {**signed, "operatorSignature": good_signature(signature=_flip(good["signature"]))}
            ),
            untrusted("signature-invalid"),
        ),
    ]
    return out


def order_vectors() -> list[Vector]:
    """Where check 4a sits: after the guard's signature and origin, before time; and 6b."""
    bad = approved(flags=UP)
    no_signature = envelope(guard_signed(details()))
    grant_without = envelope(guard_signed(details(**GRANT)))
    return [
        (
            "operator-checked-before-time",
            bad,
            untrusted("operator-not-verified"),
            {"now": "2026-11-22T01:00:30.000Z"},
        ),
        (
            "operator-verified-but-expired",
            approved(),
            no("expired", "expired"),
            {"now": "2026-11-22T01:00:30.000Z"},
        ),
        (
            "origin-checked-before-operator",
            bad,
            untrusted("origin-untrusted"),
            {"trustedOrigins": ["runtime-grant"]},
        ),
        (
            "keyring-without-operators",
            approved(),
            untrusted("operator-unknown-credential"),
            {"keyring": KEYRING_WITHOUT_OPERATORS},
        ),
        (
            "keyring-without-operators-unsigned-evidence",
            no_signature,
            match(False),
            {"keyring": KEYRING_WITHOUT_OPERATORS},
        ),
        # requireOperatorSignature: after every other check, before single use
        (
            "require-operator-signature-without-one",
            no_signature,
            no("not-operator-signed", "no-operator-signature"),
            {"requireOperatorSignature": True},
        ),
        (
            "require-operator-signature-es256",
            approved(),
            match(),
            {"requireOperatorSignature": True},
        ),
        (
            "require-operator-signature-eddsa",
            approved(auth=EDDSA),
            match(),
            {"requireOperatorSignature": True},
        ),
        (
            "require-operator-signature-bad-one",
            bad,
            untrusted("operator-not-verified"),
            {"requireOperatorSignature": True},
        ),
        (
            "require-operator-signature-without-one-expired",
            no_signature,
            no("expired", "expired"),
            {"requireOperatorSignature": True, "now": "2026-11-22T01:00:30.000Z"},
        ),
        (
            "require-operator-signature-without-one-edited",
            envelope({**guard_signed(details()), "toolName": "write"}),
            untrusted("signature-invalid"),
            {"requireOperatorSignature": True},
        ),
        (
            "require-operator-signature-and-dialog-on-a-grant",
            grant_without,
            no("not-dialog", "grant-covered"),
            {"requireOperatorSignature": True, "requireDialog": True},
        ),
        (
            "require-operator-signature-on-a-grant",
            grant_without,
            no("not-operator-signed", "no-operator-signature"),
            {"requireOperatorSignature": True},
        ),
        (
            "require-operator-signature-on-a-signed-grant",
            approved(details(**GRANT)),
            match(),
            {"requireOperatorSignature": True},
        ),
    ]


def vectors() -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    out = []
    for vector in valid_vectors() + refusal_vectors() + structure_vectors() + order_vectors():
        name, raw, expected = vector[0], vector[1], vector[2]
        options = vector[3] if len(vector) == 4 else {}
        out.append((name, raw, expected, options))
    return out


def main() -> None:
    assert statement(details()) == _guard_statement(details()), (
        "the statement drifted from the guard's"
    )
    out = []
    seen: set[str] = set()
    for name, raw, expected, options in vectors():
        assert name not in seen, name
        seen.add(name)
        vector: dict[str, Any] = {"id": name, "envelope": raw, "now": options.get("now", NOW)}
        vector["skewSeconds"] = 5
        vector["maxTtlSeconds"] = 600
        if (call := pending_call_id(raw)) is not None:
            vector["toolCallId"] = call  # the consumer names the pending call (check 6)
        for key in ("trustedOrigins", "requireDialog", "requireOperatorSignature", "keyring"):
            if key in options:
                vector[key] = options[key]
        vector["expected"] = expected
        out.append(vector)
    doc = {
        "guardSeedHex": GUARD_SEED.hex(),
        "oldGuardSeedHex": OLD_GUARD_SEED.hex(),
        "rpId": RP_ID,
        "origin": ORIGIN,
        "credentials": {
            "es256": {"credentialId": ES256.id, "scalarHex": f"{ES256_SCALAR:064x}"},
            "eddsa": {"credentialId": EDDSA.id, "seedHex": EDDSA_SEED.hex()},
            "rs256": {"credentialId": RS256.id, "primesFrom": RSA_LABEL.decode()},
            "removed": {"credentialId": REMOVED.id, "scalarHex": f"{REMOVED_SCALAR:064x}"},
            "stranger": {"credentialId": STRANGER.id, "scalarHex": f"{STRANGER_SCALAR:064x}"},
        },
        "keyring": KEYRING,
        "vectors": out,
    }
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _guard_statement(unsigned: dict[str, Any]) -> dict[str, Any]:
    """The guard's own statement, to catch this file and the guard drifting apart."""
    from guard._operator import approval_statement

    return approval_statement(unsigned)


if __name__ == "__main__":
    main()
