"""Added cost per agent command of each network mode, against ``open`` (the floor).

All three sides run the spawn hook's real command (``/bin/bash -c <prefix> true``) for a
session's real plan, interleaved: ``open`` shares the host's network; ``off`` unshares it
and covers ``/run``; ``allowlist`` does the same, binds the proxy's socket in and starts the
bridge before the command. Goals: under 10 ms added at p50 for ``off``, under 20 ms for
``allowlist``. Beside them: a request the proxy refuses (``curl`` to a host not on the
list, through the bridge and the proxy and back), what a denied request costs.

    python bench/session/bench_network.py [--samples N]
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

from guard._policy.settings.models import NetworkSettings, SandboxSettings
from guard._sandbox import SpawnContext, plan, spawn
from guard._sandbox.proxy import NetworkProxy

GOAL_OFF_P50_MS = 10.0
GOAL_ALLOWLIST_P50_MS = 20.0
MODES = ("open", "off", "allowlist")


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def network(mode: str) -> NetworkSettings:
    return NetworkSettings.model_validate({"mode": mode, "allow": ("pypi.org",)})


def measure(samples: int) -> dict[str, Any]:
    """Milliseconds per ``true`` in each mode, and the added p50 of ``off`` and ``allowlist``."""
    with tempfile.TemporaryDirectory(prefix="pi-guard-bench-net-") as tmp:
        workspace, home = Path(tmp) / "workspace", Path(tmp) / "home"
        workspace.mkdir()
        home.mkdir(mode=0o700)
        proxy = NetworkProxy(Path(tmp) / "proxy.sock", ("pypi.org",))
        proxy.start()
        try:
            plans = {
                mode: plan(
                    workspace,
                    home,
                    settings=SandboxSettings(
                        network=NetworkSettings.model_validate(
                            {"mode": mode, "allow": ("pypi.org",)}
                        )
                    ),
                    settings_from="user",
                    proxy_socket=str(proxy.socket_path),
                )
                for mode in MODES
            }
            if any(p.state != "sandboxed" for p in plans.values()):
                return {"skipped": "the sandbox cannot start here"}
            env = dict(os.environ)

            def run(mode: str, command: str = "true") -> float:
                started = time.perf_counter_ns()
                wrapped = spawn(plans[mode], SpawnContext(command=command, cwd=str(workspace),
                                                          env=env))  # fmt: skip
                subprocess.run(["/bin/bash", "-c", wrapped.command], cwd=str(workspace),
                               env=wrapped.env, check=False, stdin=subprocess.DEVNULL,
                               capture_output=True)  # fmt: skip
                return (time.perf_counter_ns() - started) / 1e6

            for _ in range(max(10, samples // 10)):
                for mode in MODES:
                    run(mode)
            times: dict[str, list[float]] = {m: [] for m in MODES}
            for index in range(samples):
                order = MODES[index % 3 :] + MODES[: index % 3]
                for mode in order:
                    times[mode].append(run(mode))
            refused = [run("allowlist", "curl -s -m 5 http://evil.example/") for _ in range(10)]
        finally:
            proxy.stop()

    def row(values: list[float]) -> dict[str, float]:
        return {"p50": round(statistics.median(values), 3),
                "p95": round(_percentile(values, 0.95), 3)}  # fmt: skip

    floor = statistics.median(times["open"])
    added = {m: round(statistics.median(times[m]) - floor, 3) for m in ("off", "allowlist")}
    return {
        **{m: row(times[m]) for m in MODES},
        "added": added,
        "refusedRequest": row(refused),
        "goalOffUnder10ms": added["off"] < GOAL_OFF_P50_MS,
        "goalAllowlistUnder20ms": added["allowlist"] < GOAL_ALLOWLIST_P50_MS,
        "samples": samples,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=150)
    args = parser.parse_args()
    print(json.dumps(measure(args.samples), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
