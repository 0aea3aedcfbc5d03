"""The order ``make mutants`` runs a mutant's tests in, and the record of which test killed what.

The order decides only how soon a killed mutant's run stops (``pytest -x``), never a verdict;
these pin it, and that the kill record written by concurrent test runs reads back whole.
"""

from __future__ import annotations

import os
from pathlib import Path

from tools.mutant_order import KillTally, function_of, record_kill, run_order

DURATIONS = {"t::slow_cli": 20.0, "t::b": 0.01, "t::a": 0.01, "t::medium": 1.5}


def test_without_kills_a_mutants_tests_run_fastest_first_and_unknown_ones_last() -> None:
    tests = ["t::slow_cli", "t::new", "t::medium", "t::b", "t::a"]
    expected = ["t::a", "t::b", "t::medium", "t::slow_cli", "t::new"]
    assert run_order(tests, DURATIONS) == expected
    assert run_order(tests, DURATIONS, {}) == expected
    assert run_order([], DURATIONS) == []


def test_tests_that_killed_a_sibling_run_first_the_most_kills_first() -> None:
    tests = ["t::slow_cli", "t::new", "t::medium", "t::b", "t::a"]
    kills = {"t::slow_cli": 1, "t::medium": 3, "t::elsewhere": 9}
    assert run_order(tests, DURATIONS, kills) == [
        "t::medium",
        "t::slow_cli",
        "t::a",
        "t::b",
        "t::new",
    ]


def test_a_mutant_belongs_to_the_function_before_its_number() -> None:
    assert function_of("audit._log.xǁAuditLogǁappend__mutmut_12") == "audit._log.xǁAuditLogǁappend"
    assert function_of("a.x_f__mutmut_x__mutmut_3") == "a.x_f__mutmut_x"


def test_kills_are_tallied_per_function_as_the_record_grows(tmp_path: Path) -> None:
    path = tmp_path / "kills.tsv"
    tally = KillTally(path)
    assert tally.of("m.x_f__mutmut_1") == {}  # no record yet: no error
    record_kill(path, "m.x_f__mutmut_1", "t::a")
    record_kill(path, "m.x_f__mutmut_2", "t::a")
    record_kill(path, "m.x_g__mutmut_1", "t::b")
    assert tally.of("m.x_f__mutmut_9") == {"t::a": 2}
    record_kill(path, "m.x_f__mutmut_3", "t::c")
    assert tally.of("m.x_f__mutmut_9") == {"t::a": 2, "t::c": 1}  # read on, not twice
    assert tally.of("m.x_g__mutmut_7") == {"t::b": 1}
    assert KillTally(path).of("m.x_f__mutmut_4") == {"t::a": 2, "t::c": 1}  # a later run


def test_a_line_still_being_written_is_read_when_it_is_whole(tmp_path: Path) -> None:
    path = tmp_path / "kills.tsv"
    path.write_text("m.x_f__mutmut_1\tt::a\nm.x_f__mutmut_2\tt::")
    tally = KillTally(path)
    assert tally.of("m.x_f__mutmut_5") == {"t::a": 1}
    with path.open("a") as out:
        out.write("b\n")
    assert tally.of("m.x_f__mutmut_5") == {"t::a": 1, "t::b": 1}


def test_a_name_that_would_split_a_line_is_not_recorded(tmp_path: Path) -> None:
    path = tmp_path / "kills.tsv"
    record_kill(path, "m.x_f__mutmut_1", "t::a\tb")
    record_kill(path, "m.x_f__mutmut_1", "t::a\nm.x_f__mutmut_2\tt::c")
    record_kill(path, "m.x_f__mutmut_1", "t::ok")
    assert path.read_text() == "m.x_f__mutmut_1\tt::ok\n"
    path.write_text("no tab here\n\tt::a\nm.x_f__mutmut_1\t\n" + "m.x_f__mutmut_1\tt::ok\n")
    assert KillTally(path).of("m.x_f__mutmut_1") == {"t::ok": 1}


def test_kills_recorded_by_concurrent_runs_read_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "kills.tsv"
    children = []
    for worker in range(4):
        pid = os.fork()
        if pid == 0:  # a test run of mutmut's, as its fork server starts them
            for i in range(200):
                record_kill(path, f"m.x_f{worker}__mutmut_{i}", f"tests/t.py::test_{worker}[{i}]")
            os._exit(0)
        children.append(pid)
    for pid in children:
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    tally = KillTally(path)
    for worker in range(4):
        kills = tally.of(f"m.x_f{worker}__mutmut_0")
        assert sum(kills.values()) == 200
        assert all(test.startswith(f"tests/t.py::test_{worker}[") for test in kills)
