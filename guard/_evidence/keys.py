"""Ed25519 signing key and public keyring.

The private key is a PKCS#8 PEM file with mode 0600 inside the 0700 home; a key
file that group or others can read is refused, never used. The keyring
(``keyring.json``) lists every public key the guard has used, with status
``active`` or ``retired`` and when it was retired, so evidence created before a
rotation still verifies until it expires and an auditor can check old heads.
``keyId`` is ``"ed25519:" + hex(SHA-256(raw public key))``.

The keyring is signed: Ed25519 over ``b"pi-operator-guard/keyring/v1\n" + JCS({"schema",
"keys"})`` by its active key (and, after ``keys rotate``, countersigned by the key it
retired). The guard trusts a keyring only if its own signing key is the active entry and
signed it, so a key added to or edited in the file is refused (:class:`KeyringError`).
The first keyring is trusted on first use, when the first key is generated. An
auditor's ``--keyring`` and a verify-only monitor's keyring are their trust roots.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, Field, ValidationError

from audit import UsageError
from audit.wire import (
    WIRE_CONFIG,
    KeyId,
    b64url_decode,
    b64url_encode,
    canonical_json,
    format_iso,
    parse_iso,
    sha256_hex,
    utc_now,
)
from guard._errors import KeyFileError, KeyringError
from guard._home import KEYRING_FILE, SIGNING_KEY_FILE, ensure_private_dir
from guard._operator import OperatorCredential

__all__ = [
    "KEYRING_FILE",
    "RETIRED_KEY_GRACE_SECONDS",
    "SIGNING_KEY_FILE",
    "KeyStore",
    "Keyring",
    "KeyringEntry",
    "KeyringSignature",
    "PublicKeyring",
    "Signer",
    "key_id_for",
]

_LOCK_FILE = ".keys.lock"
# Evidence lives at most 600 s; a key retired while some of it is in flight must
# still verify it: evidence *created before* the retirement, for at most this long
# after it (the maximum TTL plus the clock skew). Evidence created after verifies never.
RETIRED_KEY_GRACE_SECONDS = 605
_MAX_KEYRING_BYTES = 1 << 20
_KEYRING_DOMAIN = b"pi-operator-guard/keyring/v1\n"


def key_id_for(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + sha256_hex(raw)


class KeyringEntry(BaseModel):
    """One public key the guard has signed with."""

    model_config = WIRE_CONFIG

    key_id: KeyId
    public_key: str = Field(pattern=r"^[A-Za-z0-9_-]{43}$")
    status: Literal["active", "retired"]
    created_at_iso: str
    retired_at_iso: str | None = None

    def load_public_key(self) -> Ed25519PublicKey:
        raw = b64url_decode(self.public_key, 32)
        if raw is None:
            raise ValueError("public key is not canonical base64url of 32 bytes")
        key = Ed25519PublicKey.from_public_bytes(raw)
        if key_id_for(key) != self.key_id:
            raise ValueError(f"keyId {self.key_id} does not match its public key")
        return key


class KeyringSignature(BaseModel):
    """One signature over the keyring's entries (see :meth:`Keyring.signing_message`)."""

    model_config = WIRE_CONFIG

    key_id: KeyId
    signature: str = Field(pattern=r"^[A-Za-z0-9_-]{86}$")


class Keyring(BaseModel):
    """The public keyring file: all an auditor or monitor needs to verify."""

    model_config = WIRE_CONFIG

    schema_: Literal["pi-operator-guard/keyring/v1"] = Field(
        default="pi-operator-guard/keyring/v1", alias="schema"
    )
    keys: tuple[KeyringEntry, ...] = ()
    operators: tuple[OperatorCredential, ...] | None = None
    """The operator's enrolled authenticator credentials (``pi-guard operator enroll``);
    absent until the first enrolment, so older keyrings sign the same bytes."""
    signatures: tuple[KeyringSignature, ...] = ()

    def signing_message(self) -> bytes:
        """Domain prefix + JCS of ``{"schema", "keys", "operators"}`` (``null`` members left
        out, so a keyring without operators signs what it always did)."""
        unsigned = self.model_dump(
            mode="json", by_alias=True, exclude={"signatures"}, exclude_none=True
        )
        return _KEYRING_DOMAIN + canonical_json(unsigned)

    def signed(self, *signers: Signer) -> Keyring:
        message = self.signing_message()
        return self.model_copy(
            update={
                "signatures": tuple(
                    KeyringSignature(key_id=s.key_id, signature=b64url_encode(s.sign(message)))
                    for s in signers
                )
            }
        )

    def active_key_ids(self) -> tuple[str, ...]:
        return tuple(e.key_id for e in self.keys if e.status == "active")


