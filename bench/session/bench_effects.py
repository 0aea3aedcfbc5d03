"""Added cost of the effects review per agent command, against today's sandbox.

Both sides run the spawn hook's real command (``/bin/bash -c <prefix> <command>``) for a
session's real plan, interleaved: the sandbox writing the workspace directly (the floor),
and the sandbox writing it through the command's own copy-on-write layer, followed by the
review the sidecar does when the command ends (read the layer, judge, apply). Two commands:

* ``true``: the fixed cost of a layer (user and mount namespace, overlay mount, review of
  an empty layer). Goal: under 15 ms added at p50;
* writing 10,000 small files into a new directory: the cost per byte written (reported
  as a ratio of the p50s).

    python bench/session/bench_effects.py [--samples N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from guard._effects import Reviewer
from guard._sandbox import SpawnContext, plan, spawn
from guard._sandbox.model import LAYER_ENV

GOAL_ADDED_P50_MS = 15.0
MANY_FILES = "mkdir out && i=0; while [ $i -lt 10000 ]; do echo $i > out/f$i; i=$((i+1)); done"


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(samples: int, *, many_samples: int = 5) -> dict[str, Any]:
    """Milliseconds: no-op and 10,000-file commands, with and without a layer."""
    with tempfile.TemporaryDirectory(prefix="pi-guard-bench-effects-") as tmp:
        workspace = Path(tmp) / "workspace"
        home = Path(tmp) / "home"
        layers = home / "layers" / "bench"
        workspace.mkdir()
        home.mkdir(mode=0o700)
        direct = plan(workspace, home)
        layered = plan(workspace, home, layers=str(layers))
        if direct.state != "sandboxed" or layered.effects != "review":
            return {"skipped": f"no effects review here: {layered.notes}"}
        reviewer = Reviewer(layers)
        env = dict(os.environ)
        cwd = str(workspace)

        def run_direct(command: str) -> float:
            started = time.perf_counter_ns()
            wrapped = spawn(direct, SpawnContext(command=command, cwd=cwd, env=env))
            subprocess.run(["/bin/bash", "-c", wrapped.command], cwd=cwd, env=wrapped.env,
                           check=True, stdin=subprocess.DEVNULL)  # fmt: skip
            return (time.perf_counter_ns() - started) / 1e6

        def run_layered(command: str) -> float:
            started = time.perf_counter_ns()
            layer = uuid.uuid4().hex
            wrapped = spawn(layered, SpawnContext(command=command, cwd=cwd,
                                                  env={**env, LAYER_ENV: layer}))  # fmt: skip
            subprocess.run(["/bin/bash", "-c", wrapped.command], cwd=cwd, env=wrapped.env,
                           check=True, stdin=subprocess.DEVNULL)  # fmt: skip
            reviewer.review(layer, cwd, protected=lambda _p: False,
                            mount_points=layered.mount_points)  # fmt: skip
            return (time.perf_counter_ns() - started) / 1e6

        def reset() -> None:
            shutil.rmtree(workspace / "out", ignore_errors=True)

        for _ in range(max(10, samples // 10)):  # warm-up: page cache, the binaries
            run_direct("true"), run_layered("true")
        plain: list[float] = []
        reviewed: list[float] = []
        for index in range(samples):
            first, second = (run_direct, run_layered) if index % 2 else (run_layered, run_direct)
            for runner in (first, second):
                (plain if runner is run_direct else reviewed).append(runner("true"))
        many_plain: list[float] = []
        many_reviewed: list[float] = []
        for _ in range(many_samples):
            reset()
            many_plain.append(run_direct(MANY_FILES))
            reset()
            many_reviewed.append(run_layered(MANY_FILES))
            assert len(os.listdir(workspace / "out")) == 10_000  # applied, all of it
        reset()

    def row(values: list[float]) -> dict[str, float]:
        return {
            "p50": round(statistics.median(values), 3),
            "p95": round(_percentile(values, 0.95), 3),
        }

    added = statistics.median(reviewed) - statistics.median(plain)
    result: dict[str, Any] = {
        "direct": row(plain),
        "layered": row(reviewed),
        "added": {"p50": round(added, 3)},
        "manyFiles": {
            "direct": row(many_plain),
            "layered": row(many_reviewed),
            "ratioP50": round(statistics.median(many_reviewed) / statistics.median(many_plain), 2),
        },
        "samples": samples,
    }
    result["goalAddedP50Under15ms"] = added < GOAL_ADDED_P50_MS
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.samples)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
