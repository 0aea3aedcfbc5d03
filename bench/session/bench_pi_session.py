"""pi with the guard against pi alone, measured from outside (issue 41): section ``session``.

Paired, interleaved ``pi -p`` runs of a pinned pi against the scripted model on 127.0.0.1,
each pair once with the guard (a personal install in its own agent dir, its own guard home)
and once without (an agent dir with the same model and no extension), the order alternating
from pair to pair, in one project folder:

* ``none``: a prompt the model answers without a tool call;
* ``one``: one safe ``bash`` call (``echo hi``), then the answer;
* ``ten``: ten safe ``bash`` calls, one per turn, then the answer;
* ``reads``: ten ``read`` calls of a project file, one per turn (judged, not sandboxed).

Per run: pi's wall time (start to exit); with the guard also the time from pi's start to
the ``session.started`` record (its timestamp), the exit delay (pi's exit less the
``session.ended`` timestamp) and the sidecar's peak resident memory (``VmHWM``, read while it
runs); for both, the time from pi's start to the model's first request (what pi's start
costs before the model can begin). The latency of a call inside the session is what pi
takes between the model's answer naming the call and its next request (the scripted model
notes both moments): the guard's ``ten`` (and ``reads``) calls against pi alone's. Figures are
medians over the pairs (p50 and p99 over the calls).

Goals (the current pi; the legacy pi is reported): no tool call <= 1.3x pi alone, one safe
call <= 1.5x, exit delay <= 150 ms, a safe call inside a session adds <= 15 ms at p50.

    python bench/session/bench_pi_session.py [--pairs N] [--flavors current,legacy] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from guard._pi import warm_server
from tools.pi.harness import (
    Flavor,
    PinnedPi,
    ensure_pi,
    find_repo_root,
    install_guard,
    offline_env,
    sidecar_pids,
    write_agent_dir,
)
from tools.pi.scripted_model import MODEL_ID, PROVIDER, ScriptedModelServer, ToolCall, Turn

GOAL_NO_CALL_RATIO = 1.3
GOAL_ONE_CALL_RATIO = 1.5
GOAL_EXIT_DELAY_MS = 150.0
GOAL_ADDED_CALL_P50_MS = 15.0
CALLS = 10


def _bash(command: str) -> ToolCall:
    return ToolCall("bash", {"command": command})


SCENARIOS: dict[str, list[Turn]] = {
    "none": [Turn(text="done")],
    "one": [Turn(tool_calls=(_bash("echo hi"),)), Turn(text="done")],
    "ten": [Turn(tool_calls=(_bash(f"echo {n}"),)) for n in range(CALLS)] + [Turn(text="done")],
    "reads": [Turn(tool_calls=(ToolCall("read", {"path": "README.md"}),)) for _ in range(CALLS)]
    + [Turn(text="done")],
}


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


@dataclass
class Run:
    """One ``pi -p`` run: its wall time and, with the guard, what the log and /proc say."""

    wall_ms: float
    gaps_ms: list[float]
    first_request_ms: float
    started_ms: float | None = None
    exit_delay_ms: float | None = None
    peak_kib: int | None = None
    after_answer_ms: float | None = None  # pi's end less the moment its last answer came


@dataclass
class Side:
    """pi alone or pi with the guard: its agent dir, and the guard home when guarded."""

    agent_dir: Path
    home: Path | None = None
    seen: int = field(default=0)  # audit lines already read


def _peak_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _forked(home: Path | None) -> list[int]:
    """The sidecars the home's fork server runs (the warm start: they are its children)."""
    server = None if home is None else warm_server(home).pid
    if server is None:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if (
                entry.name.isdigit()
                and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == server
            ):
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def _watch_sidecar(pi: subprocess.Popen[bytes], peaks: dict[int, int], home: Path | None) -> None:
    """Until pi ends: the peak memory of each sidecar it runs (the high-water mark): pi's
    child, or the one the home's fork server forked for it (its launcher is pi's child)."""
    while pi.poll() is None:
        for pid in [*sidecar_pids(pi.pid), *_forked(home)]:
            kib = _peak_kib(pid)
            if kib is not None:
                peaks[pid] = max(peaks.get(pid, 0), kib)
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _stamp(record: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(record["ts"]).replace("Z", "+00:00")).timestamp()