@dataclass(frozen=True)
class PublicKeyring:
    """Verification view of a keyring: keyId -> (public key, retired-at)."""

    keys: dict[str, tuple[Ed25519PublicKey, datetime | None]]
    operators: dict[str, OperatorCredential] = field(default_factory=dict)
    """The operator's credentials by id, active and removed."""

    @classmethod
    def from_keyring(cls, keyring: Keyring, source: object = "keyring") -> PublicKeyring:
        operators = {c.credential_id: c for c in keyring.operators or ()}
        if len(operators) != len(keyring.operators or ()):
            raise KeyringError(source, "an operator credential is listed twice")
        keys: dict[str, tuple[Ed25519PublicKey, datetime | None]] = {}
        for entry in keyring.keys:
            try:
                public = entry.load_public_key()
            except ValueError as exc:
                raise KeyringError(source, str(exc)) from None
            retired = None
            if entry.status == "retired":
                if entry.retired_at_iso is None:
                    raise KeyringError(source, f"retired key {entry.key_id} has no retiredAt")
                try:
                    retired = parse_iso(entry.retired_at_iso, "retiredAt")
                except UsageError as exc:
                    raise KeyringError(source, str(exc)) from None
            keys[entry.key_id] = (public, retired)
        return cls(keys, operators)

    @classmethod
    def load(cls, path: Path) -> PublicKeyring:
        return cls.from_keyring(_read_keyring(path), path)

    def usable_key(
        self,
        key_id: str,
        now: datetime,
        created_at: datetime | None = None,
        grace_seconds: int = RETIRED_KEY_GRACE_SECONDS,
    ) -> Ed25519PublicKey | None:
        """The key to verify evidence created at ``created_at`` with at ``now``.

        ``None`` when the key is unknown, or retired and either the evidence was created
        at or after the retirement (or ``created_at`` is not given) or ``now`` is past
        the retirement by ``grace_seconds`` (the maximum TTL plus skew).
        """
        found = self.keys.get(key_id)
        if found is None:
            return None
        public, retired = found
        if retired is not None:
            if created_at is None or created_at >= retired:
                return None
            if now >= retired + timedelta(seconds=grace_seconds):
                return None
        return public

    def public_keys(self) -> dict[str, Ed25519PublicKey]:
        """Every key, active or retired: what the audit head verifier accepts."""
        return {key_id: public for key_id, (public, _) in self.keys.items()}

    @staticmethod
    def verify(public: Ed25519PublicKey, signature: bytes, message: bytes) -> bool:
        try:
            public.verify(signature, message)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class Signer:
    """The active signing key; satisfies ``audit.HeadSigner``."""

    _private: Ed25519PrivateKey
    key_id: str

    @property
    def public_key(self) -> Ed25519PublicKey:
        return self._private.public_key()

    def sign(self, message: bytes) -> bytes:
        return self._private.sign(message)


def _read_keyring(path: Path) -> Keyring:
    try:
        with path.open("rb") as handle:
            data = handle.read(_MAX_KEYRING_BYTES + 1)
    except FileNotFoundError:
        raise KeyringError(path, "file not found") from None
    except OSError as exc:
        raise KeyringError(path, f"cannot read: {exc.strerror}") from None
    if len(data) > _MAX_KEYRING_BYTES:
        raise KeyringError(path, "larger than 1 MiB")
    try:
        return Keyring.model_validate_json(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top)"
        raise KeyringError(path, f"corrupted at {where}: {first['msg']}") from None


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


