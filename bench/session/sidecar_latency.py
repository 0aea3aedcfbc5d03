"""Added latency of the guard on a pi tool call, measured through the real sidecar pipe.

One sidecar process (``pi-guard serve`` in a temporary home), one pipe, interleaved samples:

* ``bare``: ``ping``, a JSON-RPC round trip that does nothing (the floor of any sidecar call);
* ``safe``: ``evaluate`` of a local-safe ``read`` (what every ordinary tool call pays);
* ``confirmed``: ``evaluate`` + ``record`` of a destructive ``bash`` (human time excluded;
  ``record`` appends to the audit log with ``fsync``, so this one is disk-bound).

Prints p50/p99 of each, the guard's added latency over the bare round trip, and the ratio.
Goal: safe-call overhead p99 under 1 ms.

    python bench/session/sidecar_latency.py [--samples N] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SERVE = (
    "import pathlib, sys\n"
    "from guard._sidecar.handlers.methods import serve\n"
    "sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer, home=pathlib.Path(sys.argv[1])))\n"
)


class Pipe:
    def __init__(self, home: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(home)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.next_id += 1
        line = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.proc.stdin.write(json.dumps(line).encode() + b"\n")
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def timed(pipe: Pipe, calls: list[tuple[str, dict[str, Any]]]) -> float:
    started = time.perf_counter_ns()
    for method, params in calls:
        pipe.call(method, params)
    return (time.perf_counter_ns() - started) / 1e6


def measure(samples: int, confirmed_samples: int) -> dict[str, Any]:
    """Run one sidecar in a temporary home and return the latency summary (milliseconds)."""
    with tempfile.TemporaryDirectory(prefix="pi-guard-bench-") as tmp:
        project = Path(tmp) / "project"
        (project / "build").mkdir(parents=True)
        (project / "README.md").write_text("bench\n")
        pipe = Pipe(Path(tmp) / "home")
        cwd = str(project)
        safe = {"toolName": "read", "input": {"path": "README.md"}, "cwd": cwd}
        risky = {"toolName": "bash", "input": {"command": "rm -rf build"}, "cwd": cwd}
        try:
            for _ in range(200):  # warm-up: imports, caches, the first audit appends
                pipe.call("ping", {})
                pipe.call("evaluate", safe)
            bare: list[float] = []
            evaluate: list[float] = []
            for _ in range(samples):
                bare.append(timed(pipe, [("ping", {})]))
                evaluate.append(timed(pipe, [("evaluate", safe)]))
            confirmed: list[float] = []
            for _ in range(confirmed_samples):
                confirmed.append(
                    timed(pipe, [("evaluate", risky), ("record", {**risky, "confirmed": True})])
                )
        finally:
            pipe.close()

    def row(values: list[float]) -> dict[str, float]:
        return {
            "p50": round(statistics.median(values), 4),
            "p99": round(percentile(values, 0.99), 4),
        }

    result: dict[str, Any] = {
        "unitMs": True,
        "bare": row(bare),
        "safe": row(evaluate),
        "confirmed": row(confirmed),
        "safeOverhead": {
            "p50": round(statistics.median(evaluate) - statistics.median(bare), 4),
            "p99": round(percentile(evaluate, 0.99) - percentile(bare, 0.99), 4),
        },
        "confirmedOverhead": {
            # Two round trips: subtract two bare ones.
            "p50": round(statistics.median(confirmed) - 2 * statistics.median(bare), 4),
            "p99": round(percentile(confirmed, 0.99) - 2 * percentile(bare, 0.99), 4),
        },
        "ratio": {
            "safeP50": round(statistics.median(evaluate) / statistics.median(bare), 2),
            "safeP99": round(percentile(evaluate, 0.99) / percentile(bare, 0.99), 2),
        },
        "samples": {"bare": len(bare), "safe": len(evaluate), "confirmed": len(confirmed)},
    }
    result["goalSafeOverheadP99Under1ms"] = result["safeOverhead"]["p99"] < 1.0
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000, help="safe/bare samples")
    parser.add_argument("--confirmed-samples", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.samples, args.confirmed_samples)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print("guard latency through the sidecar pipe (ms)")
    print(f"  {'':<22}{'p50':>9}{'p99':>9}")
    for name, key in (
        ("bare round trip", "bare"),
        ("safe call (evaluate)", "safe"),
        ("confirmed (eval+record)", "confirmed"),
        ("safe overhead", "safeOverhead"),
        ("confirmed overhead", "confirmedOverhead"),
    ):
        print(f"  {name:<22}{result[key]['p50']:>9.3f}{result[key]['p99']:>9.3f}")
    ratio = result["ratio"]
    print(f"  ratio safe/bare: p50 {ratio['safeP50']}x, p99 {ratio['safeP99']}x")
    verdict = "met" if result["goalSafeOverheadP99Under1ms"] else "NOT met"
    print(f"  goal (safe overhead p99 < 1 ms): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
