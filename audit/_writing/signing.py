"""Who signs the log's head and whose signatures it trusts.

:class:`HeadSigner` is the guard's Ed25519 key as the appender sees it; :data:`PublicKeys`
the keys a head may be signed by. :func:`signed_head` checks that the signer is the key it
names before its signature goes on a checkpoint.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from typing import Protocol, runtime_checkable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit._errors import NoteError, SignerError, UsageError
from audit.tlog._note import Checkpoint, sign_checkpoint

__all__ = ["HeadSigner", "PublicKeys", "keys_of", "signed_head"]

_KEY_ID = re.compile(r"ed25519:[0-9a-f]{64}")

PublicKeys = Mapping[str, Ed25519PublicKey] | Callable[[], Mapping[str, Ed25519PublicKey]]
"""The keys a head may be signed by: a mapping, or a function returning the current one
(called again when a head names a key the last answer did not have, e.g. after a rotation
by another process)."""


@runtime_checkable
class HeadSigner(Protocol):
    """Signs the log head; implemented by the guard with its Ed25519 key."""

    @property
    def key_id(self) -> str:
        """``"ed25519:" + hex(SHA-256(raw public key))``."""
        ...

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The public half: the checkpoint note's key id is derived from it."""
        ...

    def sign(self, message: bytes) -> bytes:
        """The raw 64-byte Ed25519 signature of ``message``."""
        ...


def keys_of(source: PublicKeys) -> dict[str, Ed25519PublicKey]:
    """The keyring ``source`` is or returns; :class:`UsageError` when it is not one."""
    keys = source() if callable(source) else source
    if not isinstance(keys, Mapping) or not all(
        isinstance(k, str) and isinstance(v, Ed25519PublicKey) for k, v in keys.items()
    ):
        raise UsageError(
            "public_keys", "must map key ids to Ed25519 public keys", type(keys).__name__
        )
    return dict(keys)


def signed_head(signer: HeadSigner, checkpoint: Checkpoint) -> bytes:
    """The checkpoint note ``signer`` signs; :class:`audit.SignerError` (nothing signed)
    when its key id is malformed or not its public key's, or its signature does not verify."""
    key_id = signer.key_id
    if not isinstance(key_id, str) or _KEY_ID.fullmatch(key_id) is None:
        raise SignerError("key id", key_id)
    public = getattr(signer, "public_key", None)
    if not isinstance(public, Ed25519PublicKey):
        raise SignerError("public key", public)
    raw = public.public_bytes(Encoding.Raw, PublicFormat.Raw)
    if key_id != "ed25519:" + hashlib.sha256(raw).hexdigest():
        raise SignerError("key id (not the signer's public key)", key_id)
    try:
        return sign_checkpoint(checkpoint, public, signer.sign)
    except NoteError:
        raise SignerError("signature", "does not verify with the signer's public key") from None
