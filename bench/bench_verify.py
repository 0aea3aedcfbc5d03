"""``audit verify`` throughput against the floor loop, and how its cost grows with the log.

For each size a signed log is generated (:mod:`loggen`), then ``verify_log`` and the floor
loop (read line, parse, canonicalize, SHA-256; :func:`floors.floor_verify_loop`) read the
same file from the page cache, alternating. The file lives in the temp directory only.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from floors import floor_verify_loop
from harness import Row
from loggen import generate, key_id_of

from audit import verify_log

SECTION = "verify"


def _measure(path: Path, keys: dict[str, Any], records: int, repeats: int) -> tuple[float, float]:
    """Best-of-``repeats`` seconds for ``verify_log`` and for the floor loop."""
    ours: list[float] = []
    floor: list[float] = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = verify_log(path, keys)
        ours.append(time.perf_counter() - started)
        if result.decision != "intact" or result.records != records:
            raise AssertionError(f"generated log does not verify: {result.detail}")
        started = time.perf_counter()
        count = floor_verify_loop(path)
        floor.append(time.perf_counter() - started)
        if count != records:
            raise AssertionError(f"floor loop read {count} of {records} lines")
    return min(ours), min(floor)


def run(work: Path, sizes: list[int]) -> tuple[list[Row], dict[str, Any]]:
    key = Ed25519PrivateKey.generate()
    keys = {key_id_of(key.public_key()): key.public_key()}
    per_record: dict[int, tuple[float, float]] = {}
    detail: dict[str, Any] = {}
    rows: list[Row] = []
    largest = max(sizes)
    for size in sorted(sizes):
        path = work / f"audit-{size}.jsonl"
        started = time.perf_counter()
        nbytes = generate(path, size, key)
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
                f"audit verify, {size:,} records",
                "rec/s",
                size / ours,
                size / floor,
                "read+parse+canonicalize+sha256 loop",
                "higher",
                0.5 if size == largest else None,
                note=f"{ours:.2f} s vs {floor:.2f} s, {nbytes / 2**20:.0f} MiB",
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
                f"{per_record[largest][1] * 1e6:.1f} vs {per_record[smallest][1] * 1e6:.1f} us",
            )
        )
    return rows, detail
