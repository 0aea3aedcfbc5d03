"""``make mutants``' bookkeeping: what a second run re-tests, what the report calls unexplained.

mutmut itself is not run here (that takes hours); these are the decisions ``tools/mutants.py``
makes from mutmut's results, and the list of equivalent mutants everyone reviews.
"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from collections import Counter
from pathlib import Path

from tools.mutants import (
    EQUIVALENT_FILE,
    MODULES,
    REVIEWED,
    Equivalent,
    ModuleResult,
    changed_lines,
    forget_test_map,
    load_equivalent,
    module_glob,
    pending,
    recorded_seconds,
    report,
    summarize,
    targets,
    unchecked,
)

RESULTS = {
    "guard._sidecar.server.x_answer_stream__mutmut_1": "killed",
    "guard._sidecar.server.x_answer_stream__mutmut_2": "survived",
    "guard._sidecar.server.x_answer_stream__mutmut_3": "not checked",
    "guard._sidecar.server.x_answer_stream__mutmut_4": "timeout",
    "guard._sidecar.server.x_answer_stream__mutmut_5": "no tests",
    "guard._sidecar.server.x_answer_stream__mutmut_6": "caught by type check",
    "guard._sidecar.handlers.methods.x_serve__mutmut_1": "survived",
}


def test_module_globs_are_mutmut_names() -> None:
    assert module_glob("guard/_sidecar/server.py") == "guard._sidecar.server.*"
    assert module_glob("guard/_policy/bash/*") == "guard._policy.bash.*"


def test_a_second_run_retests_everything_not_killed_and_only_that() -> None:
    targets = pending("guard/_sidecar/server.py", RESULTS)
    assert targets == [
        "*guard._sidecar.server.x_answer_stream__mutmut_2",
        "*guard._sidecar.server.x_answer_stream__mutmut_3",
        "*guard._sidecar.server.x_answer_stream__mutmut_5",
    ]
    # Each pattern matches its own mutant and no other (mutant 2 is not mutant 20).
    names = [*RESULTS, "guard._sidecar.server.x_answer_stream__mutmut_20"]
    for target in targets:
        assert [n for n in names if fnmatch.fnmatchcase(n, target)] == [target[1:]]


def test_a_module_never_run_is_run_whole_and_one_all_killed_not_at_all() -> None:
    assert pending("audit/_log.py", RESULTS) is None
    killed = {k: v for k, v in RESULTS.items() if v in {"killed", "timeout"}}
    assert pending("guard/_sidecar/server.py", killed) == []


def test_one_run_covers_every_module_a_new_one_whole_the_others_what_is_left() -> None:
    modules = ["guard/_sidecar/server.py", "audit/_log.py", "guard/_sidecar/handlers/methods.py"]
    assert targets(modules, RESULTS, {}, fresh=False) == [
        "*guard._sidecar.server.x_answer_stream__mutmut_2",
        "*guard._sidecar.server.x_answer_stream__mutmut_3",
        "*guard._sidecar.server.x_answer_stream__mutmut_5",
        "audit._log.*",
        "*guard._sidecar.handlers.methods.x_serve__mutmut_1",
    ]
    assert targets(modules, RESULTS, {}, fresh=True) == [
        "guard._sidecar.server.*",
        "audit._log.*",
        "guard._sidecar.handlers.methods.*",
    ]
    killed = {k: v for k, v in RESULTS.items() if v in {"killed", "timeout"}}
    assert targets(["guard/_sidecar/server.py"], killed, {}, fresh=False) == []


def test_after_a_run_only_mutants_still_unchecked_are_run_again() -> None:
    # a survivor was just run; a mutant of a function that changed is new and "not checked"
    after = {**RESULTS, "guard._sidecar.server.x_answer_stream__mutmut_7": "not checked"}
    skip = frozenset({"guard._sidecar.server.x_answer_stream__mutmut_3"})
    assert unchecked("guard/_sidecar/server.py", after, skip) == [
        "guard._sidecar.server.x_answer_stream__mutmut_7"
    ]
    assert unchecked("guard/_sidecar/handlers/methods.py", after, frozenset()) == []


def test_recorded_seconds_add_up_the_durations_of_a_modules_meta_files(tmp_path: Path) -> None:
    def meta(path: str, durations: dict[str, float]) -> None:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(json.dumps({"durations_by_key": durations}))

    meta("guard/_policy/bash/parsing/syntax.py.meta", {"a": 1.5, "b": 2.0})
    meta("guard/_policy/bash/walker.py.meta", {"c": 0.5})
    meta("guard/_policy/rules.py.meta", {"d": 100.0})
    meta("audit/_log.py.meta", {})
    assert recorded_seconds("guard/_policy/bash/*", tmp_path) == 4.0
    assert recorded_seconds("guard/_policy/rules.py", tmp_path) == 100.0
    assert recorded_seconds("audit/_log.py", tmp_path) == 0.0
    assert recorded_seconds("audit/_chain.py", tmp_path) == 0.0  # never run: no meta file


def test_an_equivalent_still_as_reviewed_is_not_run_again() -> None:
    skip = frozenset(
        {
            "guard._sidecar.server.x_answer_stream__mutmut_2",  # survived before
            "guard._sidecar.server.x_answer_stream__mutmut_3",  # never run
        }
    )
    assert pending("guard/_sidecar/server.py", RESULTS, skip) == [
        "*guard._sidecar.server.x_answer_stream__mutmut_5",
    ]


def test_an_equivalent_not_run_again_is_reported_as_reviewed_not_as_not_run() -> None:
    name = "guard._sidecar.server.x_answer_stream__mutmut_3"  # "not checked"
    summary = summarize("guard/_sidecar/server.py", RESULTS, 1.0, frozenset({name}))
    assert summary.counts[REVIEWED] == 1 and summary.counts["not checked"] == 0
    reviewed_as = ("-return None", "+return 0")
    entry = Equivalent(reviewed_as, "returns 0 instead of None; nobody reads it")
    text, unexplained = report([summary], {name: entry}, {name: reviewed_as})
    assert name not in unexplained
    assert f"equivalent `{name}` ({REVIEWED}): {entry.why}" in text
    # the score counts only what ran: 3 killed of 5
    assert "| `guard/_sidecar/server.py` | 6 | 3 | 1 | 1 | 1 | 0 | 60.0 % | 1 |" in text
    # listed for another mutation, it is stale even though it did not run
    text, unexplained = report([summary], {name: entry}, {name: ("-if x:", "+if not x:")})
    assert unexplained == [
        "guard._sidecar.server.x_answer_stream__mutmut_2",
        name,
        "guard._sidecar.server.x_answer_stream__mutmut_5",
    ]
    assert f"STALE `{name}` ({REVIEWED})" in text


def test_the_report_names_every_survivor_and_says_which_are_explained() -> None:
    summary = summarize("guard/_sidecar/server.py", RESULTS, 12.0)
    assert summary.counts == Counter(
        {
            "killed": 1,
            "survived": 1,
            "not checked": 1,
            "timeout": 1,
            "no tests": 1,
            "caught by type check": 1,
        }
    )
    why = "returns 0 instead of None; nobody reads it"
    reviewed = ("-return None", "+return 0")
    equivalent = {
        "guard._sidecar.server.x_answer_stream__mutmut_2": Equivalent(reviewed, why),
        "guard._sidecar.server.x_answer_stream__mutmut_5": Equivalent(reviewed, why),
    }
    now = {
        "guard._sidecar.server.x_answer_stream__mutmut_2": reviewed,
        # the function changed since the review: mutant 5 is another mutation now
        "guard._sidecar.server.x_answer_stream__mutmut_5": ("-if x:", "+if not x:"),
    }
    text, unexplained = report([summary], equivalent, now)
    assert unexplained == ["guard._sidecar.server.x_answer_stream__mutmut_5"]
    assert f"equivalent `guard._sidecar.server.x_answer_stream__mutmut_2` (survived): {why}" in text
    assert (
        "STALE `guard._sidecar.server.x_answer_stream__mutmut_5` (no tests): listed as equivalent"
        " for ['-return None', '+return 0'], but the mutant is now ['-if x:', '+if not x:']"
    ) in text
    text, unexplained = report([summary], {}, {})
    assert unexplained == [
        "guard._sidecar.server.x_answer_stream__mutmut_2",
        "guard._sidecar.server.x_answer_stream__mutmut_5",
    ]
    assert "UNEXPLAINED `guard._sidecar.server.x_answer_stream__mutmut_5` (no tests)" in text
    # killed 3 (killed, timeout, type check) of 5 run; the one not checked is not run
    assert "| `guard/_sidecar/server.py` | 6 | 3 | 1 | 0 | 1 | 1 | 60.0 % | 12 |" in text


def test_a_mutation_is_the_changed_lines_of_its_diff_stripped() -> None:
    diff = (
        "--- guard/_sidecar/server.py\n+++ guard/_sidecar/server.py\n@@ -1,4 +1,4 @@\n"
        " def f():\n-    return None\n+    return 0\n     # tail\n"
    )
    assert changed_lines(diff) == ("-return None", "+return 0")


def test_a_mutant_whose_tests_are_killed_by_a_signal_is_detected() -> None:
    results = {"audit._chain.x_lines_backward__mutmut_14": "segfault"}
    summary = summarize("audit/_chain.py", results, 0.0)
    assert summary.survivors == ()
    assert pending("audit/_chain.py", results) == []


def test_each_run_forgets_the_test_map_and_keeps_the_verdicts(tmp_path: Path) -> None:
    (tmp_path / "audit").mkdir()
    verdicts = tmp_path / "audit" / "_log.py.meta"
    verdicts.write_text('{"exit_code_by_key": {}}')
    (tmp_path / "mutmut-stats.json").write_text("{}")
    forget_test_map(tmp_path)
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == ["_log.py.meta"]
    forget_test_map(tmp_path)  # nothing to forget: no error
    assert verdicts.read_text() == '{"exit_code_by_key": {}}'


def test_an_empty_module_result_scores_nothing() -> None:
    text, unexplained = report([ModuleResult("audit/_log.py", Counter(), (), 0.0)], {}, {})
    assert unexplained == []
    assert "| `audit/_log.py` | 0 | 0 | 0 | 0 | 0 | 0 | - | 0 |" in text


def test_every_listed_equivalent_names_a_mutant_of_a_mutated_module_once_with_a_reason() -> None:
    entries = tomllib.loads(EQUIVALENT_FILE.read_text(encoding="utf-8"))["equivalent"]
    names = [entry["name"] for entry in entries]
    assert len(names) == len(set(names))
    prefixes = [module_glob(m).removesuffix("*") for m in MODULES]
    for entry in entries:
        assert set(entry) == {"name", "mutation", "why"}, entry
        assert entry["mutation"] and all(line[:1] in "+-" for line in entry["mutation"]), entry
        assert "__mutmut_" in entry["name"], entry
        assert any(entry["name"].startswith(p) for p in prefixes), entry["name"]
        assert len(entry["why"]) >= 20, entry
    assert load_equivalent() == {
        e["name"]: Equivalent(tuple(e["mutation"]), e["why"]) for e in entries
    }
