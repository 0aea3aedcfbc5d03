"""Ed25519 signing key and public keyring.

The private key is a PKCS#8 PEM file with mode 0600 inside the 0700 home; a key
file that group or others can read is refused, never used. The keyring
(``keyring.json``) lists every public key the guard has used, with status
``active`` or ``retired`` and when it was retired, so evidence signed just before
a rotation still verifies within a grace period and an auditor can check old
heads. ``keyId`` is ``"ed25519:" + hex(SHA-256(raw public key))``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, Field, ValidationError

from audit import (
    WIRE_CONFIG,
    KeyId,
    UsageError,
    b64url_decode,
    b64url_encode,
    format_iso,
    parse_iso,
    sha256_hex,
    utc_now,
)
from guard._errors import KeyFileError, KeyringError
from guard._home import ensure_private_dir

__all__ = [
    "KEYRING_FILE",
    "RETIRED_KEY_GRACE_SECONDS",
    "SIGNING_KEY_FILE",
    "KeyStore",
    "Keyring",
    "KeyringEntry",
    "PublicKeyring",
    "Signer",
    "key_id_for",
]

SIGNING_KEY_FILE = "signing.key"
KEYRING_FILE = "keyring.json"
_LOCK_FILE = ".keys.lock"
# Evidence lives at most 600 s; a key retired while some of it is in flight must
# still verify it. Past this grace a retired key verifies nothing new.
RETIRED_KEY_GRACE_SECONDS = 900
_MAX_KEYRING_BYTES = 1 << 20


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


class Keyring(BaseModel):
    """The public keyring file: all an auditor or monitor needs to verify."""

    model_config = WIRE_CONFIG

    schema_: Literal["pi-operator-guard/keyring/v1"] = Field(
        default="pi-operator-guard/keyring/v1", alias="schema"
    )
    keys: tuple[KeyringEntry, ...] = ()


@dataclass(frozen=True)
class PublicKeyring:
    """Verification view of a keyring: keyId -> (public key, retired-at)."""

    keys: dict[str, tuple[Ed25519PublicKey, datetime | None]]

    @classmethod
    def from_keyring(cls, keyring: Keyring, source: object = "keyring") -> PublicKeyring:
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
        return cls(keys)

    @classmethod
    def load(cls, path: Path) -> PublicKeyring:
        return cls.from_keyring(_read_keyring(path), path)

    def usable_key(
        self, key_id: str, now: datetime, grace_seconds: int = RETIRED_KEY_GRACE_SECONDS
    ) -> Ed25519PublicKey | None:
        """The key to verify with at ``now``, or ``None`` when unknown or retired past grace."""
        found = self.keys.get(key_id)
        if found is None:
            return None
        public, retired = found
        if retired is not None and now >= retired + timedelta(seconds=grace_seconds):
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
        if not self.keyring_path.exists():
            return Keyring()
        return _read_keyring(self.keyring_path)

    def public_keyring(self) -> PublicKeyring:
        return PublicKeyring.from_keyring(self.keyring(), self.keyring_path)

    def _install_new_key(self, keyring: Keyring) -> tuple[Signer, Keyring]:
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
        updated = Keyring(keys=(*keyring.keys, entry))
        # Keyring first: a crash between the two writes leaves an extra public key,
        # never a private key whose public half nobody can verify against.
        _write_atomic(self.keyring_path, _dump(updated), 0o644)
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        _write_atomic(self.key_path, pem, 0o600)
        return Signer(private, entry.key_id), updated

    def ensure_key(self) -> tuple[Signer, bool]:
        """The active signer, generating one on first use. Returns ``(signer, created)``."""
        with self._locked():
            if self.has_key():
                return self.load_signer(), False
            signer, _ = self._install_new_key(self.keyring())
            return signer, True

    def generate(self) -> tuple[Signer, bool]:
        """``keygen``: create the key if there is none; an existing key is kept."""
        return self.ensure_key()

    def rotate(self) -> tuple[str, Signer]:
        """Retire the active key and install a new one. Returns ``(old_key_id, new_signer)``."""
        with self._locked():
            old = self.load_signer()
            keyring = self.keyring()
            stamp = format_iso(utc_now())
            retired = tuple(
                e.model_copy(update={"status": "retired", "retired_at_iso": stamp})
                if e.status == "active"
                else e
                for e in keyring.keys
            )
            signer, _ = self._install_new_key(Keyring(keys=retired))
            return old.key_id, signer


def _dump(keyring: Keyring) -> bytes:
    return (json.dumps(keyring.model_dump(mode="json"), indent=2, sort_keys=True) + "\n").encode()
