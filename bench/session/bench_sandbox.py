"""Added latency of the OS sandbox per agent bash call, against an unsandboxed ``bash -c``.

Both sides are spawned exactly the way pi's bash tool spawns a command (``/bin/bash -c
<command>`` from a Python ``subprocess``, wait for exit), interleaved in one run:

* floor: ``/bin/bash -c true`` (what an unsandboxed call costs);
* ours: ``/bin/bash -c 'exec bwrap … -- /bin/bash -c true'``, the spawn hook's output for the
  session's real plan (a temporary workspace and guard home; this interpreter's install
  paths protected), so the outer shell, bwrap's namespaces and mounts and the inner shell are
  all counted.

Reports p50 and p95 of both, the added latency and the ratio. Goal: under 10 ms added at p50.

    python bench/session/bench_sandbox.py [--samples N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from guard._sandbox import SpawnContext, plan, spawn

GOAL_ADDED_P50_MS = 10.0


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _once(command: str, cwd: str, env: dict[str, str]) -> float:
    started = time.perf_counter_ns()
    subprocess.run(
        ["/bin/bash", "-c", command], cwd=cwd, env=env, check=True, stdin=subprocess.DEVNULL
    )
    return (time.perf_counter_ns() - started) / 1e6


def measure(samples: int) -> dict[str, Any]:
    """Interleaved samples of both spawns; milliseconds."""
    with tempfile.TemporaryDirectory(prefix="pi-guard-bench-sandbox-") as tmp:
        workspace = Path(tmp) / "workspace"
        home = Path(tmp) / "home"
        workspace.mkdir()
        home.mkdir(mode=0o700)
        (home / "signing.key").write_text("bench\n")
        session = plan(workspace, home)
        if session.state != "sandboxed":
            return {"skipped": f"sandbox {session.state}: {session.message}"}
        env = dict(os.environ)
        wrapped = spawn(session, SpawnContext(command="true", cwd=str(workspace), env=env))
        cwd = str(workspace)
        for _ in range(max(5, samples // 20)):  # warm-up: page cache, the binaries
            _once("true", cwd, env)
            _once(wrapped.command, cwd, wrapped.env)
        bare: list[float] = []
        boxed: list[float] = []
        for index in range(samples):
            if index % 2:  # alternate which goes first
                bare.append(_once("true", cwd, env))
                boxed.append(_once(wrapped.command, cwd, wrapped.env))
            else:
                boxed.append(_once(wrapped.command, cwd, wrapped.env))
                bare.append(_once("true", cwd, env))
        mounts = sum(1 for part in session.argv or () if part.startswith("--") and "bind" in part)

    def row(values: list[float]) -> dict[str, float]:
        return {
            "p50": round(statistics.median(values), 4),
            "p95": round(_percentile(values, 0.95), 4),
        }

    result: dict[str, Any] = {
        "unitMs": True,
        "bare": row(bare),
        "sandboxed": row(boxed),
        "added": {
            "p50": round(statistics.median(boxed) - statistics.median(bare), 4),
            "p95": round(_percentile(boxed, 0.95) - _percentile(bare, 0.95), 4),
        },
        "ratio": {
            "p50": round(statistics.median(boxed) / statistics.median(bare), 2),
            "p95": round(_percentile(boxed, 0.95) / _percentile(bare, 0.95), 2),
        },
        "samples": samples,
        "bindMounts": mounts,
        "argvLength": len(session.argv or ()),
    }
    result["goalAddedP50Under10ms"] = result["added"]["p50"] < GOAL_ADDED_P50_MS
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.samples)
    if args.json or "skipped" in result:
        print(json.dumps(result, indent=2))
        return 0
    print("agent bash call, spawn to exit (ms)")
    print(f"  {'':<26}{'p50':>9}{'p95':>9}")
    for name, key in (
        ("bash -c true", "bare"),
        ("sandboxed bash -c true", "sandboxed"),
        ("added by the sandbox", "added"),
    ):
        print(f"  {name:<26}{result[key]['p50']:>9.3f}{result[key]['p95']:>9.3f}")
    print(f"  ratio: p50 {result['ratio']['p50']}x, p95 {result['ratio']['p95']}x")
    verdict = "met" if result["goalAddedP50Under10ms"] else "NOT met"
    print(f"  goal (added p50 < {GOAL_ADDED_P50_MS:g} ms): {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
