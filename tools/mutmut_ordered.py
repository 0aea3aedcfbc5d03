"""``python -m tools.mutmut_ordered ARGS``: mutmut, with each mutant's tests in a better order.

The order is :func:`tools.mutant_order.run_order`: tests that killed a mutant of the same
function first, then fastest first. It changes no verdict (the same tests run, and a survivor
runs them all); it only lets a kill come as early as it can. Each kill is recorded by the test
run in ``mutants/`` (:data:`tools.mutant_order.KILLS_FILE_NAME`) for the mutants after it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mutmut.__main__ import cli
from mutmut.runners.harness import PytestRunner
from mutmut.state import state
from mutmut.utils.file_utils import change_cwd
from mutmut.workers.isolation import ForkRunner, ForkServerRunner

from tools.mutant_order import KILLS_FILE_NAME, KillTally, record_kill, run_order

# Resolved now: the test runs change into mutants/ themselves.
KILLS_FILE = Path("mutants", KILLS_FILE_NAME).resolve()
_TALLY = KillTally(KILLS_FILE)

Submit = Callable[[Any, str, list[str], int, float], None]


def _ordered(submit: Submit) -> Submit:
    def submit_ordered(
        self: Any, mutant_name: str, tests: list[str], cpu_time_limit: int, estimated: float
    ) -> None:
        ordered = run_order(tests, state().duration_by_test, _TALLY.of(mutant_name))
        submit(self, mutant_name, ordered, cpu_time_limit, estimated)

    return submit_ordered


class _FirstFailure:
    """A pytest plugin that records the first test failing under a mutant (``-x`` stops there)."""

    def __init__(self, mutant: str) -> None:
        self.mutant = mutant
        self.recorded = False

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed and not self.recorded:
            self.recorded = True
            record_kill(KILLS_FILE, self.mutant, report.nodeid)


def _run_tests(self: PytestRunner, *, mutant_name: str | None, tests: Any) -> int:
    # mutmut 3.8's PytestRunner.run_tests, with the plugin for a mutant's run.
    plugins = [] if mutant_name is None else [_FirstFailure(mutant_name)]
    with change_cwd("mutants"):
        return int(self.execute_pytest(self._pytest_args_regular_run(tests), plugins=plugins))


for _runner in (ForkServerRunner, ForkRunner):
    _runner.submit = _ordered(_runner.submit)  # type: ignore[method-assign, assignment]
PytestRunner.run_tests = _run_tests  # type: ignore[method-assign]

if __name__ == "__main__":
    cli()
