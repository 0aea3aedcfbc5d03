"""In-process, durable: ``record`` and ``consume`` against their floors, and the JWT peer.

All ops run interleaved, one of each per round, in one temp directory on one disk:

* ours: ``Guard.record`` (evaluate, mint, sign, audit append) and ``Guard.consume``
  (evaluate, parse, verify, checks, ledger insert, audit append);
* floors: see :mod:`floors`;
* peer: what a user would pick instead: a JWT (PyJWT, EdDSA, ``exp``, ``jti``) issued,
  verified, and its ``jti`` inserted into SQLite (same pragmas as our ledger) for replay;
  and the same peer plus an ``fsync``-ed plain JSONL audit line per step (no chain, no
  signed head), which is the closest a user gets to what we do without our code.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from floors import Floors, RawLog, insert_once, open_ledger
from harness import Row, median_ms, percentile

from audit.wire import canonical_json
from guard import Guard

SECTION = "inprocess"
COMMAND = {"command": "rm -rf build"}
# The issue "a house a newcomer can live in": the one consume path is also the fast one.
GOAL_RECORD = 2.0  # record at most 2x its durable floor
GOAL_CONSUME = 2.0  # consume at most 2x its durable floor


class Peer:
    """JWT issue + verify + ``jti`` replay check in SQLite; optionally a plain JSONL audit."""

    def __init__(self, directory: Path, *, audited: bool) -> None:
        self.key = Ed25519PrivateKey.generate()
        self.public = self.key.public_key()
        name = "peer-audit" if audited else "peer"
        self.db = open_ledger(directory / f"{name}.sqlite3")
        self.log = RawLog(directory / f"{name}.jsonl") if audited else None
        self._fd = self.log.fd if self.log is not None else -1

    def _audit(self, event: dict[str, Any]) -> None:
        if self.log is not None:
            os.write(self._fd, json.dumps(event, separators=(",", ":")).encode() + b"\n")
            os.fsync(self._fd)

    def round_trip(self) -> None:
        now = int(time.time())
        jti = secrets.token_urlsafe(16)
        token = jwt.encode(
            {"jti": jti, "sub": "bash", "iat": now, "exp": now + 30}, self.key, algorithm="EdDSA"
        )
        self._audit({"event": "issued", "jti": jti, "exp": now + 30})
        claims = jwt.decode(
            token, self.public, algorithms=["EdDSA"], options={"require": ["exp", "jti"]}
        )
        if not insert_once(self.db, claims["jti"]):
            raise AssertionError("fresh jti replayed")
        self._audit({"event": "consumed", "jti": jti})

    def close(self) -> None:
        self.db.close()
        if self.log is not None:
            self.log.close()


def floor_payloads(guard: Guard, cwd: str) -> tuple[bytes, bytes, bytes]:
    """A real signing message, audit line and head, so the floors move the same bytes."""
    sample = guard.record("bash", COMMAND, cwd, confirmed=True)
    assert sample.envelope is not None
    details = sample.envelope.model_dump(mode="json")["details"]
    unsigned = {k: v for k, v in details.items() if k != "signature"}
    message = b"pi-operator-guard/evidence/v1\n" + canonical_json(unsigned)
    line = guard.audit.path.read_bytes().splitlines(keepends=True)[-1]
    return message, line, guard.audit.head_path.read_bytes()


def run(work: Path, rounds: int) -> tuple[list[Row], dict[str, Any]]:
    project = work / "project"
    (project / "build").mkdir(parents=True)
    guard = Guard.open(work / "home")
    cwd = str(project)
    try:
        message, line, head = floor_payloads(guard, cwd)
        floors = Floors(work, message, line, head)
        peer = Peer(work, audited=False)
        peer_audited = Peer(work, audited=True)
        pending: list[dict[str, Any]] = []

        def record() -> None:
            result = guard.record("bash", COMMAND, cwd, confirmed=True)
            assert result.envelope is not None
            pending.append(result.envelope.model_dump(mode="json"))

        def consume() -> None:
            result = guard.consume(pending.pop(), "bash", COMMAND, cwd)
            if result.decision != "consumed":
                raise AssertionError(result.summary)

        ops = {
            "record": record,
            "floor-record": floors.record,
            "consume": consume,
            "floor-consume": floors.consume,
            "peer": peer.round_trip,
            "peer-audited": peer_audited.round_trip,
        }
        _rounds(ops, max(20, rounds // 20))  # warm-up: caches, first allocations
        samples = _rounds(ops, rounds)
        floors.close()
        peer.close()
        peer_audited.close()
    finally:
        guard.close()

    med = {name: median_ms(values) for name, values in samples.items()}
    ours_pair = [r + c for r, c in zip(samples["record"], samples["consume"], strict=True)]
    floor_pair = [
        r + c for r, c in zip(samples["floor-record"], samples["floor-consume"], strict=True)
    ]
    pair = median_ms(ours_pair)
    rows = [
        Row(SECTION, "record (durable)", "ms", med["record"], med["floor-record"],
            "sign + line fsync + head replace", "lower", GOAL_RECORD),
        Row(SECTION, "consume (durable)", "ms", med["consume"], med["floor-consume"],
            "verify + sqlite FULL insert + audit append", "lower", GOAL_CONSUME),
        Row(SECTION, "record+consume vs JWT peer", "ms", pair, med["peer"],
            "PyJWT EdDSA issue+verify+jti insert", "lower", 1.0,
            note="the peer binds no fingerprint and keeps no audit trail"),
        Row(SECTION, "record+consume vs JWT peer + JSONL audit", "ms", pair,
            med["peer-audited"], "peer + 2 fsync'd plain JSONL lines", "lower", None),
        Row(SECTION, "JWT peer vs our floor", "ms", med["peer"], median_ms(floor_pair),
            "floor record + floor consume", "lower", None),
    ]  # fmt: skip
    detail = {
        name: {
            "medianMs": round(med[name], 4),
            "p90Ms": round(percentile(values, 0.9) * 1000, 4),
            "samples": len(values),
        }
        for name, values in samples.items()
    }
    return rows, detail


def profile(work: Path, rounds: int, top: int = 25) -> list[dict[str, Any]]:
    """cProfile of ``record`` + ``consume``: where the time above the floor goes."""
    import cProfile
    import pstats

    project = work / "project"
    (project / "build").mkdir(parents=True)
    cwd = str(project)
    with Guard.open(work / "home") as guard:

        def loop() -> None:
            for _ in range(rounds):
                rec = guard.record("bash", COMMAND, cwd, confirmed=True)
                assert rec.envelope is not None
                guard.consume(rec.envelope.model_dump(mode="json"), "bash", COMMAND, cwd)

        loop()  # warm-up
        profiler = cProfile.Profile()
        profiler.runcall(loop)
    stats = pstats.Stats(profiler)
    rows = []
    for (filename, line, name), (_, calls, tottime, cumtime, _) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append(
            {
                "function": f"{Path(filename).name}:{line}({name})",
                "calls": calls,
                "tottimeMsPerRound": round(tottime * 1000 / rounds, 4),
                "cumtimeMsPerRound": round(cumtime * 1000 / rounds, 4),
            }
        )
    rows.sort(key=lambda row: row["tottimeMsPerRound"], reverse=True)
    return rows[:top]


def _rounds(ops: dict[str, Callable[[], None]], rounds: int) -> dict[str, list[float]]:
    """Time every op once per round; groups rotate, ops inside a group keep their order.

    A consume must find the envelope its round's record minted, so record and consume
    form one group (as do the two floor ops).
    """
    groups = [["record", "consume"], ["floor-record", "floor-consume"], ["peer"], ["peer-audited"]]
    timings: dict[str, list[float]] = {name: [] for name in ops}
    for index in range(rounds):
        shift = index % len(groups)
        for group in groups[shift:] + groups[:shift]:
            for name in group:
                started = time.perf_counter()
                ops[name]()
                timings[name].append(time.perf_counter() - started)
    return timings
