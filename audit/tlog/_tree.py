"""The Merkle tree of a log file: its frontier, cached next to the log, and its signed head.

``<log>.tree`` caches the frontier of the records *before* the last one and the byte
offset where the last one starts. It is never trusted: the appender re-reads the last
record, appends its leaf and must arrive at the root the signed checkpoint names. If
the cache is missing, stale or wrong, the frontier is rebuilt from the whole log
(``O(n)`` once); an append otherwise reads one record and hashes ``O(log n)`` nodes.

The head file ``<log>.head`` is a C2SP checkpoint (:mod:`audit.tlog._note`). Logs written
before checkpoints have a JSON head (:class:`audit.wire.AuditHead`); those still verify,
and the first append replaces it with a checkpoint.
"""

from __future__ import annotations

import base64
import contextlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from pydantic import BaseModel, Field, ValidationError

from audit._errors import JsonInputError, LogLineError, NoteError, ProofError
from audit._records.chain import pread_exact
from audit._records.models import AuditHead
from audit._records.wire import WIRE_CONFIG, b64url_decode, load_json
from audit.tlog._merkle import Frontier, leaf_hash
from audit.tlog._note import ORIGIN_PREFIX, Checkpoint, open_checkpoint

__all__ = [
    "MAX_TREE_BYTES",
    "HeadView",
    "TreeState",
    "extend_frontier",
    "key_id_of_public",
    "read_tree_state",
    "tree_path_for",
    "write_tree_state",
]

MAX_TREE_BYTES = 16 * 1024
_READ_CHUNK = 1 << 20


def tree_path_for(path: Path) -> Path:
    """``<log>.tree`` next to the log."""
    return path.with_name(path.name + ".tree")


class _TreeFile(BaseModel):
    """The cache file: the frontier of records ``[0, size)`` and where record ``size`` starts."""

    model_config = WIRE_CONFIG

    size: int = Field(ge=0, lt=1 << 63)
    offset: int = Field(ge=0, lt=1 << 63)
    hashes: list[str] = Field(max_length=64)


@dataclass(frozen=True)
class TreeState:
    """The frontier of the first ``frontier.size`` records; the next record starts at ``offset``."""

    offset: int
    frontier: Frontier

    def to_json(self) -> bytes:
        hashes = [base64.b64encode(h).decode("ascii") for h in self.frontier.hashes]
        model = _TreeFile(size=self.frontier.size, offset=self.offset, hashes=hashes)
        return model.model_dump_json().encode("utf-8") + b"\n"

    @classmethod
    def from_json(cls, raw: bytes) -> TreeState:
        """Parse a cache or anchor state; raises :class:`audit.ProofError` if it is not one."""
        try:
            model = _TreeFile.model_validate(load_json(raw, max_bytes=MAX_TREE_BYTES))
            hashes = [base64.b64decode(h, validate=True) for h in model.hashes]
        except (JsonInputError, ValidationError, ValueError):
            raise ProofError("frontier-malformed", "not a tree state file") from None
        return cls(model.offset, Frontier(model.size, hashes))


def read_tree_state(path: Path) -> TreeState | None:
    """The cached state, or ``None`` when there is none or it does not parse."""
    try:
        with tree_path_for(path).open("rb") as handle:
            return TreeState.from_json(handle.read(MAX_TREE_BYTES + 1))
    except (OSError, ProofError):
        return None


def write_tree_state(path: Path, state: TreeState) -> None:
    """Replace the cache atomically; it is only a cache, so a failure is ignored."""
    target = tree_path_for(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, state.to_json())
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def extend_frontier(fd: int, frontier: Frontier, start: int, end: int) -> Frontier:
    """``frontier`` extended by the lines in bytes ``[start, end)`` of ``fd``.

    Every line must end with LF; raises :class:`LogLineError` (``torn-line``) otherwise.
    """
    result = frontier.copy()
    pending = b""
    offset = start
    while offset < end:
        chunk = pread_exact(fd, min(_READ_CHUNK, end - offset), offset)
        if not chunk:
            break
        offset += len(chunk)
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        for line in lines:
            result.append(leaf_hash(line))
    if pending or offset < end:
        raise LogLineError("torn-line", "a line in the tree range has no line feed")
    return result


def key_id_of_public(public: bytes, keys: Mapping[str, Ed25519PublicKey]) -> str | None:
    """Our key id (``ed25519:…``) of the raw public key ``public``, if the keyring has it."""
    for key_id, key in keys.items():
        if key.public_bytes(Encoding.Raw, PublicFormat.Raw) == public:
            return key_id
    return None


@dataclass(frozen=True)
class HeadView:
    """A verified head of either kind: ``seq`` is the last record's.

    A checkpoint head has ``checkpoint`` and no ``hash``; a legacy JSON head has the
    last record's ``hash`` and no ``checkpoint``.
    """

    seq: int
    key_id: str
    hash: str | None
    checkpoint: Checkpoint | None

    @classmethod
    def parse(
        cls, raw: bytes, keys: Mapping[str, Ed25519PublicKey], origin: str | None
    ) -> HeadView:
        """Verify ``raw`` against ``keys``; raises :class:`LogLineError` with a head fault kind."""
        if raw[:1] == b"{":
            return cls._legacy(raw, keys)
        try:
            opened = open_checkpoint(raw, keys, origin=origin)
        except NoteError as exc:
            kind = {
                "no-trusted-signature": "head-unknown-key",
                "signature-invalid": "head-signature-invalid",
                "origin-mismatch": "head-origin-mismatch",
            }.get(exc.code, "head-malformed")
            raise LogLineError(kind, f"the head checkpoint is refused: {exc.detail}") from None
        checkpoint = opened.checkpoint
        if not checkpoint.origin.startswith(ORIGIN_PREFIX):
            raise LogLineError("head-origin-mismatch", "the head checkpoint is not of an audit log")
        if checkpoint.size == 0:
            raise LogLineError("head-malformed", "the head checkpoint names an empty log")
        key_id = key_id_of_public(opened.signer.public, keys) or "?"
        return cls(checkpoint.size - 1, key_id, None, checkpoint)

    @classmethod
    def _legacy(cls, raw: bytes, keys: Mapping[str, Ed25519PublicKey]) -> HeadView:
        try:
            head = AuditHead.model_validate(load_json(raw, max_bytes=MAX_TREE_BYTES * 4))
        except (JsonInputError, ValidationError):
            raise LogLineError("head-malformed", "the head file is not a valid head") from None
        public = keys.get(head.key_id)
        if public is None:
            raise LogLineError(
                "head-unknown-key", f"the head is signed by an unknown key {head.key_id}"
            )
        signature = b64url_decode(head.signature, 64)
        try:
            if signature is None:
                raise InvalidSignature
            public.verify(signature, head.signing_payload())
        except InvalidSignature:
            raise LogLineError(
                "head-signature-invalid", "the head's signature does not verify"
            ) from None
        return cls(head.seq, head.key_id, head.hash, None)
