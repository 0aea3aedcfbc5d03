"""``audit verify`` throughput against the floor loop, its growth, and resuming from an anchor.

For each size a signed log is generated (:mod:`loggen`), then ``verify_log`` (one worker
process per core, as ``pi-guard audit verify`` runs it) and the floor loop (read each
line, SHA-256 it: :func:`floors.floor_readline_sha256`) read the same file from the page
cache, alternating. Then, for old parts of growing size, a log is verified from an
anchored checkpoint with the same number of new records after it: the cost must stay
flat. Files live in the temp directory only.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from floors import floor_readline_sha256
from harness import Row
from loggen import generate, key_id_of

from audit.verify import verify_log

SECTION = "verify"
WORKERS = os.cpu_count() or 1
GOAL_RECORDS_PER_SECOND = 250_000
NEW_RECORDS = 10_000


def _measure(path: Path, keys: dict[str, Any], records: int, repeats: int) -> tuple[float, float]:
    """Best-of-``repeats`` seconds for ``verify_log`` and for the floor loop."""
    ours: list[float] = []
    floor: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = verify_log(path, keys, workers=WORKERS)
        ours.append(time.perf_counter() - started)
        if result.decision != "intact" or result.records != records:
            raise AssertionError(f"generated log does not verify: {result.detail}")
        started = time.perf_counter()
        count = floor_readline_sha256(path)
        floor.append(time.perf_counter() - started)
        if count != records:
            raise AssertionError(f"floor loop read {count} of {records} lines")
    return min(ours), min(floor)


def _incremental(work: Path, keys: dict[str, Any], key: Ed25519PrivateKey, old: int) -> float:
    """Best-of-3 seconds to verify ``NEW_RECORDS`` records after an anchor at ``old``."""
    path = work / f"audit-resume-{old}.jsonl"
    _, anchored = generate(path, old + NEW_RECORDS, key, mark=old)
    assert anchored is not None
    note, state = anchored
    times = []
    for _ in range(3):
        started = time.perf_counter()
        result = verify_log(path, keys, against=note, resume=state)
        times.append(time.perf_counter() - started)
        if result.decision != "intact" or result.records != NEW_RECORDS + 1:
            raise AssertionError(f"resumed verify: {result.decision} {result.records}")
    path.unlink()
    path.with_name(path.name + ".head").unlink()
    return min(times)


def run(work: Path, sizes: list[int]) -> tuple[list[Row], dict[str, Any]]:
    key = Ed25519PrivateKey.generate()
    keys = {key_id_of(key.public_key()): key.public_key()}
    per_record: dict[int, tuple[float, float]] = {}
    detail: dict[str, Any] = {"workers": WORKERS}
    rows: list[Row] = []
    largest = max(sizes)
    for size in sorted(sizes):
        path = work / f"audit-{size}.jsonl"
        started = time.perf_counter()
        nbytes, _ = generate(path, size, key)
        generated = time.perf_counter() - started
        repeats = 2 if size >= 500_000 else 3
        ours, floor = _measure(path, keys, size, repeats)
        per_record[size] = (ours / size, floor / size)
        detail[str(size)] = {
            "bytes": nbytes,
            "generateSeconds": round(generated, 3),
            "verifySeconds": round(ours, 4),
            "floorSeconds": round(floor, 4),
            "verifyRecordsPerSecond": round(size / ours),
            "floorRecordsPerSecond": round(size / floor),
            "repeats": repeats,
        }
        rows.append(
            Row(
                SECTION,
                f"audit verify, {size:,} records ({WORKERS} processes)",
                "rec/s",
                size / ours,
                size / floor,
                "read-line + SHA-256 loop",
                "higher",
                0.5 if size == largest else None,
                note=f"{ours:.2f} s vs {floor:.2f} s, {nbytes / 2**20:.0f} MiB; "
                f"goal {GOAL_RECORDS_PER_SECOND:,} rec/s: {size / ours:,.0f}",
            )
        )
        path.unlink()
        path.with_name(path.name + ".head").unlink()
    smallest = min(sizes)
    if largest != smallest:
        # Linear cost means the same time per record at every size.
        rows.append(
            Row(
                SECTION,
                f"verify us/record at {largest:,} vs at {smallest:,}",
                "us",
                per_record[largest][0] * 1e6,
                per_record[smallest][0] * 1e6,
                f"verify us/record at {smallest:,}",
                "lower",
                1.5,
                note="1.0 is perfectly linear; floor loop: "
                f"{per_record[largest][1] * 1e6:.2f} vs {per_record[smallest][1] * 1e6:.2f} us",
            )
        )
        # From an anchored checkpoint only the new records are read: flat in the old part.
        small_old = _incremental(work, keys, key, smallest)
        large_old = _incremental(work, keys, key, largest)
        detail["resume"] = {
            "newRecords": NEW_RECORDS,
            f"after{smallest}": round(small_old, 4),
            f"after{largest}": round(large_old, 4),
        }
        rows.append(
            Row(
                SECTION,
                f"verify {NEW_RECORDS:,} new records after {largest:,} anchored",
                "s",
                large_old,
                small_old,
                f"the same after {smallest:,} anchored",
                "lower",
                1.5,
                note="1.0 is flat: the anchored part is not read again",
            )
        )
    return rows, detail
