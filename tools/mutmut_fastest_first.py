"""``python -m tools.mutmut_fastest_first ARGS``: mutmut, with each mutant's tests fastest first.

mutmut 3.8 runs a mutant's tests with ``pytest -x`` (it stops at the first failure) but hands
them over in the order of a ``set``. Where a function is reached by hundreds of tests, a few
of them CLI tests of 5 to 20 s, a mutant that a 10 ms test kills could first wait for those.
Ordering the tests by the durations mutmut itself recorded keeps every verdict (the same tests
run; a survivor runs them all) and lets a kill come as early as it can.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mutmut.__main__ import cli
from mutmut.state import state
from mutmut.workers.isolation import ForkRunner, ForkServerRunner

from tools.mutants import fastest_first

Submit = Callable[[Any, str, list[str], int, float], None]


def _ordered(submit: Submit) -> Submit:
    def submit_fastest_first(
        self: Any, mutant_name: str, tests: list[str], cpu_time_limit: int, estimated: float
    ) -> None:
        ordered = fastest_first(tests, state().duration_by_test)
        submit(self, mutant_name, ordered, cpu_time_limit, estimated)

    return submit_fastest_first


for _runner in (ForkServerRunner, ForkRunner):
    _runner.submit = _ordered(_runner.submit)  # type: ignore[method-assign, assignment]

if __name__ == "__main__":
    cli()
