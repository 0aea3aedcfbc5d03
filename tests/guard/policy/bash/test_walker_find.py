"""``find``: the command ``-exec``/``-ok`` runs on every file, and the files ``-fprint`` writes."""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import Command, Finding, analyze


def _runs(action: str) -> Finding:
    return Finding("find-exec", f"find {action} runs a command on every file it finds")


def _writes(action: str) -> Finding:
    return Finding("find-exec", f"find {action} writes a file")


def findings(command: str) -> list[Finding]:
    return analyze(command, cwd="/w", home="/h").findings


def run_by_find(command: str) -> list[Command]:
    """The commands ``find`` itself runs (those it reached through ``-exec`` and kin)."""
    script = analyze(command, cwd="/w", home="/h")
    return [c for c in script.commands if any(v.startswith("find ") for v in c.via)]


def argvs(commands: list[Command]) -> list[list[str | None]]:
    return [[w.value for w in c.argv] for c in commands]


@pytest.mark.parametrize(
    ("command", "expected_findings", "inner"),
    [
        ("find -exec rm {} +", [_runs("-exec")], [["rm", None]]),
        ("find . -exec rm {} +", [_runs("-exec")], [["rm", None]]),
        ("find . -execdir rm -f {} \\;", [_runs("-execdir")], [["rm", "-f", None]]),
        ("find . -ok rm {} \\;", [_runs("-ok")], [["rm", None]]),
        ("find . -okdir rm {} +", [_runs("-okdir")], [["rm", None]]),
        ("find . -name + -exec rm {} \\;", [_runs("-exec")], [["rm", None]]),
        ("find . -name ';' -exec rm {} \\;", [_runs("-exec")], [["rm", None]]),
        ("find . -exec rm {}", [_runs("-exec")], [["rm", None]]),
        ("find . -exec echo -fprint \\;", [_runs("-exec")], [["echo", "-fprint"]]),
        ("find . -exec echo -exec \\;", [_runs("-exec")], [["echo", "-exec"]]),
        (
            "find . -exec rm {} \\; -fprint out",
            [_runs("-exec"), _writes("-fprint")],
            [["rm", None]],
        ),
        (
            "find . -exec rm {} + -exec shred -u {} \\; -print",
            [_runs("-exec"), _runs("-exec")],
            [["rm", None], ["shred", "-u", None]],
        ),
        ("find . -exec \\; -fprint out", [_runs("-exec"), _writes("-fprint")], []),
        ("find . -exec +", [_runs("-exec")], []),
    ],
)
def test_find_actions_are_found_with_the_commands_they_run(
    command: str, expected_findings: list[Finding], inner: list[list[str | None]]
) -> None:
    assert findings(command) == expected_findings
    assert argvs(run_by_find(command)) == inner


@pytest.mark.parametrize("action", ["-fprint", "-fprint0", "-fprintf", "-fls"])
def test_find_output_file_actions_write(action: str) -> None:
    assert findings(f"find . {action} out.txt -name x") == [_writes(action)]


def test_every_output_file_action_is_reported_in_order() -> None:
    command = "find . -fprint0 a -fls b -fprintf c %p -fprint d -name x"
    assert findings(command) == [
        _writes("-fprint0"),
        _writes("-fls"),
        _writes("-fprintf"),
        _writes("-fprint"),
    ]


@pytest.mark.parametrize(
    "command",
    ["find . -name x", "find . -type f -print", "find /srv -print0"],
)
def test_find_without_actions_is_not_flagged(command: str) -> None:
    assert findings(command) == []


def test_the_found_file_placeholder_is_only_known_at_runtime() -> None:
    (rm,) = run_by_find("find . -exec rm -- {} +")
    assert [(w.value, w.raw) for w in rm.argv] == [("rm", "rm"), ("--", "--"), (None, "{}")]


def test_the_command_find_runs_says_it_came_through_find() -> None:
    (rm,) = run_by_find("find . -execdir rm {} +")
    assert rm.via == ("find -execdir",)
    (shred,) = run_by_find("sudo find . -exec shred {} \\;")
    assert shred.via == ("sudo", "find -exec")


def test_the_command_find_runs_reads_no_pipeline_input() -> None:
    script = analyze("echo x | find . -exec cat {} \\;", cwd="/w", home="/h")
    (cat,) = [c for c in script.commands if c.program == "cat"]
    assert cat.producers == []
    assert cat.stdin_texts == []


def test_find_output_piped_to_a_shell_asks() -> None:
    assert findings("find . -exec cat {} \\; | bash") == [
        _runs("-exec"),
        Finding("shell-stdin", "bash reads its program on stdin"),
    ]


def test_find_running_source_on_stdin_asks() -> None:
    assert findings("find . -exec source /dev/stdin \\;") == [
        _runs("-exec"),
        Finding("shell-stdin", "source runs code from stdin or a stream"),
    ]
