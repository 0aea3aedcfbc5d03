"""``make bench``: every figure as a ratio to a floor measured in the same run.

Sections (all by default), each a module of ``bench/evidence/`` (the first four and
``postgres``: recording and checking evidence against the storage floors) or of
``bench/session/`` (the rest: what an agent's tool call costs around it):

* ``inprocess``: durable ``record`` and ``consume`` against their floors, and the JWT peer;
* ``verify``: ``audit verify`` throughput on generated logs (10k, 100k, 1M records) against
  the read/parse/canonicalize/hash floor loop, and how its cost grows with the log;
* ``startup``: the appender's start-up integrity check (opening a log of 10k, 100k, 1M
  records), with and without an anchored checkpoint, against the read + SHA-256 floor loop;
* ``scaling``: consume with 1/2/4/8 processes on one ledger, audit append with 1/2/4/8
  appenders, each against the same floor run with as many processes;
* ``sidecar``: added latency of ``evaluate`` and ``evaluate + record`` through the real
  JSON-RPC pipe against a bare ``ping`` round trip;
* ``policy``: the policy engine's own benchmark (``bench_policy.py``), if present;
* ``sandbox``: added latency of the OS sandbox per agent bash call (``bench_sandbox.py``)
  against an unsandboxed ``bash -c true`` spawned the same way;
* ``effects``: added cost of a command's copy-on-write layer and its review
  (``bench_effects.py``), for a no-op and for 10,000 new files, against the sandbox
  writing the workspace directly;
* ``network``: added cost per agent command of the ``off`` and ``allowlist`` network modes
  (``bench_network.py``) against ``open``, and the round trip of a refused request;
* ``dialogs``: dialogs per task (``bench_dialogs.py``): the dialogs a scripted task of
  36 tool calls shows with scoped grants accepted against the same task without grants, and
  the near misses mixed into it that a grant covered (none may be); and five routine tasks
  in the real pinned pis (``bench_routine.py``, 32 calls): their dialogs (goal: at most 3)
  and those for recoverable work (goal: none);
* ``session``: pi with the guard against pi alone (``bench_pi_session.py``): paired,
  interleaved ``pi -p`` runs of the pinned pis with the scripted model on 127.0.0.1 (no tool
  call, one safe ``bash`` call, ten), the time to ``session.started``, the exit delay, the
  sidecar's peak memory and what a safe call adds inside a session; goals on the current pi;
* ``telemetry``: added latency per guarded call of the OpenTelemetry export, on against off
  (``bench_telemetry.py``), with a real OTLP receiver up, slow and down, calls back to back
  and paced; goal: added p99 (the median over adjacent off/on block pairs) under 1 ms;
* ``postgres``: the PostgreSQL ledger's consume latency and throughput with 1, 4 and 16
  clients against a bare ``INSERT`` with as many clients on the same throwaway server
  (``bench_postgres.py``).

Prints a table and writes the same rows as JSON to ``bench/results.json``. Everything it
writes besides that lives in a temporary directory that is removed at the end.

    python bench/run.py [--quick] [--sections inprocess,verify,...] [--work-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SESSION = HERE / "session"
# Run as a script: the helpers here and the sections' modules import each other by name.
for _folder in (HERE / "evidence", SESSION, HERE):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))

from harness import Row, machine, render  # noqa: E402

SECTIONS = (
    "inprocess",
    "verify",
    "startup",
    "scaling",
    "sidecar",
    "policy",
    "sandbox",
    "effects",
    "network",
    "dialogs",
    "session",
    "telemetry",
    "postgres",
)


def _sidecar_rows(samples: int, confirmed: int) -> tuple[list[Row], dict[str, Any]]:
    from sidecar_latency import measure

    result = measure(samples, confirmed)
    bare, safe, conf = result["bare"], result["safe"], result["confirmed"]
    over, cover = result["safeOverhead"], result["confirmedOverhead"]
    section = "sidecar"
    rows = [
        Row(section, "safe evaluate, p50", "ms", safe["p50"], bare["p50"],
            "bare ping round trip p50", "lower"),
        Row(section, "safe evaluate, p99", "ms", safe["p99"], bare["p99"],
            "bare ping round trip p99", "lower"),
        Row(section, "safe-call overhead (evaluate - ping), p99", "ms", over["p99"], bare["p99"],
            "bare ping round trip p99", "lower", goal_abs=1.0),
        Row(section, "evaluate + record, p50", "ms", conf["p50"], 2 * bare["p50"],
            "2 bare round trips p50", "lower",
            note=f"added latency p50 {cover['p50']:.3f} ms (record fsyncs the audit log)"),
        Row(section, "evaluate + record, p99", "ms", conf["p99"], 2 * bare["p99"],
            "2 bare round trips p99", "lower",
            note=f"added latency p99 {cover['p99']:.3f} ms"),
    ]  # fmt: skip
    return rows, result


def _policy_rows(rounds: int) -> tuple[list[Row], dict[str, Any]]:
    """The policy engine's benchmark, run in its own process (it changes ``HOME``)."""
    script = SESSION / "bench_policy.py"
    if not script.exists():
        return [], {"skipped": "bench/session/bench_policy.py not present"}
    done = subprocess.run(
        [sys.executable, str(script), "--rounds", str(rounds), "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        return [], {"failed": done.stderr.strip().splitlines()[-1:] or ["no output"]}
    result: dict[str, Any] = json.loads(done.stdout)
    overall = result["all"]
    goal_ms = result.get("goal_p99_us", 1000.0) / 1000
    row = Row(
        "policy",
        "classify a tool call, p99",
        "ms",
        overall["p99_us"] / 1000,
        overall["p50_us"] / 1000,
        "same engine p50 (tail vs typical)",
        "lower",
        goal_abs=goal_ms,
        note=f"{overall['n']} calls; bench/session/bench_policy.py",
    )
    return [row], result


def _sandbox_rows(samples: int) -> tuple[list[Row], dict[str, Any]]:
    from bench_sandbox import GOAL_ADDED_P50_MS, measure

    result = measure(samples)
    if "skipped" in result:
        return [], result
    bare, boxed, added = result["bare"], result["sandboxed"], result["added"]
    section = "sandbox"
    rows = [
        Row(section, "sandboxed bash call, p50", "ms", boxed["p50"], bare["p50"],
            "bash -c true p50", "lower"),
        Row(section, "sandboxed bash call, p95", "ms", boxed["p95"], bare["p95"],
            "bash -c true p95", "lower"),
        Row(section, "added by the sandbox (sandboxed - bare), p50", "ms", added["p50"],
            bare["p50"], "bash -c true p50", "lower", goal_abs=GOAL_ADDED_P50_MS,
            note=f"added p95 {added['p95']:.3f} ms; {result['bindMounts']} bind mounts"),
    ]  # fmt: skip
    return rows, result


def _effects_rows(samples: int, many: int) -> tuple[list[Row], dict[str, Any]]:
    from bench_effects import GOAL_ADDED_P50_MS, measure

    result = measure(samples, many_samples=many)
    if "skipped" in result:
        return [], result
    section = "effects"
    direct, layered, files = result["direct"], result["layered"], result["manyFiles"]
    rows = [
        Row(section, "added by the effects review per command (no-op), p50", "ms",
            result["added"]["p50"], direct["p50"], "sandboxed bash -c true p50", "lower",
            goal_abs=GOAL_ADDED_P50_MS,
            note=f"layered p50 {layered['p50']:.3f} ms vs {direct['p50']:.3f} ms"),
        Row(section, "10,000 small files through a layer, reviewed and applied, p50", "ms",
            files["layered"]["p50"], files["direct"]["p50"], "the same, written directly",
            "lower", note=f"ratio {files['ratioP50']}x; bench/session/bench_effects.py"),
    ]  # fmt: skip
    return rows, result


def _session_rows(part: Path, pairs: int) -> tuple[list[Row], dict[str, Any]]:
    from bench_pi_session import (
        GOAL_ADDED_CALL_P50_MS,
        GOAL_EXIT_DELAY_MS,
        GOAL_NO_CALL_RATIO,
        GOAL_ONE_CALL_RATIO,
        measure,
    )

    result = measure(part, pairs)
    section = "session"
    rows: list[Row] = []
    for flavor, pi in result.items():
        goals = flavor == "current"  # the legacy pi is reported, its goals are the current's
        label = f"pi {pi['pi']}"
        none, one, ten, call, read = pi["none"], pi["one"], pi["ten"], pi["call"], pi["read"]
        rows += [
            Row(section, f"{label}: pi -p, no tool call", "ms", none["guardMs"],
                none["aloneMs"], "pi alone", "lower",
                goal=GOAL_NO_CALL_RATIO if goals else None,
                note=f"median of {pi['pairs']} interleaved pairs; ratio of the medians"),
            Row(section, f"{label}: pi -p, one safe bash call", "ms", one["guardMs"],
                one["aloneMs"], "pi alone", "lower",
                goal=GOAL_ONE_CALL_RATIO if goals else None),
            Row(section, f"{label}: pi -p, ten safe bash calls", "ms", ten["guardMs"],
                ten["aloneMs"], "pi alone", "lower"),
            Row(section, f"{label}: pi's start to the model's first request", "ms",
                none["firstRequestGuardMs"], none["firstRequestAloneMs"], "pi alone", "lower",
                note="pi does not wait for the sidecar before its first request"),
            Row(section, f"{label}: pi's start to session.started (no tool call)", "ms",
                none["startedMs"], none["aloneMs"], "pi alone's whole run", "lower"),
            Row(section, f"{label}: exit delay after session.ended (calls made)", "ms",
                statistics.median([one["exitDelayMs"], ten["exitDelayMs"]]),
                GOAL_EXIT_DELAY_MS, "the goal", "lower",
                goal_abs=GOAL_EXIT_DELAY_MS if goals else None,
                note=f"slowest run {max(s['exitDelayMaxMs'] for s in (one, ten)):.0f} ms"),
            Row(section, f"{label}: pi's end after its answer (no tool call)", "ms",
                none["afterAnswerGuardMs"], none["afterAnswerAloneMs"], "pi alone", "lower",
                note=f"pi ended before session.ended (a sidecar still starting) in "
                     f"{none['endedBeforeSidecar']} of {pi['pairs']} runs"),
            Row(section, f"{label}: sidecar peak memory (ten calls)", "MiB",
                ten["sidecarPeakMiB"], ten["sidecarPeakMiB"], "(no floor)", "lower"),
            Row(section, f"{label}: a safe bash call inside a session, p50", "ms",
                call["guardP50Ms"], call["aloneP50Ms"], "pi alone", "lower",
                note=f"adds {call['addedP50Ms']:.1f} ms (goal {GOAL_ADDED_CALL_P50_MS:g});"
                     f" {call['calls']} calls"),
            Row(section, f"{label}: added to a safe bash call, p50", "ms",
                call["addedP50Ms"], GOAL_ADDED_CALL_P50_MS, "the goal", "lower",
                goal_abs=GOAL_ADDED_CALL_P50_MS if goals else None,
                note="judged, sandboxed, its layer reviewed"),
            Row(section, f"{label}: added to a safe bash call, p99", "ms",
                call["addedP99Ms"], call["aloneP99Ms"], "pi alone's p99", "lower",
                note="the first call waits for the sidecar's start"),
            Row(section, f"{label}: added to a safe read call, p50", "ms",
                read["addedP50Ms"], GOAL_ADDED_CALL_P50_MS, "the goal", "lower",
                goal_abs=GOAL_ADDED_CALL_P50_MS if goals else None,
                note=f"judged only; {read['calls']} calls, p50 {read['guardP50Ms']:.1f} ms"
                     f" against {read['aloneP50Ms']:.1f} ms"),
            Row(section, f"{label}: added to a safe read call, p99", "ms",
                read["addedP99Ms"], read["aloneP99Ms"], "pi alone's p99", "lower"),
        ]  # fmt: skip
    return rows, result


def _network_rows(samples: int) -> tuple[list[Row], dict[str, Any]]:
    from bench_network import GOAL_ALLOWLIST_P50_MS, GOAL_OFF_P50_MS, measure

    result = measure(samples)
    if "skipped" in result:
        return [], result
    section = "network"
    floor = result["open"]["p50"]
    rows = [
        Row(section, "added by network = off per command, p50", "ms", result["added"]["off"],
            floor, "sandboxed bash -c true, open network, p50", "lower",
            goal_abs=GOAL_OFF_P50_MS, note=f"off p50 {result['off']['p50']:.3f} ms"),
        Row(section, "added by network = allowlist per command (bridge), p50", "ms",
            result["added"]["allowlist"], floor, "sandboxed bash -c true, open network, p50",
            "lower", goal_abs=GOAL_ALLOWLIST_P50_MS,
            note=f"allowlist p50 {result['allowlist']['p50']:.3f} ms; "
                 "bench/session/bench_network.py"),
        Row(section, "a request the allowlist refuses (curl, bridge, proxy), p50", "ms",
            result["refusedRequest"]["p50"], result["allowlist"]["p50"],
            "allowlist bash -c true p50", "lower"),
    ]  # fmt: skip
    return rows, result


def _telemetry_rows(samples: int, paced: int) -> tuple[list[Row], dict[str, Any]]:
    from bench_telemetry import GOAL_ADDED_P99_MS, measure

    result = measure(samples, paced)
    section = "telemetry"
    rows: list[Row] = []
    for name in ("up", "slow", "down"):
        for pace in ("burst", "paced"):
            r = result[name][pace]
            rows += [
                Row(section, f"receiver {name}, {pace}: added per guarded call, p50", "ms",
                    r["added"]["p50"], r["off"]["p50"], "export off p50", "lower",
                    note=f"on p50 {r['on']['p50']:.3f} ms; exporter on the call's thread "
                         f"p50 {r['onCallerThread']['p50']:.3f} ms"),
                Row(section, f"receiver {name}, {pace}: added per guarded call, p99", "ms",
                    r["added"]["p99"], r["off"]["p99"], "export off p99", "lower",
                    goal_abs=GOAL_ADDED_P99_MS,
                    note=f"median of {len(r['added']['pairsP99'])} block pairs; pooled "
                         f"{r['added']['pooledP99']:.3f} ms; {r['calls']} calls a side; "
                         f"{r['exported']} exported, {r['dropped']} dropped"),
                Row(section, f"receiver {name}, {pace}: exporter on the call's thread, p99",
                    "ms", r["onCallerThread"]["p99"], r["off"]["p50"], "export off p50",
                    "lower", goal_abs=GOAL_ADDED_P99_MS,
                    note="fold and queue a span: what export puts on a call's own path"),
            ]  # fmt: skip
    return rows, result


def _dialogs_rows(part: Path) -> tuple[list[Row], dict[str, Any]]:
    from bench_dialogs import GOAL_REDUCTION, measure

    from guard._logging import configure_logging

    configure_logging()  # the sidecar's debug lines (one per request) stay off the table
    result = measure(part)
    section = "dialogs"
    without, accepted = result["withoutGrants"], result["withGrants"]
    outcomes = [n["withGrants"] for n in result["nearMissOutcomes"]]
    rows = [
        Row(section, "dialogs per task, grants accepted", "dialogs", accepted["dialogs"],
            without["dialogs"], "the same task without grants", "lower",
            goal=round(1 - GOAL_REDUCTION, 2),
            note=f"{result['reduction']:.1%} fewer; {result['calls']} calls, "
                 f"{result['nearMisses']} near misses; bench/session/bench_dialogs.py"),
        Row(section, "near misses covered by a grant", "calls", result["nearMissesCovered"],
            result["nearMisses"], "near misses in the task", "lower", goal=0.0,
            note=f"with grants accepted: {outcomes.count('asked')} asked, "
                 f"{outcomes.count('blocked')} blocked"),
    ]  # fmt: skip
    rows += _routine_rows(part / "routine", result)
    return rows, result


def _routine_rows(part: Path, into: dict[str, Any]) -> list[Row]:
    """The five routine tasks in the real pi, on each pinned pi (bench_routine.py)."""
    from bench_routine import GOAL_DIALOGS, GOAL_RECOVERABLE_DIALOGS
    from bench_routine import measure as measure_routine

    routine = measure_routine(part)
    into["routine"] = routine
    rows = []
    for flavor, r in routine.items():
        asked = ", ".join(f"{t['task']}: {t['dialogs'] + t['effectsDialogs']}" for t in r["tasks"])
        rows += [
            Row("dialogs", f"{flavor} pi: routine tasks, dialogs", "dialogs", r["dialogs"],
                r["calls"], "tool calls in the five tasks", "lower", goal_abs=GOAL_DIALOGS + 1.0,
                note=f"{r['ranUnasked']} destructive calls ran unasked; {asked}"),
            Row("dialogs", f"{flavor} pi: routine tasks, dialogs for recoverable work",
                "dialogs", r["recoverableDialogs"], r["dialogs"], "dialogs in the five tasks",
                "lower", goal_abs=GOAL_RECOVERABLE_DIALOGS + 1.0,
                note="bench/session/bench_routine.py"),
        ]  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--work-dir", type=Path, default=None, help="disk to measure on")
    parser.add_argument("--output", type=Path, default=HERE / "results.json")
    parser.add_argument(
        "--profile", action="store_true", help="also cProfile record+consume (top functions)"
    )
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections: {', '.join(unknown)}")

    quick = args.quick
    rounds = 150 if quick else 1500
    verify_sizes = [10_000, 30_000] if quick else [10_000, 100_000, 1_000_000]
    scale_counts = [1, 2] if quick else [1, 2, 4, 8]
    per_process = 25 if quick else 100
    sidecar_samples = (300, 50) if quick else (3000, 300)
    sandbox_samples = 60 if quick else 600
    pg_clients, pg_per_client, pg_repeats = [1, 4, 16], (40 if quick else 300), (1 if quick else 3)

    rows: list[Row] = []
    details: dict[str, Any] = {}
    timings: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="pi-guard-bench-", dir=args.work_dir) as tmp:
        work = Path(tmp)
        info = machine(work)
        print(f"machine: {info['cpu']} x{info['cpus']}, Python {info['python']}, "
              f"kernel {info['kernel']}, work dir on {info['workDirFs']}", flush=True)  # fmt: skip
        for section in sections:
            started = time.perf_counter()
            print(f"[{section}] running ...", flush=True)
            part = work / section
            part.mkdir()
            if section == "inprocess":
                from bench_inprocess import run as run_inprocess

                new, detail = run_inprocess(part, rounds)
            elif section == "verify":
                from bench_verify import run as run_verify

                new, detail = run_verify(part, verify_sizes)
            elif section == "startup":
                from bench_startup import run as run_startup

                new, detail = run_startup(part, verify_sizes)
            elif section == "scaling":
                from bench_scaling import run as run_scaling

                new, detail = run_scaling(part, scale_counts, per_process, 1 if quick else 3)
            elif section == "sidecar":
                new, detail = _sidecar_rows(*sidecar_samples)
            elif section == "sandbox":
                new, detail = _sandbox_rows(sandbox_samples)
            elif section == "effects":
                new, detail = _effects_rows(sandbox_samples // 3, 2 if quick else 5)
            elif section == "network":
                new, detail = _network_rows(sandbox_samples // 3)
            elif section == "dialogs":
                new, detail = _dialogs_rows(part)
            elif section == "session":
                new, detail = _session_rows(part, 2 if quick else 5)
            elif section == "telemetry":
                new, detail = _telemetry_rows(400 if quick else 1200, 200 if quick else 1000)
            elif section == "postgres":
                from bench_postgres import run as run_postgres

                new, detail = run_postgres(part, pg_clients, pg_per_client, pg_repeats)
            else:
                new, detail = _policy_rows(50 if quick else 200)
            timings[section] = round(time.perf_counter() - started, 1)
            print(render(new), flush=True)
            rows += new
            details[section] = detail
        if args.profile:
            from bench_inprocess import profile

            part = work / "profile"
            part.mkdir()
            top = profile(part, 100 if quick else 500)
            details["profile"] = top
            print("\ncProfile, record + consume, per round (ms), by own time:")
            for entry in top[:15]:
                print(
                    f"  {entry['tottimeMsPerRound']:8.4f} own {entry['cumtimeMsPerRound']:8.4f} "
                    f"cum {entry['calls']:>7}  {entry['function']}"
                )

    print()
    print(render(rows))
    missed = [row for row in rows if row.met is False]
    print()
    if missed:
        print("goals missed (see docs/performance.md for why):")
        for row in missed:
            print(f"  {row.section}: {row.name}: {row.ratio:.2f}x, goal {row.goal_text}")
    else:
        print("every goal met")
    payload = {
        "generatedAt": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "quick": quick,
        "machine": info,
        "sectionSeconds": timings,
        "rows": [row.as_json() for row in rows],
        "details": details,
    }
    args.output.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
