"""``env`` and ``xargs``: the command they run, what they change around it, and when they ask.

``env``: options, ``-u NAME``, ``-C DIR``, ``NAME=value`` assignments (sensitive ones ask) and
``-S STRING`` (parsed as a script). ``xargs``: its command gets arguments only known at
runtime (it asks, unless the command only prints); static input (a pipe from ``echo``, a
here-string) is used, and ``-I``/``-i``/``--replace=`` markers are replaced line by line.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze

Commands = list[tuple[list[str | None], tuple[str, ...]]]
Findings = list[tuple[str, str]]


def walk(command: str) -> tuple[Commands, Findings]:
    """The simple commands (argv, wrapper chain) and the findings of ``command``."""
    script = analyze(command, cwd="/w", home="/h")
    commands: Commands = [([w.value for w in c.argv], c.via) for c in script.commands]
    return commands, [(f.check, f.detail) for f in script.findings]


def cwds(command: str) -> list[tuple[list[str | None], str]]:
    script = analyze(command, cwd="/w", home="/h")
    return [([w.value for w in c.argv], c.cwd) for c in script.commands]


def env_unknown(option: str) -> tuple[str, str]:
    return ("opaque-wrapper", "env with an option the analysis does not know: " + option)


def assigns(name: str) -> tuple[str, str]:
    return (
        "shell-environment",
        f"assigns {name}, which changes what later commands run or where their paths point",
    )


RM_X: list[str | None] = ["rm", "x"]
ENV_RM_X: Commands = [(RM_X, ("env",))]


# -- env -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "env rm x",
        "env -i rm x",
        "env -i -0 -v --debug --null --ignore-environment rm x",
        "env -u PATH rm x",
        "env --unset PATH rm x",
        "env -u X -i rm x",
        "env -- rm x",
        "env -u X -- rm x",
        "env -- A=1 rm x",
        "env A=1 B=2 rm x",
        "env a=1 rm x",
        "env _a9=1 rm x",
        "env -i A=1 rm x",
        "env -u X A=1 rm x",
        "env -i A=1 -- rm x",
    ],
)
def test_env_runs_the_command_after_its_options_and_assignments(command: str) -> None:
    assert walk(command) == (ENV_RM_X, [])


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("env", []),
        ("env -i", []),
        ("env -u", []),
        ("env -C sub", []),
        ("env -C", []),
        ("env --chdir", []),
        ("env -u X rm y z", [(["rm", "y", "z"], ("env",))]),
        ("env -i nice env -u X rm x", [(RM_X, ("env", "nice", "env"))]),
    ],
)
def test_env_operands(command: str, expected: Commands) -> None:
    assert walk(command) == (expected, [])


def test_env_with_a_command_known_only_at_runtime() -> None:
    assert walk('env "$X" rm') == (
        [([None, "rm"], ("env",))],
        [("dynamic-command", 'command name only known at runtime: "$X"')],
    )


@pytest.mark.parametrize(
    ("command", "option"),
    [("env -x rm x", "-x"), ("env --bogus rm x", "--bogus"), ("env -s rm x", "-s")],
)
def test_an_unknown_env_option_asks(command: str, option: str) -> None:
    assert walk(command) == (ENV_RM_X, [env_unknown(option)])


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("env PATH=/x rm x", "PATH"),
        ("env LD_PRELOAD=a=b rm x", "LD_PRELOAD"),
        ("env -i A=1 BASH_ENV=/srv/x rm x", "BASH_ENV"),
    ],
)
def test_env_assigning_a_sensitive_variable_asks(command: str, name: str) -> None:
    assert walk(command) == (ENV_RM_X, [assigns(name)])


@pytest.mark.parametrize(
    ("command", "cwd"),
    [
        ("env -C /srv rm x", "/srv"),
        ("env --chdir sub rm x", "/w/sub"),
        ("env -C sub -u X rm x", "/w/sub"),
        ("env -u X -C sub rm x", "/w/sub"),
        ("env -i -C sub rm x", "/w/sub"),
        ('env -u "$V" -C sub rm x', "/w/sub"),
        ("env -u sub rm x", "/w"),
        ("env --unset sub rm x", "/w"),
    ],
)
def test_env_chdir_moves_the_command(command: str, cwd: str) -> None:
    assert cwds(command) == [(RM_X, cwd)]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("env -S 'rm -rf a' b", ["rm", "-rf", "a", "b"]),
        ("env -S 'rm -rf a'", ["rm", "-rf", "a"]),
        ("env -S 'rm -rf' a 'b c' \"$X\"", ["rm", "-rf", "a", "b c", None]),
        ("env -S'rm -rf' a", ["rm", "-rf", "a"]),
        ("env --split-string='rm -rf' a", ["rm", "-rf", "a"]),
        ("env --split-string 'rm -rf' a", ["rm", "-rf", "a"]),
        ("env -i -S 'rm -rf' a", ["rm", "-rf", "a"]),
        ("env -u X -S 'rm -rf' a", ["rm", "-rf", "a"]),
    ],
)
def test_env_split_string_is_parsed_as_a_script(command: str, argv: list[str | None]) -> None:
    assert walk(command) == ([(argv, ())], [])


def test_env_split_string_keeps_what_follows_the_first_equals_sign() -> None:
    assert walk("env --split-string='A=1 rm -rf a'") == ([([], ()), (["rm", "-rf", "a"], ())], [])


@pytest.mark.parametrize("command", ["env -S", "env --split-string", "env -S ''"])
def test_env_split_string_without_a_string_runs_nothing(command: str) -> None:
    assert walk(command) == ([], [])


def test_env_split_string_built_at_runtime_asks() -> None:
    assert walk('env -S "$X" a') == (
        [],
        [("dynamic-script", "env -S splits a string built at runtime")],
    )


# -- xargs ---------------------------------------------------------------------------------


def xargs_asks(command: str) -> tuple[str, str]:
    return ("xargs", "xargs runs a command on arguments only known at runtime: " + command)


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("xargs", ["echo", None]),
        ("xargs echo", ["echo", None]),
        ("xargs printf %s", ["printf", "%s", None]),
        ("xargs true", ["true", None]),
        ("xargs false", ["false", None]),
        ("xargs /bin/echo", ["/bin/echo", None]),
    ],
)
def test_xargs_that_only_prints_does_not_ask(command: str, argv: list[str | None]) -> None:
    assert walk(command) == ([(argv, ("xargs",))], [])


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("xargs rm", ["rm", None]),
        ("xargs -n 1 -P4 -d x rm", ["rm", None]),
        ("xargs -0 --max-args 2 rm", ["rm", None]),
        ("xargs -n1 rm", ["rm", None]),
        ("xargs -I % rm %", ["rm", "%"]),
        ("xargs -i rm {}", ["rm", "{}"]),
    ],
)
def test_xargs_without_static_input_asks(command: str, argv: list[str | None]) -> None:
    assert walk(command) == ([(argv, ("xargs",))], [xargs_asks(command)])


def test_xargs_input_only_known_at_runtime_is_named_in_the_reasons(
    bash: Callable[[str], Verdict],
) -> None:
    verdict = bash("xargs rm")
    assert verdict.verdict == "confirm"
    assert "a path only known at runtime: <xargs input>" in verdict.reasons


@pytest.mark.parametrize(
    ("command", "xargs", "argv"),
    [
        ("echo a b | xargs rm", "xargs rm", ["rm", "a", "b"]),
        ("xargs rm <<< 'a b'", "xargs rm", ["rm", "a", "b"]),
        ("xargs -n1 rm <<< a", "xargs -n1 rm", ["rm", "a"]),
    ],
)
def test_xargs_appends_static_input(command: str, xargs: str, argv: list[str | None]) -> None:
    commands, findings = walk(command)
    assert commands[-1] == (argv, ("xargs",))
    assert findings == [xargs_asks(xargs)]


def test_xargs_echo_of_static_input_does_not_ask() -> None:
    assert walk("echo a b | xargs") == (
        [(["echo", "a", "b"], ()), (["echo", "a", "b"], ("xargs",))],
        [],
    )


@pytest.mark.parametrize(
    ("command", "runs"),
    [
        ("xargs -I{} rm {}/x <<< $'a\\n\\nb'", ["a/x", "b/x"]),
        ("xargs -I % rm %/x <<< $'a\\nb'", ["a/x", "b/x"]),
        ("xargs -I@ rm @/y <<< a", ["a/y"]),
        ("xargs -i rm {}/x <<< a", ["a/x"]),
        ("xargs -iX rm X/y <<< a", ["a/y"]),
        ("xargs --replace=@ rm @/y <<< a", ["a/y"]),
        ("xargs --replace=a=b rm a=b/x <<< c", ["c/x"]),
        ('xargs -I "$M" rm {}/x <<< a', ["a/x"]),
        ("xargs -I{} rm {}/x <<< a <<< b", ["a/x", "b/x"]),
        ("echo a | xargs -I{} rm {}/x", ["a/x"]),
    ],
)
def test_xargs_replaces_its_marker_line_by_line(command: str, runs: list[str]) -> None:
    commands, findings = walk(command)
    assert [c for c in commands if c[0][0] == "rm"] == [(["rm", r], ("xargs",)) for r in runs]
    assert [f[0] for f in findings] == ["xargs"]


def test_xargs_replacement_keeps_words_known_only_at_runtime() -> None:
    assert walk('xargs -I{} rm "$V" {} <<< a')[0] == [(["rm", None, "a"], ("xargs",))]


def test_xargs_replacement_of_a_command_known_only_at_runtime() -> None:
    command = 'xargs -I{} "$C" {}'
    assert walk(command + " <<< a") == (
        [([None, "a"], ("xargs",))],
        [xargs_asks(command), ("dynamic-command", 'command name only known at runtime: "$C"')],
    )


@pytest.mark.parametrize(("lines", "runs"), [(7, 7), (8, 8), (9, 8), (20, 8)])
def test_xargs_replacement_looks_at_a_bounded_number_of_lines(lines: int, runs: int) -> None:
    text = "\\n".join(str(n) for n in range(1, lines + 1))
    commands, _ = walk(f"xargs -I{{}} rm {{}} <<< $'{text}'")
    assert commands == [(["rm", str(n)], ("xargs",)) for n in range(1, runs + 1)]


def test_xargs_without_a_marker_takes_all_static_input() -> None:
    text = "\\n".join(str(n) for n in range(1, 10))
    commands, _ = walk(f"xargs rm <<< $'{text}'")
    assert commands == [(["rm", *(str(n) for n in range(1, 10))], ("xargs",))]


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("xargs psql -c", "builtin.xargs"),
        ("echo 'drop table t' | xargs psql -c", "builtin.xargs"),
        ("xargs psql -c <<< 'drop table t'", "builtin.xargs"),
        ("echo 'drop table t' | xargs -I{} psql -c {}", "builtin.sql-destructive"),
        ("xargs -I{} psql -c {} <<< 'drop table t'", "builtin.sql-destructive"),
    ],
)
def test_rules_looking_at_stdin_see_the_command_xargs_runs(
    bash: Callable[[str], Verdict], command: str, rule: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert rule in verdict.rule_ids


def test_xargs_replacement_keeps_the_words_as_written_in_findings() -> None:
    command = "xargs -I{} sudo rm {}"
    commands, findings = walk(command + " <<< a")
    assert commands == [(["rm", "a"], ("xargs", "sudo"))]
    assert findings == [
        xargs_asks(command),
        (
            "opaque-wrapper",
            "sudo runs another command in a way the analysis does not follow precisely: sudo rm {}",
        ),
    ]
