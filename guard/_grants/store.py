"""Where grants live: signed lines in one file of the guard home, read back only if they verify.

Contract: every line of ``grants.jsonl`` is one signed object, a :class:`GrantRecord`
(``created``) or a :class:`GrantMark` (``used``, ``revoked``, ``expired``), each an Ed25519
signature over ``b"pi-operator-guard/grant/v1\\n" + JCS(line without "signature")`` by the
guard's active key (the prefix keeps this use of the key apart from evidence and log heads).
:meth:`GrantStore.load` folds the lines into :class:`GrantState`; a line that does not parse
or verify makes :attr:`Loaded.problem` non-empty, and then no grant of the file covers
anything (the guard asks). Writers hold an exclusive ``flock`` on the file, so a use is
counted once however many processes share the home. Time, uses, session, key and policy
are checked by :meth:`GrantState.usable`; matching a call is :func:`guard._grants.covers`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationError

from audit import JsonInputError
from audit.wire import (
    WIRE_CONFIG,
    EvidenceId,
    GrantId,
    IsoMillis,
    KeyId,
    Sha256,
    Signature,
    b64url_decode,
    b64url_encode,
    canonical_json,
    format_iso,
    load_json,
    parse_iso,
)
from guard._evidence import PublicKeyring, ReportOnly, Signer
from guard._grants.model import Breadth, GrantPattern

__all__ = [
    "GRANT_SCHEMA",
    "MAX_GRANT_FILE_BYTES",
    "EndReason",
    "GrantMark",
    "GrantRecord",
    "GrantState",
    "GrantStore",
    "Loaded",
    "Unusable",
    "new_grant_id",
]

GRANT_SCHEMA = "pi-operator-guard/grant/v1"
_DOMAIN = b"pi-operator-guard/grant/v1\n"
MAX_GRANT_FILE_BYTES = 4 << 20
"""A grants file larger than this is not read: every grant in it asks again."""

SessionId = Annotated[str, Field(min_length=1, max_length=128)]
EndReason = Literal[
    "revoked", "time", "uses", "session-ended", "key-rotated", "policy-changed", "switched-off"
]
Unusable = Literal[
    "unknown-grant",
    "grant-store-invalid",
    "other-session",
    "ended",
    "expired",
    "used-up",
    "key-rotated",
    "policy-changed",
]


def new_grant_id() -> str:
    """``grant_`` + 128 random bits, unpadded base64url."""
    return "grant_" + b64url_encode(secrets.token_bytes(16))


class GrantRecord(ReportOnly):
    """A grant as created: what it covers, for which pi session, until when and how often.

    Report-only like every result: a grant lets the guard skip a dialog, it authorizes
    nothing for a monitor (each covered call still gets its own evidence).
    """

    schema_: Literal["pi-operator-guard/grant/v1"] = Field(alias="schema")
    type: Literal["created"] = "created"
    grant_id: GrantId
    session_id: SessionId
    pattern: GrantPattern
    breadth: Breadth
    label: str = Field(min_length=1, max_length=2000)
    created_at_iso: IsoMillis
    expires_at_iso: IsoMillis
    max_uses: int = Field(ge=1, le=1000)
    evidence_id: EvidenceId
    policy_digest: Sha256
    key_id: KeyId
    signature: Signature


class GrantMark(BaseModel):
    """A later line about a grant: one more ``used`` (with that call's evidence) or its end."""

    model_config = WIRE_CONFIG

    schema_: Literal["pi-operator-guard/grant/v1"] = Field(alias="schema")
    type: Literal["used", "revoked", "expired"]
    grant_id: GrantId
    at_iso: IsoMillis
    use: int | None = Field(default=None, ge=1, le=1000)
    evidence_id: EvidenceId | None = None
    reason: EndReason | None = None
    by: Annotated[str, Field(max_length=64)] | None = None
    key_id: KeyId
    signature: Signature


@dataclass
class GrantState:
    """One grant folded from its lines: uses so far and, once it ended, why."""

    record: GrantRecord
    uses: int = 0
    ended: EndReason | None = None

    def usable(
        self, session_id: str | None, now: datetime, key_id: str, policy_digest: str
    ) -> Unusable | None:
        """Why this grant cannot cover a call now (``None``: it can)."""
        if self.ended is not None:
            return "ended"
        if self.record.session_id != session_id:
            return "other-session"
        if self.record.key_id != key_id:
            return "key-rotated"
        if now >= parse_iso(self.record.expires_at_iso, "expiresAtIso"):
            return "expired"
        if self.uses >= self.record.max_uses:
            return "used-up"
        if self.record.policy_digest != policy_digest:
            return "policy-changed"
        return None

    @property
    def active(self) -> bool:
        return self.ended is None


@dataclass(frozen=True)
class Loaded:
    """The grants of a file; ``problem`` names the first line that did not verify."""

    grants: dict[str, GrantState]
    problem: str | None = None


def _signed(line: dict[str, Any], signer: Signer) -> dict[str, Any]:
    unsigned = {k: v for k, v in line.items() if k != "signature"}
    signature = b64url_encode(signer.sign(_DOMAIN + canonical_json(unsigned)))
    return {**unsigned, "signature": signature}


def _verifies(raw: dict[str, Any], keyring: PublicKeyring) -> bool:
    public = keyring.public_keys().get(str(raw.get("keyId")))
    signature = raw.get("signature")
    if public is None or not isinstance(signature, str):
        return False
    sig = b64url_decode(signature, 64)
    if sig is None:
        return False
    unsigned = {k: v for k, v in raw.items() if k != "signature"}
    return PublicKeyring.verify(public, sig, _DOMAIN + canonical_json(unsigned))


class GrantStore:
    """The grants file of one guard home (see the module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the file's exclusive lock (``<file>.lock``): one writer at a time."""
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def load(self, keyring: PublicKeyring) -> Loaded:
        """Every grant in the file, folded; any line that fails makes ``problem`` say which."""
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            return Loaded({})
        if size > MAX_GRANT_FILE_BYTES:
            return Loaded({}, f"{self.path.name} is larger than {MAX_GRANT_FILE_BYTES} bytes")
        grants: dict[str, GrantState] = {}
        problem: str | None = None
        with self.path.open("rb") as handle:
            for number, line in enumerate(handle, start=1):
                why = self._fold(line, grants, keyring)
                if why is not None and problem is None:
                    problem = f"{self.path.name} line {number}: {why}"
        return Loaded(grants, problem)

    @staticmethod
    def _fold(line: bytes, grants: dict[str, GrantState], keyring: PublicKeyring) -> str | None:
        try:
            raw = load_json(line, max_bytes=MAX_GRANT_FILE_BYTES)
        except JsonInputError:
            return "not JSON"
        if not isinstance(raw, dict):
            return "not an object"
        if not _verifies(raw, keyring):
            return "the signature does not verify"
        try:
            if raw.get("type") == "created":
                record = GrantRecord.model_validate_json(line, by_alias=True, by_name=False)
                if record.grant_id in grants:
                    return "a grant created twice"
                grants[record.grant_id] = GrantState(record)
                return None
            mark = GrantMark.model_validate_json(line, by_alias=True, by_name=False)
        except ValidationError as exc:
            where = ".".join(str(x) for x in exc.errors()[0]["loc"])
            return f"invalid {where}"
        state = grants.get(mark.grant_id)
        if state is None:
            return "a line about an unknown grant"
        if mark.type == "used":
            if mark.use != state.uses + 1 or state.ended is not None:
                return "a use out of order"
            state.uses += 1
        elif state.ended is None:
            state.ended = mark.reason or ("revoked" if mark.type == "revoked" else "time")
        return None

    def _append(self, line: dict[str, Any], signer: Signer) -> None:
        data = canonical_json(_signed(line, signer)) + b"\n"
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)

    def create(self, record: dict[str, Any], signer: Signer) -> GrantRecord:
        """Sign and keep a new grant (``record`` without ``keyId``/``signature``)."""
        line = _signed(
            {"schema": GRANT_SCHEMA, "type": "created", **record, "keyId": signer.key_id}, signer
        )
        created = GrantRecord.model_validate_json(
            canonical_json(line), by_alias=True, by_name=False
        )
        with self.locked():
            self._append(line, signer)
        return created

    def mark(
        self,
        grant_id: str,
        kind: Literal["used", "revoked", "expired"],
        signer: Signer,
        now: datetime,
        *,
        use: int | None = None,
        evidence_id: str | None = None,
        reason: EndReason | None = None,
        by: str | None = None,
    ) -> None:
        """Append one signed line about ``grant_id`` (the caller holds :meth:`locked`)."""
        line: dict[str, Any] = {
            "schema": GRANT_SCHEMA,
            "type": kind,
            "grantId": grant_id,
            "atIso": format_iso(now),
            "keyId": signer.key_id,
        }
        extra = {"use": use, "evidenceId": evidence_id, "reason": reason, "by": by}
        line.update({k: v for k, v in extra.items() if v is not None})
        GrantMark.model_validate({**line, "signature": "A" * 86}, by_alias=True, by_name=False)
        self._append(line, signer)
