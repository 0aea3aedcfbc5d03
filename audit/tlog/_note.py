"""Checkpoints as C2SP signed notes (https://c2sp.org/signed-note, https://c2sp.org/tlog-checkpoint).

A checkpoint's note text is three LF-terminated lines::

    pi-operator-guard/audit/log_0123456789abcdefghijkl
    42
    <base64 of the 32-byte Merkle root>

followed by a blank line and one or more signature lines
``— <key name> <base64(key id || Ed25519 signature)>``. The signature covers the
note text (the three lines, each with its LF). The key name is the origin, as C2SP
recommends for a log's own key; the 4-byte key id is
``SHA-256(key name || 0x0A || 0x01 || public key)[:4]``. A verifier key ("vkey")
is ``<key name>+<key id as 8 hex digits>+<base64(0x01 || public key)>``.

Parsing is strict (what Go's ``golang.org/x/mod/sumdb/note`` refuses, this refuses):
UTF-8 text without control characters other than LF, at most 100 signature lines,
canonical standard base64. Signatures by unknown keys (a witness's cosignature, say)
are kept but not trusted; a signature by a known key that does not verify refuses the
note; a note needs at least one verified signature.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from audit._errors import NoteError

__all__ = [
    "MAX_NOTE_BYTES",
    "ORIGIN_PREFIX",
    "Checkpoint",
    "NoteKey",
    "NoteSignature",
    "SignedCheckpoint",
    "open_checkpoint",
    "origin_for",
    "parse_checkpoint",
    "sign_checkpoint",
]

MAX_NOTE_BYTES = 64 * 1024
MAX_SIGNATURES = 100
ORIGIN_PREFIX = "pi-operator-guard/audit/"
_ED25519 = b"\x01"
_DASH = "\u2014 "
_SIZE_RE = re.compile(r"0|[1-9][0-9]{0,18}")
_NAME_RE = re.compile(r"[^\s+]+")
# C2SP signed-note: text must not hold control characters other than LF.
_BAD_TEXT = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")


def origin_for(log_id: str) -> str:
    """The checkpoint origin of the log whose ``log.created`` record names ``log_id``."""
    return ORIGIN_PREFIX + log_id


def _b64decode(text: str, what: str, code: str = "note-malformed") -> bytes:
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise NoteError(code, f"{what} is not standard base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise NoteError(code, f"{what} is not canonical base64")
    return raw


def _key_id(name: str, public: bytes) -> bytes:
    return hashlib.sha256(name.encode("utf-8") + b"\n" + _ED25519 + public).digest()[:4]


@dataclass(frozen=True)
class NoteKey:
    """A named Ed25519 verifier key of the signed-note format."""

    name: str
    key_id: bytes
    public: bytes

    @classmethod
    def for_public(cls, name: str, public: Ed25519PublicKey | bytes) -> NoteKey:
        """The note key called ``name`` for an Ed25519 public key (object or 32 raw bytes)."""
        raw = (
            public
            if isinstance(public, bytes)
            else public.public_bytes(Encoding.Raw, PublicFormat.Raw)
        )
        if not _NAME_RE.fullmatch(name) or len(raw) != 32:
            raise NoteError("vkey-malformed", "a key name has no spaces or '+', a key 32 bytes")
        return cls(name, _key_id(name, raw), raw)

    @classmethod
    def from_vkey(cls, vkey: str) -> NoteKey:
        """Parse ``<name>+<hex key id>+<base64(0x01 || key)>``; the key id must match."""
        parts = vkey.strip().split("+", 2)
        if len(parts) != 3 or not _NAME_RE.fullmatch(parts[0]):
            raise NoteError("vkey-malformed", "a vkey is <name>+<key id>+<base64 key>")
        name, hex_id, encoded = parts
        blob = _b64decode(encoded, "the vkey's key", "vkey-malformed")
        if len(blob) != 33 or blob[:1] != _ED25519:
            raise NoteError("vkey-malformed", "the vkey is not an Ed25519 key (type 0x01)")
        key = cls.for_public(name, blob[1:])
        if hex_id != key.key_id.hex():
            raise NoteError("vkey-malformed", "the vkey's key id does not match its key")
        return key

    def vkey(self) -> str:
        encoded = base64.b64encode(_ED25519 + self.public).decode("ascii")
        return f"{self.name}+{self.key_id.hex()}+{encoded}"

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class Checkpoint:
    """One tree head: ``size`` leaves with Merkle root ``root`` in the log called ``origin``."""

    origin: str
    size: int
    root: bytes

    def text(self) -> bytes:
        """The note text the signatures cover."""
        root = base64.b64encode(self.root).decode("ascii")
        return f"{self.origin}\n{self.size}\n{root}\n".encode()


@dataclass(frozen=True)
class NoteSignature:
    """One signature line: who claims to have signed, and the raw bytes."""

    name: str
    key_id: bytes
    signature: bytes


@dataclass(frozen=True)
class SignedCheckpoint:
    """A checkpoint whose note verified; ``signer`` is the trusted key that signed it."""

    checkpoint: Checkpoint
    note: bytes
    signer: NoteKey
    signatures: tuple[NoteSignature, ...]


def sign_checkpoint(
    checkpoint: Checkpoint, public: Ed25519PublicKey | bytes, sign: Callable[[bytes], bytes]
) -> bytes:
    """The signed note for ``checkpoint``, signed by ``sign`` with the key named the origin."""
    key = NoteKey.for_public(checkpoint.origin, public)
    text = checkpoint.text()
    signature = sign(text)
    if not isinstance(signature, bytes) or len(signature) != 64 or not key.verify(text, signature):
        raise NoteError("signature-invalid", "the signer's signature does not verify")
    blob = base64.b64encode(key.key_id + signature).decode("ascii")
    return text + f"\n{_DASH}{key.name} {blob}\n".encode()


def parse_checkpoint(note: bytes) -> tuple[Checkpoint, bytes, tuple[NoteSignature, ...]]:
    """Split and parse a signed note holding a checkpoint, without checking signatures.

    Returns ``(checkpoint, note text, signatures)``; raises :class:`audit.NoteError`.
    """
    if len(note) > MAX_NOTE_BYTES:
        raise NoteError("note-malformed", f"the note is over {MAX_NOTE_BYTES} bytes")
    try:
        whole = note.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteError("note-malformed", "the note is not UTF-8") from None
    split = whole.rfind("\n\n")
    if split < 0:
        raise NoteError("note-malformed", "no blank line between the text and its signatures")
    text, sigs = whole[: split + 1], whole[split + 2 :]
    if _BAD_TEXT.search(whole) or "\n\n" in text:
        raise NoteError("note-malformed", "control characters or blank lines in the note")
    if not sigs.endswith("\n"):
        raise NoteError("note-malformed", "the signature lines do not end with a line feed")
    signatures: list[NoteSignature] = []
    for line in sigs[:-1].split("\n"):
        if not line.startswith(_DASH):
            raise NoteError("note-malformed", "a signature line does not start with an em dash")
        fields = line[len(_DASH) :].split(" ")
        if len(fields) != 2 or not _NAME_RE.fullmatch(fields[0]):
            raise NoteError("note-malformed", "a signature line is not '— <name> <base64>'")
        blob = _b64decode(fields[1], "a signature")
        if len(blob) < 5:
            raise NoteError("note-malformed", "a signature is too short")
        signatures.append(NoteSignature(fields[0], blob[:4], blob[4:]))
        if len(signatures) > MAX_SIGNATURES:
            raise NoteError("note-malformed", f"more than {MAX_SIGNATURES} signatures")
    lines = text[:-1].split("\n")
    if len(lines) != 3:
        raise NoteError(
            "checkpoint-malformed",
            "a checkpoint is origin, size and root hash (this log uses no extension lines)",
        )
    origin, size_text, root_text = lines
    if not origin or origin.strip() != origin:
        raise NoteError("checkpoint-malformed", "the origin line is empty or padded")
    if not _SIZE_RE.fullmatch(size_text) or int(size_text) >= 1 << 63:
        raise NoteError("checkpoint-malformed", "the tree size is not a plain decimal number")
    root = _b64decode(root_text, "the root hash")
    if len(root) != 32:
        raise NoteError("checkpoint-malformed", "the root hash is not 32 bytes")
    return Checkpoint(origin, int(size_text), root), text.encode("utf-8"), tuple(signatures)


def open_checkpoint(
    note: bytes,
    keys: Iterable[NoteKey] | Mapping[str, Ed25519PublicKey],
    *,
    origin: str | None = None,
) -> SignedCheckpoint:
    """Parse ``note`` and verify it was signed by one of ``keys``.

    ``keys`` are note keys, or a mapping of Ed25519 public keys (a keyring: each is
    tried under the note's own origin as key name). With ``origin`` the checkpoint
    must be of that log (``origin-mismatch`` otherwise). Raises :class:`audit.NoteError`.
    """
    checkpoint, text, signatures = parse_checkpoint(note)
    if origin is not None and checkpoint.origin != origin:
        raise NoteError("origin-mismatch", "the checkpoint is of another log")
    if isinstance(keys, Mapping):
        known = [NoteKey.for_public(checkpoint.origin, k) for k in keys.values()]
    else:
        known = list(keys)
    signer: NoteKey | None = None
    for sig in signatures:
        for key in known:
            if key.name == sig.name and key.key_id == sig.key_id:
                if not key.verify(text, sig.signature):
                    raise NoteError("signature-invalid", f"the signature by {key.name} is bad")
                if key.name == checkpoint.origin and signer is None:
                    signer = key
    if signer is None:
        raise NoteError("no-trusted-signature", "no signature by the log's key verifies")
    return SignedCheckpoint(checkpoint, note, signer, tuple(signatures))