class KeyStore:
    """The key files in a guard home. Use :meth:`open`."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.key_path = home / SIGNING_KEY_FILE
        self.keyring_path = home / KEYRING_FILE
        self.retired_on_create: tuple[str, ...] = ()

    @classmethod
    def open(cls, home: Path) -> KeyStore:
        return cls(ensure_private_dir(home))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        fd = os.open(self.home / _LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def has_key(self) -> bool:
        return self.key_path.exists()

    def load_signer(self) -> Signer:
        """Load the active key, refusing a file group or others can read."""
        try:
            fd = os.open(self.key_path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            raise KeyFileError(self.key_path, "not found (run `pi-guard keygen`)") from None
        except OSError as exc:
            raise KeyFileError(self.key_path, f"cannot open: {exc.strerror}") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise KeyFileError(self.key_path, "is not a regular file")
            mode = stat.S_IMODE(info.st_mode)
            if mode & 0o077:
                raise KeyFileError(
                    self.key_path, f"mode {mode:04o} lets others read it; chmod 600 it or rotate"
                )
            if info.st_uid != os.getuid():
                raise KeyFileError(self.key_path, "is owned by another user")
            pem = os.read(fd, 64 * 1024)
        finally:
            os.close(fd)
        try:
            private = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError):
            raise KeyFileError(self.key_path, "is not a PEM Ed25519 private key") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise KeyFileError(self.key_path, "is not an Ed25519 key")
        return Signer(private, key_id_for(private.public_key()))

    def keyring(self) -> Keyring:
        """The keyring as stored, unchecked (``keys list``; see :meth:`trusted_keyring`)."""
        if not self.keyring_path.exists():
            return Keyring()
        return _read_keyring(self.keyring_path)

    def trusted_keyring(self, signer: Signer | None = None) -> Keyring:
        """The keyring, only if the guard's own key is its active entry and signed it.

        Every other signature must verify too (a countersignature by a retired key).
        Raises :class:`KeyringError` for an unsigned, re-signed, edited or extended keyring.
        """
        signer = signer or self.load_signer()
        keyring = _read_keyring(self.keyring_path)
        active = keyring.active_key_ids()
        if active != (signer.key_id,):
            raise KeyringError(
                self.keyring_path,
                f"the active keys {list(active)} are not exactly the signing key "
                f"{signer.key_id}: refusing a keyring this guard did not write",
            )
        _check_signatures(keyring, self.keyring_path)
        return keyring

    def load_trusted(self) -> tuple[Signer, PublicKeyring]:
        """The signer and its trusted keyring, read together under the keys lock (a
        rotation by another process writes the keyring and then the key)."""
        with self._locked():
            signer = self.load_signer()
            return signer, self.public_keyring(signer)

    def public_keyring(self, signer: Signer | None = None) -> PublicKeyring:
        """The verification view of the :meth:`trusted_keyring`."""
        return PublicKeyring.from_keyring(self.trusted_keyring(signer), self.keyring_path)

    def trust_unsigned_keyring(self) -> bool:
        """``keygen --trust-keyring``: the operator vouches for the keyring as it is.

        Signs it with the signing key if that key is its one active entry; ``True`` when
        it was signed here, ``False`` when it already verified.
        """
        with self._locked():
            if not self.has_key() or not self.keyring_path.exists():
                return False  # nothing to vouch for: the first key signs its own keyring
            signer = self.load_signer()
            try:
                self.trusted_keyring(signer)
                return False
            except KeyringError:
                keyring = _read_keyring(self.keyring_path)
                PublicKeyring.from_keyring(keyring, self.keyring_path)
                if keyring.active_key_ids() != (signer.key_id,):
                    raise
            _write_atomic(self.keyring_path, _dump(keyring.signed(signer)), 0o644)
            return True

    def _install_new_key(
        self, keyring: Keyring, countersigner: Signer | None = None
    ) -> tuple[Signer, Keyring]:
        private = Ed25519PrivateKey.generate()
        public = private.public_key()
        entry = KeyringEntry(
            key_id=key_id_for(public),
            public_key=b64url_encode(
                public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            ),
            status="active",
            created_at_iso=format_iso(utc_now()),
        )
        signer = Signer(private, entry.key_id)
        updated = Keyring(keys=(*keyring.keys, entry), operators=keyring.operators)
        updated = updated.signed(signer, *([countersigner] if countersigner else []))
        # Keyring first: a crash between the two writes leaves an extra public key,
        # never a private key whose public half nobody can verify against.
        _write_atomic(self.keyring_path, _dump(updated), 0o644)
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        _write_atomic(self.key_path, pem, 0o600)
        return signer, updated

    def ensure_key(self) -> tuple[Signer, bool]:
        """The active signer, generating one on first use. Returns ``(signer, created)``.

        When the key file is gone (moved away, deleted) every key still active in the
        keyring is retired at this moment: a key that left the home is never trusted
        for new evidence again. Their ids are in :attr:`retired_on_create`. The new
        keyring is signed by the new key alone (trust on first use): the old key is gone.
        """
        self.retired_on_create = ()
        with self._locked():
            if self.has_key():
                return self.load_signer(), False
            keyring = self.keyring()
            if keyring.keys:
                # The old key is gone, so nobody can vouch for changes made meanwhile:
                # take the keyring only as its last active key signed it.
                _check_signatures(keyring, self.keyring_path)
            stamp = format_iso(utc_now())
            self.retired_on_create = keyring.active_key_ids()
            signer, _ = self._install_new_key(_retire_active(keyring, stamp))
            return signer, True

    def change_operators(
        self, change: Callable[[tuple[OperatorCredential, ...]], tuple[OperatorCredential, ...]]
    ) -> Keyring:
        """Replace the trusted keyring's operator credentials with ``change(current)`` and
        sign it again with the active key (under the keys lock). Raises what ``change``
        raises, and :class:`KeyringError` for a keyring this guard did not write."""
        with self._locked():
            signer = self.load_signer()
            keyring = self.trusted_keyring(signer)
            operators = change(keyring.operators or ())
            updated = Keyring(keys=keyring.keys, operators=operators).signed(signer)
            PublicKeyring.from_keyring(updated, self.keyring_path)
            _write_atomic(self.keyring_path, _dump(updated), 0o644)
            return updated

    def generate(self) -> tuple[Signer, bool]:
        """``keygen``: create the key if there is none; an existing key is kept."""
        return self.ensure_key()

    def rotate(self) -> tuple[str, Signer]:
        """Retire the active key and install a new one. Returns ``(old_key_id, new_signer)``.

        The new keyring is signed by the new key and countersigned by the retired one.
        """
        with self._locked():
            old = self.load_signer()
            keyring = self.trusted_keyring(old)
            stamp = format_iso(utc_now())
            signer, _ = self._install_new_key(_retire_active(keyring, stamp), countersigner=old)
            return old.key_id, signer


def _check_signatures(keyring: Keyring, path: Path) -> None:
    """Every active key signed ``keyring`` and every signature verifies, or KeyringError."""
    ring = PublicKeyring.from_keyring(keyring, path)
    message = keyring.signing_message()
    by = [sig.key_id for sig in keyring.signatures]
    if len(set(by)) != len(by):
        raise KeyringError(path, "a key signed it twice")
    for key_id in keyring.active_key_ids():
        if key_id not in by:
            raise KeyringError(
                path,
                f"not signed by its active key {key_id} (edited, or written by an older "
                "version: check `pi-guard keys list` and run `pi-guard keygen --trust-keyring`)",
            )
    for sig in keyring.signatures:
        found = ring.keys.get(sig.key_id)
        raw = b64url_decode(sig.signature, 64)
        if found is None or raw is None or not PublicKeyring.verify(found[0], raw, message):
            raise KeyringError(path, f"the signature by {sig.key_id} does not verify")


def _retire_active(keyring: Keyring, stamp: str) -> Keyring:
    return Keyring(
        keys=tuple(
            e.model_copy(update={"status": "retired", "retired_at_iso": stamp})
            if e.status == "active"
            else e
            for e in keyring.keys
        ),
        operators=keyring.operators,
    )


def _dump(keyring: Keyring) -> bytes:
    data = keyring.model_dump(mode="json")
    if data.get("operators") is None:
        data.pop("operators", None)  # absent until the first enrolment
    return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
