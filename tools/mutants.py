"""``make mutants``: mutation testing of the security-critical modules with mutmut.

Runs one ``mutmut run`` over the modules under a wall-clock budget, then reports every mutant
that was not killed. mutmut first runs the selected tests once to learn which tests reach which
function; each mutant then runs only those tests (``[tool.mutmut]`` in pyproject.toml picks the
test directories, and the ``mutants`` hypothesis profile keeps property tests small and fixed).
Results are cached in ``mutants/`` (ignored): a second run tests only what is not killed yet
(never-run mutants, survivors a new test may kill, mutants of changed functions), so it continues
where the first stopped; ``--fresh`` (or ``MUTANTS_FRESH=1``) tests every mutant again.

A survivor is either killed by a new test or listed as equivalent, with the mutation reviewed
and the reason, in ``tools/mutants-equivalent.toml``; the run fails on any survivor not listed
there, or listed for another mutation (stale: its function changed since the review).

    python -m tools.mutants [--budget SECONDS] [--jobs N] [--fresh] [MODULE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
EQUIVALENT_FILE = REPO / "tools" / "mutants-equivalent.toml"
STATE_DIR = REPO / "mutants"  # mutmut's state: mutated copies, verdicts, test durations
REPORT_FILE = STATE_DIR / "report.md"

# The security-critical modules, in the order they are run (first = most important).
MODULES = (
    "guard/_evidence/consume.py",
    "guard/_evidence/fingerprint.py",
    "audit/_records/chain.py",
    "audit/_checking/verify.py",
    "audit/tlog/_merkle.py",
    "audit/tlog/_note.py",
    "guard/_storage/ledger.py",
    "guard/_evidence/keys.py",
    "audit/_writing/log.py",
    "audit/_writing/signing.py",
    "audit/_writing/events.py",
    "audit/_writing/crash.py",
    "audit/_writing/files.py",
    "audit/_records/read.py",
    "guard/_sidecar/server.py",
    "guard/_sidecar/handlers/methods.py",
    "guard/_sidecar/session/session.py",
    "guard/_sidecar/session/intake.py",
    "guard/_sidecar/session/answers.py",
    "guard/_sidecar/session/consume.py",
    "guard/_facade/spool.py",
    "guard/_policy/matching/rules.py",
    "guard/_policy/matching/classify.py",
    "guard/_policy/bash/*",
)

# mutmut's status names; only "killed" (and the type checker's "caught by type check") count.
# A "timeout" mutant never finishes (an endless loop): mutmut stops it after
# timeout_multiplier x the tests' own time; the suite would hang on it, so it is detected.
# "segfault" is mutmut's name for a test run killed by a signal (SIGSEGV or SIGKILL, e.g. an
# endless loop that fills memory): the suite does not pass under it either.
KILLED = frozenset({"killed", "caught by type check", "timeout", "segfault"})
NOT_RUN = frozenset({"not checked", "skipped"})
# A listed equivalent whose mutation is still the one reviewed is not run again: no test can
# kill it (that is what the review says), so running it would only spend a survivor's time.
REVIEWED = "equivalent, not re-run"
_RESULT = re.compile(r"^\s+(\S+): (.+)$")


@dataclass(frozen=True)
class ModuleResult:
    module: str
    counts: Counter[str]
    survivors: tuple[tuple[str, str], ...]  # (mutant name, status)
    seconds: float


def module_glob(module: str) -> str:
    """``guard/_evidence/consume.py`` -> ``guard._evidence.consume.*`` (mutmut's mutant names)."""
    dotted = module.removesuffix(".py").replace("/", ".")
    return dotted if dotted.endswith("*") else dotted + ".*"


@dataclass(frozen=True)
class Equivalent:
    """A survivor reviewed as equivalent: the exact mutation reviewed, and why it is harmless."""

    mutation: tuple[str, ...]
    why: str


def load_equivalent() -> dict[str, Equivalent]:
    data = tomllib.loads(EQUIVALENT_FILE.read_text(encoding="utf-8"))
    return {
        entry["name"]: Equivalent(tuple(entry.get("mutation", ())), entry["why"])
        for entry in data.get("equivalent", [])
    }


def changed_lines(diff: str) -> tuple[str, ...]:
    """The removed and added lines of a mutant's diff, stripped: ``("-old", "+new")``."""
    return tuple(
        line[0] + line[1:].strip()
        for line in diff.splitlines()
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    )


_DIFFS = """
import json, sys
from mutmut.mutation.diff_apply import get_diff_for_mutant
print(json.dumps({n: get_diff_for_mutant(n) for n in json.load(sys.stdin)}))
"""


def mutations(names: list[str]) -> dict[str, tuple[str, ...]]:
    """What each named mutant changes (mutmut's diff, as :func:`changed_lines`)."""
    if not names:
        return {}
    done = subprocess.run(
        [sys.executable, "-c", _DIFFS],
        cwd=REPO,
        input=json.dumps(names),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise SystemExit(f"mutmut could not show the listed mutants: {last}")
    diffs: dict[str, str] = json.loads(done.stdout)
    return {name: changed_lines(diff) for name, diff in diffs.items()}


def mutmut(*args: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    """Run mutmut (each mutant's tests in :mod:`tools.mutmut_ordered`'s order) in its
    own process group; on timeout the whole group (its workers) is killed."""
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutants"}
    env.pop("CI", None)
    with subprocess.Popen(
        [sys.executable, "-m", "tools.mutmut_ordered", *args],
        cwd=REPO,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    ) as proc:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def all_results() -> dict[str, str]:
    out = mutmut("results", "--all", "true").stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        match = _RESULT.match(line)
        if match:
            found[match.group(1)] = match.group(2).strip()
    return found


def pending(
    module: str, results: dict[str, str], reviewed: frozenset[str] = frozenset()
) -> list[str] | None:
    """The mutants of ``module`` a run has to (re)test, or ``None`` if none has a result yet.

    Killed mutants keep their verdict (mutmut resets it when their function changes, and then
    the mutant is "not checked" again); every other one is tested again, since a new test may
    kill it, except the ``reviewed`` equivalents (:func:`reviewed`). Each name becomes a
    pattern that matches only itself (``*`` + name): mutmut looks an exact name's function up
    in its test map before it traces new tests, and a function without tests is not in that map.
    """
    prefix = module_glob(module).removesuffix("*")
    mine = {name: status for name, status in results.items() if name.startswith(prefix)}
    if not mine:
        return None
    return [
        "*" + name
        for name, status in sorted(mine.items())
        if status not in KILLED and name not in reviewed
    ]


def reviewed(
    module: str, results: Mapping[str, str], equivalent: Mapping[str, Equivalent]
) -> frozenset[str]:
    """The listed equivalents of ``module`` whose mutation is still the one reviewed."""
    prefix = module_glob(module).removesuffix("*")
    names = [n for n in equivalent if n.startswith(prefix) and n in results]
    now = mutations(names)
    return frozenset(n for n in names if now.get(n) == equivalent[n].mutation)


def run_mutmut(targets: list[str], jobs: int, deadline: float) -> bool:
    """One ``mutmut run`` over ``targets``; ``False`` when the budget ran out."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return False
    try:
        done = mutmut("run", "--max-children", str(jobs), *targets, timeout=remaining)
    except subprocess.TimeoutExpired:
        print("  budget spent; the rest stays 'not checked'", flush=True)
        return False
    if done.returncode != 0:
        print(done.stdout[-4000:], done.stderr[-4000:], sep="\n", file=sys.stderr)
        raise SystemExit(f"mutmut run failed (exit {done.returncode})")
    return True


def forget_test_map(state: Path = STATE_DIR) -> None:
    """Make the next ``mutmut run`` trace every test again (about two minutes here).

    mutmut keeps which tests reach which function in ``mutmut-stats.json`` and, on a later
    run, traces only tests that are new. A function added since is then mapped to the new
    tests alone, and its mutants survive the older tests that would kill them (a new key
    check in ``audit/_log.py``, now ``audit/_writing/signing.py``, had 10 such survivors).
    Verdicts live in the ``.meta`` files and are kept.
    """
    (state / "mutmut-stats.json").unlink(missing_ok=True)


def targets(
    modules: list[str],
    results: dict[str, str],
    equivalent: Mapping[str, Equivalent],
    *,
    fresh: bool,
) -> list[str]:
    """The mutmut patterns one run tests: a whole module when ``fresh`` or never run, else
    its :func:`pending` mutants (killed ones and equivalents still as reviewed are skipped)."""
    found: list[str] = []
    for module in modules:
        todo = None if fresh else pending(module, results, reviewed(module, results, equivalent))
        found += [module_glob(module)] if todo is None else todo
    return found


def run_modules(
    modules: list[str],
    jobs: int,
    deadline: float,
    *,
    fresh: bool,
    equivalent: Mapping[str, Equivalent],
) -> None:
    """Test what :func:`targets` names in one ``mutmut run``: each run first re-runs the
    selected tests clean (minutes here), so one run for all modules pays that once."""
    todo = targets(modules, all_results(), equivalent, fresh=fresh)
    if not todo:
        print("  every mutant already killed or reviewed (--fresh tests them again)")
        return
    if run_mutmut(todo, jobs, deadline) and not fresh:
        # A changed function's mutants are only generated by that run: test them as well.
        results = all_results()
        again = [
            "*" + name
            for module in modules
            for name in unchecked(module, results, reviewed(module, results, equivalent))
        ]
        if again:
            run_mutmut(again, jobs, deadline)


def unchecked(module: str, results: Mapping[str, str], skip: frozenset[str]) -> list[str]:
    """``module``'s mutants still "not checked", except those in ``skip``."""
    prefix = module_glob(module).removesuffix("*")
    return sorted(
        name
        for name, status in results.items()
        if name.startswith(prefix) and status == "not checked" and name not in skip
    )


def recorded_seconds(module: str, state: Path = STATE_DIR) -> float:
    """The test time mutmut recorded for the verdicts of ``module``'s mutants (all runs).

    A folder's glob (``guard/_policy/bash/*``) takes the modules of its sub-packages too.
    """
    pattern = module.removesuffix("*") + "**/*.meta" if module.endswith("/*") else module + ".meta"
    total = 0.0
    for meta in sorted(state.glob(pattern)):
        durations = json.loads(meta.read_text(encoding="utf-8")).get("durations_by_key", {})
        total += sum(durations.values())
    return total


def summarize(
    module: str,
    results: dict[str, str],
    seconds: float,
    reviewed: frozenset[str] = frozenset(),
) -> ModuleResult:
    """Count ``module``'s verdicts; a ``reviewed`` equivalent not run is counted as such."""
    prefix = module_glob(module).removesuffix("*")
    mine = {
        name: REVIEWED if name in reviewed and status in NOT_RUN else status
        for name, status in results.items()
        if name.startswith(prefix)
    }
    counts = Counter(mine.values())
    survivors = tuple(
        sorted((n, s) for n, s in mine.items() if s not in KILLED and s not in NOT_RUN)
    )
    return ModuleResult(module, counts, survivors, seconds)


def score(result: ModuleResult) -> str:
    run = sum(
        n for status, n in result.counts.items() if status not in NOT_RUN and status != REVIEWED
    )
    killed = sum(result.counts[s] for s in KILLED)
    return "-" if run == 0 else f"{100 * killed / run:.1f} %"


def report(
    results: list[ModuleResult],
    equivalent: Mapping[str, Equivalent],
    mutation_of: Mapping[str, tuple[str, ...]],
) -> tuple[str, list[str]]:
    """The table and the survivors; a listed equivalent counts only for the mutation reviewed.

    mutmut numbers a function's mutants in order, so when the function changes a name may
    stand for another mutation: such an entry is *stale* and its survivor unexplained.
    """
    lines = [
        "| module | mutants | killed | survived | equivalent, not re-run | other | not run "
        "| score | test seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    unexplained: list[str] = []
    for r in results:
        total = sum(r.counts.values())
        killed = sum(r.counts[s] for s in KILLED)
        survived = r.counts["survived"]
        skipped = r.counts[REVIEWED]
        not_run = sum(r.counts[s] for s in NOT_RUN)
        other = total - killed - survived - skipped - not_run
        lines.append(
            f"| `{r.module}` | {total} | {killed} | {survived} | {skipped} | {other} "
            f"| {not_run} | {score(r)} | {r.seconds:.0f} |"
        )
    lines.append("")
    for r in results:
        for name, status in r.survivors:
            entry = equivalent.get(name)
            if entry is None:
                unexplained.append(name)
                lines.append(f"- UNEXPLAINED `{name}` ({status})")
            elif entry.mutation != mutation_of.get(name):
                unexplained.append(name)
                now = list(mutation_of.get(name, ()))
                lines.append(
                    f"- STALE `{name}` ({status}): listed as equivalent for "
                    f"{list(entry.mutation)}, but the mutant is now {now}"
                )
            else:
                lines.append(f"- equivalent `{name}` ({status}): {entry.why}")
    return "\n".join(lines) + "\n", unexplained


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=list(MODULES), metavar="MODULE")
    parser.add_argument(
        "--budget", type=float, default=float(os.environ.get("MUTANTS_BUDGET", "3600"))
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument(
        "--fresh",
        action="store_true",
        default=bool(os.environ.get("MUTANTS_FRESH")),
        help="test every mutant again, killed ones included",
    )
    args = parser.parse_args(argv)
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"not a security-critical module: {', '.join(unknown)}")
    deadline = time.monotonic() + args.budget
    equivalent = load_equivalent()
    print(f"mutants: {', '.join(args.modules)}", flush=True)
    forget_test_map()
    run_modules(args.modules, args.jobs, deadline, fresh=args.fresh, equivalent=equivalent)
    equivalent = load_equivalent()  # as it is now: survivors may have been reviewed meanwhile
    results = all_results()
    summaries = [
        summarize(m, results, recorded_seconds(m), reviewed(m, results, equivalent))
        for m in args.modules
    ]
    listed = [n for r in summaries for n, _ in r.survivors if n in equivalent]
    text, unexplained = report(summaries, equivalent, mutations(listed))
    REPORT_FILE.parent.mkdir(exist_ok=True)
    REPORT_FILE.write_text(text, encoding="utf-8")
    print(text)
    if unexplained:
        print(f"{len(unexplained)} survivor(s) neither killed nor explained", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
