"""The appender's start-up integrity check against the floor loop, with and without an anchor.

Opening a log checks every line up to its signed head against the head (``AuditLog.open``;
the sidecar does it once per session start). For each size a signed log is generated
(:mod:`loggen`) and opened, against the floor loop that reads each line and SHA-256s it
(:func:`floors.floor_readline_sha256`) on the same file, alternating. Then the same log is
opened with an anchor directory holding a checkpoint ``ANCHOR_BEHIND`` records before its
end: only those are read, so that row must stay far below the floor. Files live in the
temp directory only.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from floors import floor_readline_sha256
from harness import Row
from loggen import generate, key_id_of

from audit.log import AuditLog
from audit.tlog import AnchorDir, open_checkpoint

SECTION = "startup"
ANCHOR_BEHIND = 1_000


class _Signer:
    """Opening signs nothing; the appender still wants its signer."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public_key: Ed25519PublicKey = key.public_key()
        self.key_id = key_id_of(self.public_key)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message)


def _open_seconds(path: Path, signer: _Signer, anchors: AnchorDir | None) -> float:
    keys = {signer.key_id: signer.public_key}
    started = time.perf_counter()
    AuditLog.open(path, signer, keys, anchors=anchors).close()
    return time.perf_counter() - started


def run(work: Path, sizes: list[int]) -> tuple[list[Row], dict[str, Any]]:
    key = Ed25519PrivateKey.generate()
    signer = _Signer(key)
    keys = {signer.key_id: signer.public_key}
    rows: list[Row] = []
    detail: dict[str, Any] = {"anchorBehind": ANCHOR_BEHIND}
    for size in sorted(sizes):
        path = work / f"audit-{size}.jsonl"
        nbytes, anchored = generate(path, size, key, mark=size - ANCHOR_BEHIND)
        assert anchored is not None
        note, state = anchored
        anchors = AnchorDir(work / f"anchors-{size}")
        anchors.add(note, open_checkpoint(note, keys).checkpoint, state)
        repeats = 2 if size >= 500_000 else 3
        full: list[float] = []
        from_anchor: list[float] = []
        floor: list[float] = []
        for _ in range(repeats):
            full.append(_open_seconds(path, signer, None))
            from_anchor.append(_open_seconds(path, signer, anchors))
            started = time.perf_counter()
            if floor_readline_sha256(path) != size:
                raise AssertionError("the floor loop did not read every line")
            floor.append(time.perf_counter() - started)
        ours, anchor_s, floor_s = min(full), min(from_anchor), min(floor)
        detail[str(size)] = {
            "bytes": nbytes,
            "openSeconds": round(ours, 4),
            "openFromAnchorSeconds": round(anchor_s, 4),
            "floorSeconds": round(floor_s, 4),
            "repeats": repeats,
        }
        rows += [
            Row(SECTION, f"open (integrity check), {size:,} records, no anchor", "s", ours,
                floor_s, "read-line + SHA-256 loop, whole log", "lower",
                note=f"{ours * 1000:.0f} ms vs {floor_s * 1000:.0f} ms, {nbytes / 2**20:.0f} MiB"),
            Row(SECTION, f"open (integrity check), {size:,} records, anchored "
                f"{ANCHOR_BEHIND:,} back", "s", anchor_s, floor_s,
                "read-line + SHA-256 loop, whole log", "lower",
                note=f"{anchor_s * 1000:.1f} ms"),
        ]  # fmt: skip
        path.unlink()
        path.with_name(path.name + ".head").unlink()
    return rows, detail
