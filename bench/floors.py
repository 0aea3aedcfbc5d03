"""The physical floors: the least work any durable design with the same guarantees must do.

Nothing here checks anything; these are the raw system calls and primitives our code is
measured against:

* a durable append: ``write`` one line with ``O_APPEND``, ``fsync``; then replace the head
  (temp file, ``write``, ``fsync``, ``rename``, ``fsync`` of the directory);
* the single-use insert: one SQLite ``INSERT`` in WAL mode at ``synchronous=FULL``;
* one Ed25519 sign or verify (pyca ``cryptography``).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import secrets
import sqlite3
from collections.abc import Callable
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

LEDGER_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS consumed (evidence_id TEXT PRIMARY KEY, "
    "expires_at_ms INTEGER NOT NULL, consumed_at_ms INTEGER NOT NULL) WITHOUT ROWID"
)


class RawLog:
    """A line log with a replaced head file and nothing else: no chain, no checks.

    ``locked=True`` takes an exclusive ``flock`` around each append, as several
    processes appending to one log must.
    """

    def __init__(self, path: Path, *, locked: bool = False) -> None:
        self.path = path
        self.head = path.with_name(path.name + ".head")
        self.locked = locked
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        self.dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self._tag = f"{os.getpid()}.{secrets.token_hex(4)}"
        self._n = 0

    def append(
        self, line: bytes, head: bytes, sign: Callable[[bytes], bytes] | None = None
    ) -> None:
        """Append ``line`` and replace the head; ``sign`` (the head's signature) runs under
        the lock, where a real appender must sign: the head names the record just written.
        """
        if self.locked:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            if sign is not None:
                sign(head)
            os.write(self.fd, line)
            os.fsync(self.fd)
            self._n += 1
            tmp = self.path.with_name(f".{self.head.name}.{self._tag}.{self._n}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                os.write(fd, head)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self.head)
            os.fsync(self.dir_fd)
        finally:
            if self.locked:
                fcntl.flock(self.fd, fcntl.LOCK_UN)

    def close(self) -> None:
        os.close(self.fd)
        os.close(self.dir_fd)


def open_ledger(path: Path) -> sqlite3.Connection:
    """A connection configured exactly like the guard's ledger (WAL, FULL, busy timeout)."""
    db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA busy_timeout=30000")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute(LEDGER_SCHEMA)
    return db


def insert_once(db: sqlite3.Connection, key: str) -> bool:
    cursor = db.execute(
        "INSERT INTO consumed (evidence_id, expires_at_ms, consumed_at_ms) VALUES (?, ?, ?) "
        "ON CONFLICT (evidence_id) DO NOTHING",
        (key, 1, 1),
    )
    return cursor.rowcount == 1


class Floors:
    """The floor operations of ``record`` and ``consume``, sized like the real thing.

    ``message`` is a real evidence signing message and ``line`` a real audit line, so
    the floor signs, verifies and writes the same number of bytes our code does.
    """

    def __init__(self, directory: Path, message: bytes, line: bytes, head: bytes) -> None:
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key()
        self.message = message
        self.signature = self.key.sign(message)
        self.line = line
        self.head = head
        self.log = RawLog(directory / "floor.jsonl")
        self.db = open_ledger(directory / "floor-ledger.sqlite3")

    def record(self) -> None:
        """One Ed25519 sign + one line append with ``fsync`` + the head replace."""
        self.key.sign(self.message)
        self.log.append(self.line, self.head)

    def consume(self) -> None:
        """One Ed25519 verify + one SQLite insert (``synchronous=FULL``) + one audit append.

        The audit append signs its head, as a signed-head log must.
        """
        self.public.verify(self.signature, self.message)
        if not insert_once(self.db, secrets.token_hex(16)):
            raise AssertionError("a fresh id was already in the floor ledger")
        self.log.append(self.line, self.head, self.key.sign)

    def close(self) -> None:
        self.log.close()
        self.db.close()


def floor_readline_sha256(path: Path) -> int:
    """The verify floor of issue 14: read each line and SHA-256 it, nothing else."""
    count = 0
    sha = hashlib.sha256
    with path.open("rb", buffering=1 << 20) as stream:
        for line in stream:
            sha(line).digest()
            count += 1
    return count
