"""Which of the named mutants do these tests kill? (after ``make mutants``, while writing tests)

Runs the given test files once per mutant with mutmut's own trampoline (``MUTANT_UNDER_TEST``)
in ``mutants/``, in a process forked from one that has already imported and run them, so a
check costs the tests' own time rather than a pytest start. The test files are copied from the
working tree into ``mutants/`` first (mutmut copied the tests when its run began). A mutant is
killed when the tests fail under it; the tests must pass with no mutant.

    python -m tools.mutant_check tests/guard/sidecar/test_sidecar_server.py < names.txt

``names.txt`` holds full mutant names (``mutmut results``), one per line. Prints
``KILLED name``, ``SURVIVED name`` or ``TIMEOUT name`` (stopped after 60 s: an endless loop,
detected as mutmut counts it) per mutant; exits 1 if any survived.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MUTANTS = REPO / "mutants"


TIMEOUT_SECONDS = 60.0


def run_tests(tests: list[str], mutant: str, timeout: float = TIMEOUT_SECONDS) -> int | None:
    """Run ``tests`` under ``mutant`` in a forked child: its pytest exit code, or ``None``
    when it ran past ``timeout`` (an endless loop, which the suite would hang on) and was killed.
    """
    import pytest

    pid = os.fork()
    if pid == 0:  # the child: quiet, the mutant on, pytest's exit code out
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.environ["MUTANT_UNDER_TEST"] = mutant
        os._exit(int(pytest.main(["-q", "-x", "-p", "no:cacheprovider", *tests])))
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None
        time.sleep(0.02)


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
        code = run_tests(tests, name)
        survived += code == 0
        verdict = "TIMEOUT" if code is None else "SURVIVED" if code == 0 else "KILLED"
        print(f"{verdict} {name}", flush=True)
    return 1 if survived else 0


if __name__ == "__main__":
    raise SystemExit(main())
