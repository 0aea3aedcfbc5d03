"""The order a mutant's tests run in: tests that killed its siblings first, then fastest first.

mutmut runs a mutant's tests with ``pytest -x``: the first failure ends the run, so the order
decides how long a killed mutant takes, and nothing else (the same tests run; a survivor runs
them all). mutmut 3.8 hands them over in the order of a ``set``. Where a function is reached
by hundreds of tests, some of them CLI tests of 5 to 20 s, a mutant that one of them kills could
wait for all the others first. Two things put the killer early:

- mutants of one function are mostly killed by the same few tests (an error's words, a bound),
  so a test that already killed a mutant of the function runs first, the most kills first;
- then the rest by the durations mutmut recorded, unknown ones last.

Which test killed which mutant is appended to :data:`KILLS_FILE` (one ``mutant<TAB>test`` line
per kill) by the test run itself and read back by :class:`KillTally` as it grows; it lasts as
long as the ``mutants/`` state, so a later run starts with what earlier ones learned.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path

KILLS_FILE_NAME = "mutmut-kills.tsv"


def function_of(mutant: str) -> str:
    """The mangled function a mutant belongs to: ``a.b.x_f__mutmut_3`` -> ``a.b.x_f``."""
    return mutant.rsplit("__mutmut_", 1)[0]


def run_order(
    tests: list[str], durations: Mapping[str, float], kills: Mapping[str, int] | None = None
) -> list[str]:
    """``tests`` with the ones in ``kills`` first (most kills first), then by recorded
    duration, unknown ones last; ties by name, so the order is stable."""
    kills = kills or {}
    return sorted(
        tests, key=lambda test: (-kills.get(test, 0), durations.get(test, float("inf")), test)
    )


def record_kill(path: Path, mutant: str, test: str) -> None:
    """Append that ``test`` killed ``mutant``; a name with a tab or newline is not recorded
    (it would split the line), which only costs speed."""
    if any(c in mutant + test for c in "\t\n\r"):
        return
    # One short write in append mode: lines of concurrent test runs do not interleave.
    with path.open("a", encoding="utf-8") as out:
        out.write(f"{mutant}\t{test}\n")


class KillTally:
    """How often each test killed a mutant of each function, read from ``path`` as it grows.

    A line still being written (no newline yet) is read the next time.
    """

    def __init__(self, path: Path) -> None:
        self._path = path
        self._offset = 0
        self._by_function: defaultdict[str, Counter[str]] = defaultdict(Counter)

    def of(self, mutant: str) -> Counter[str]:
        """The kills by test among the mutants of ``mutant``'s function so far."""
        self._read_new()
        return self._by_function[function_of(mutant)]

    def _read_new(self) -> None:
        try:
            with self._path.open("rb") as source:
                source.seek(self._offset)
                data = source.read()
        except FileNotFoundError:
            return
        complete = data[: data.rfind(b"\n") + 1]
        self._offset += len(complete)
        for line in complete.decode("utf-8", "replace").splitlines():
            mutant, tab, test = line.partition("\t")
            if tab and mutant and test:
                self._by_function[function_of(mutant)][test] += 1
