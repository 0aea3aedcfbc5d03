"""Which of the named mutants do these tests kill? (after ``make mutants``, while writing tests)

Runs the given test files once per mutant with mutmut's own trampoline (``MUTANT_UNDER_TEST``)
in ``mutants/``, in a process forked from one that has already imported and run them, so a
check costs the tests' own time rather than a pytest start. The test files are copied from the
working tree into ``mutants/`` first (mutmut copied the tests when its run began). A mutant is
killed when the tests fail under it; the tests must pass with no mutant.

    python -m tools.mutant_check tests/guard/sidecar/test_sidecar_server.py < names.txt

``names.txt`` holds full mutant names (``mutmut results``), one per line. Prints
``KILLED name`` or ``SURVIVED name`` per mutant; exits 1 if any survived.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MUTANTS = REPO / "mutants"


def run_tests(tests: list[str], mutant: str) -> int:
    """Run ``tests`` under ``mutant`` in a forked child; its pytest exit code."""
    import pytest

    pid = os.fork()
    if pid == 0:  # the child: quiet, the mutant on, pytest's exit code out
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.environ["MUTANT_UNDER_TEST"] = mutant
        os._exit(int(pytest.main(["-q", "-x", "-p", "no:cacheprovider", *tests])))
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def main(argv: list[str] | None = None) -> int:
    tests = list(sys.argv[1:] if argv is None else argv)
    if not tests or not MUTANTS.is_dir():
        print("usage: python -m tools.mutant_check TEST_FILE... < NAMES (after make mutants)")
        return 2
    for test in tests:
        source = REPO / test.split("::")[0]
        target = MUTANTS / test.split("::")[0]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    os.chdir(MUTANTS)
    sys.path.insert(0, str(MUTANTS))
    if run_tests(tests, "") != 0:
        print("the tests fail without a mutant: fix them first")
        return 2
    import pytest

    # Import and run the tests once here, so every forked check starts warm.
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    pytest.main(["-q", "-p", "no:cacheprovider", *tests])
    os.dup2(saved, 1)
    survived = 0
    for name in (line.strip() for line in sys.stdin):
        if not name:
            continue
        killed = run_tests(tests, name) != 0
        survived += not killed
        print(f"{'KILLED' if killed else 'SURVIVED'} {name}", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