def run_once(
    pi: PinnedPi, side: Side, project: Path, server: ScriptedModelServer, scenario: str
) -> Run:
    before = len(server.times)
    started_wall, started = time.time(), time.monotonic()
    process = subprocess.Popen(
        pi.command("-p", "--provider", PROVIDER, "--model", MODEL_ID, "--no-session",
                   f"scenario:{scenario}"),
        cwd=project,
        env=pi.env(offline_env(side.agent_dir)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    peaks: dict[int, int] = {}
    # The same watcher for both sides (pi alone has no sidecar): the same load on the machine.
    watcher = threading.Thread(target=_watch_sidecar, args=(process, peaks, side.home), daemon=True)
    watcher.start()
    code = process.wait(timeout=300)
    ended = time.monotonic()
    wall_ms = (ended - started) * 1000
    ended_wall = time.time()
    watcher.join()
    if code != 0:
        raise RuntimeError(f"pi {pi.version} ended with {code} in scenario {scenario}")
    times = server.times[before:]
    gaps = [(times[i + 1][0] - times[i][1]) * 1000 for i in range(len(times) - 1)]
    run = Run(wall_ms=wall_ms, gaps_ms=gaps, first_request_ms=(times[0][0] - started) * 1000)
    run.after_answer_ms = (ended - times[-1][1]) * 1000
    if side.home is not None:
        # A sidecar still starting when pi ended finishes the session on its own.
        deadline = time.monotonic() + 30
        while True:
            log = side.home / "audit.jsonl"  # not there yet: the sidecar of the first run
            lines = log.read_text().splitlines() if log.exists() else []
            records = [json.loads(line) for line in lines[side.seen :] if line.endswith("}")]
            events = {r["event"]: r for r in records}
            if "session.ended" in events or time.monotonic() > deadline:
                break
            time.sleep(0.01)
        for pid in peaks:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.01)
        side.seen = len((side.home / "audit.jsonl").read_text().splitlines())
        if "session.started" not in events or "session.ended" not in events:
            raise RuntimeError(f"the guard logged no whole session in scenario {scenario}")
        run.started_ms = (_stamp(events["session.started"]) - started_wall) * 1000
        run.exit_delay_ms = (ended_wall - _stamp(events["session.ended"])) * 1000
        run.peak_kib = max(peaks.values(), default=None)
    return run


def _median(values: Sequence[float | int | None]) -> float:
    return float(statistics.median(v for v in values if v is not None))


def measure_pi(pi: PinnedPi, work: Path, server: ScriptedModelServer, pairs: int) -> dict[str, Any]:
    """``pairs`` interleaved pairs per scenario (after one warm-up pair) for one pinned pi."""
    project = work / "project"
    project.mkdir(parents=True)
    (project / "README.md").write_text("# bench project\n")
    alone = Side(write_agent_dir(work / "alone", server.base_url))
    guarded = Side(write_agent_dir(work / "guarded", server.base_url), work / "home")
    install_guard("global", project, guarded.agent_dir, force=True, home=guarded.home)
    runs: dict[str, dict[str, list[Run]]] = {s: {"alone": [], "guard": []} for s in SCENARIOS}
    for n in range(pairs + 1):
        for scenario in SCENARIOS:
            order = [("alone", alone), ("guard", guarded)]
            for name, side in order if n % 2 else order[::-1]:
                run = run_once(pi, side, project, server, scenario)
                if n:  # the first pair warms the disk cache and Python's bytecode
                    runs[scenario][name].append(run)
    result: dict[str, Any] = {"pi": pi.version, "flavor": pi.flavor, "pairs": pairs}
    # The warm start's fork server of the guarded home: its memory, then it is stopped (it
    # would wait out its idle time).
    server = warm_server(guarded.home) if guarded.home is not None else None
    if server is not None and server.pid is not None:
        result["forkServerRssMiB"] = (server.rss_kib or 0) / 1024
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.pid, signal.SIGTERM)
    for scenario, sides in runs.items():
        ours, floor = sides["guard"], sides["alone"]
        result[scenario] = {
            "aloneMs": _median([r.wall_ms for r in floor]),
            "guardMs": _median([r.wall_ms for r in ours]),
            "ratio": statistics.median(
                g.wall_ms / a.wall_ms for g, a in zip(ours, floor, strict=True)
            ),
            "firstRequestAloneMs": _median([r.first_request_ms for r in floor]),
            "firstRequestGuardMs": _median([r.first_request_ms for r in ours]),
            "startedMs": _median([r.started_ms for r in ours]),
            "exitDelayMs": _median([r.exit_delay_ms for r in ours]),
            "exitDelayMaxMs": max(r.exit_delay_ms or 0.0 for r in ours),
            # pi ended before session.ended: it did not wait for a sidecar still starting
            "endedBeforeSidecar": sum(1 for r in ours if (r.exit_delay_ms or 0.0) < 0),
            "afterAnswerAloneMs": _median([r.after_answer_ms for r in floor]),
            "afterAnswerGuardMs": _median([r.after_answer_ms for r in ours]),
            "sidecarPeakMiB": _median([r.peak_kib for r in ours]) / 1024,
        }
    for key, scenario in (("call", "ten"), ("read", "reads")):
        guard_gaps = [g for r in runs[scenario]["guard"] for g in r.gaps_ms[:CALLS]]
        alone_gaps = [g for r in runs[scenario]["alone"] for g in r.gaps_ms[:CALLS]]
        result[key] = {
            "guardP50Ms": percentile(guard_gaps, 0.5),
            "aloneP50Ms": percentile(alone_gaps, 0.5),
            "guardP99Ms": percentile(guard_gaps, 0.99),
            "aloneP99Ms": percentile(alone_gaps, 0.99),
            "addedP50Ms": percentile(guard_gaps, 0.5) - percentile(alone_gaps, 0.5),
            "addedP99Ms": percentile(guard_gaps, 0.99) - percentile(alone_gaps, 0.99),
            "calls": len(guard_gaps),
        }
    return result


def measure(
    work: Path, pairs: int, flavors: Sequence[Flavor] = ("current", "legacy")
) -> dict[str, Any]:
    """Every pinned pi of ``flavors`` (installed into the repository's .cache if missing)."""
    root = find_repo_root(Path(__file__).resolve().parent)
    results: dict[str, Any] = {}
    with ScriptedModelServer(SCENARIOS) as server:
        for flavor in flavors:
            pi = ensure_pi(root, flavor)
            results[flavor] = measure_pi(pi, work / flavor, server, pairs)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--flavors", default="current,legacy")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    flavors: list[Flavor] = [f for f in ("current", "legacy") if f in args.flavors.split(",")]
    with tempfile.TemporaryDirectory(prefix="pi-guard-bench-session-") as tmp:
        result = measure(Path(tmp), args.pairs, flavors)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
