"""Harmless wrappers and package runners: which command they run, and which options ask.

``nice``, ``time``, ``timeout``, ``npx`` … are unwrapped precisely: their options (with the
values they take) are skipped, the inner command is what the analysis reports, and an
option the analysis does not know is a finding (the call asks). ``uv run``, ``npx``,
``busybox`` … run the command after their own options.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.model import MAX_DEPTH
from guard._policy.bash.programs.card import words
from guard._policy.bash.running.wrappers import wrapper_handler
from guard._policy.bash.walker import analyze

Commands = list[tuple[list[str | None], tuple[str, ...]]]
Findings = list[tuple[str, str]]


def walk(command: str) -> tuple[Commands, Findings]:
    """The simple commands (argv, wrapper chain) and the findings of ``command``."""
    script = analyze(command, cwd="/w", home="/h")
    commands: Commands = [([w.value for w in c.argv], c.via) for c in script.commands]
    return commands, [(f.check, f.detail) for f in script.findings]


def unknown(program: str, option: str) -> tuple[str, str]:
    return ("opaque-wrapper", f"{program} with an option the analysis does not know: {option}")


RM_X: list[str | None] = ["rm", "x"]


@pytest.mark.parametrize(
    ("command", "via"),
    [
        ("nice rm x", "nice"),
        ("nohup rm x", "nohup"),
        ("nice -n 5 rm x", "nice"),
        ("nice -n5 rm x", "nice"),
        ("nice --adjustment 5 rm x", "nice"),
        ("nice --adjustment=5 rm x", "nice"),
        ("nice -10 rm x", "nice"),
        ("nice -- rm x", "nice"),
        ("time -p rm x", "time"),
        ("time -pv rm x", "time"),
        ("time -o out rm x", "time"),
        ("time -oout rm x", "time"),
        ("time -po out rm x", "time"),
        ("time -p -o out rm x", "time"),
        ("time --output out rm x", "time"),
        ("time --output=out rm x", "time"),
        ("time --verbose rm x", "time"),
        ("time --verbose -p rm x", "time"),
        ("time -p --output out rm x", "time"),
        ("time --format='real=%e' rm x", "time"),
        ("time -p -- rm x", "time"),
        ("timeout 5 rm x", "timeout"),
        ("timeout -s KILL 5 rm x", "timeout"),
        ("timeout --signal=KILL -k 1 5 rm x", "timeout"),
        ("timeout --foreground --preserve-status 5 rm x", "timeout"),
        ("command rm x", "command"),
        ("command -p rm x", "command"),
        ("exec -a name rm x", "exec"),
        ("exec -cl rm x", "exec"),
        ("stdbuf -oL -eL rm x", "stdbuf"),
        ("ionice -c 2 -n 7 rm x", "ionice"),
        ("ionice -c2 -t rm x", "ionice"),
        ("ionice --ignore rm x", "ionice"),
        ("chronic -ev rm x", "chronic"),
        ("unbuffer -p rm x", "unbuffer"),
        ("coproc rm x", "coproc"),
        ("builtin rm x", "builtin"),
        ("taskset 0x3 rm x", "taskset"),
        ("taskset -c 1,2 rm x", "taskset"),
        ("taskset -a 0x3 rm x", "taskset"),
        ("taskset --cpu-list 1 rm x", "taskset"),
        ("npx rm x", "npx"),
        ("npx -y rm x", "npx"),
        ("npx -y -p cowsay rm x", "npx"),
        ("npx --package=x --yes rm x", "npx"),
        ("bunx --bun -p x rm x", "bunx"),
        ("uvx --from x rm x", "uvx"),
        ("uvx -q --isolated rm x", "uvx"),
    ],
)
def test_a_harmless_wrapper_runs_the_command_after_its_options(command: str, via: str) -> None:
    assert walk(command) == ([(RM_X, (via,))], [])


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("time -Z rm x", "-Z"),
        ("time -pZ rm x", "-pZ"),
        ("time -Zp rm x", "-Zp"),
        ("time --bogus rm x", "--bogus"),
        ("time --bogus=1 rm x", "--bogus=1"),
        # after a known option, whatever its form, the next option is still looked at
        ("time --output=out -Z rm x", "-Z"),
        ("time --verbose -Z rm x", "-Z"),
        ("time --output out -Z rm x", "-Z"),
        ("time -o out -Z rm x", "-Z"),
        ("time -ofile -Z rm x", "-Z"),
        ("time -p -v -a -q -Z rm x", "-Z"),
        ("npx -x rm x", "-x"),
    ],
)
def test_an_unknown_option_of_a_harmless_wrapper_asks(command: str, option: str) -> None:
    program = command.split()[0]
    assert walk(command) == ([(RM_X, (program,))], [unknown(program, option)])


@pytest.mark.parametrize(
    "command",
    [
        # "-Z" is the value of the option before it (an output file), not an option
        "time -o -Z rm x",
        "time --output -Z rm x",
        "time -p -o -Z rm x",
        "time -p --output -Z rm x",
    ],
)
def test_an_option_value_that_looks_like_an_option_is_skipped(command: str) -> None:
    assert walk(command) == ([(RM_X, ("time",))], [])


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # after "--" a word starting with "-" is the command
        ("nohup -- -x y", [(["-x", "y"], ("nohup",))]),
        # a lone "-" is an operand, not an option
        ("nohup - x", [(["-", "x"], ("nohup",))]),
        ("time -p -- -Z", [(["-Z"], ("time",))]),
        # no command at all: nothing runs
        ("nice -n 5", []),
        ("time -p", []),
        ("timeout 5", []),
        ("timeout", []),
        ("npx -c", []),
        # timeout's first operand is the duration
        ("timeout 5 rm", [(["rm"], ("timeout",))]),
        # taskset's first operand is the CPU mask, unless -p/--pid names a process
        ("taskset 0x3 rm", [(["rm"], ("taskset",))]),
        ("taskset -p 0x3 1234", [(["0x3", "1234"], ("taskset",))]),
        ("taskset --pid 0x3 1234", [(["0x3", "1234"], ("taskset",))]),
        # a harmless wrapper's option words are never taken for the command
        ("command -p rm -v x", [(["rm", "-v", "x"], ("command",))]),
        ("command -- rm -v", [(["rm", "-v"], ("command",))]),
    ],
)
def test_operands_of_harmless_wrappers(command: str, expected: Commands) -> None:
    assert walk(command) == (expected, [])


def test_a_command_name_known_only_at_runtime_after_a_wrapper() -> None:
    assert walk('nice "$P" x') == (
        [([None, "x"], ("nice",))],
        [("dynamic-command", 'command name only known at runtime: "$P"')],
    )


@pytest.mark.parametrize("command", ["command -v rm", "command -V rm", "command -p -v rm"])
def test_command_v_only_looks_a_name_up(command: str) -> None:
    assert walk(command) == ([], [])


@pytest.mark.parametrize(
    ("command", "inner"),
    [
        ("time -v rm x", RM_X),
        ("nice -10 rm -v x", ["rm", "-v", "x"]),
        ("ionice -c 2 rm x", RM_X),
    ],
)
def test_only_command_treats_v_as_a_lookup_and_only_npx_has_c(
    command: str, inner: list[str | None]
) -> None:
    program = command.split()[0]
    assert walk(command) == ([(inner, (program,))], [])


@pytest.mark.parametrize(
    "command",
    ["npx -c 'rm -rf a'", "npx --call 'rm -rf a'", "npx -y -c 'rm -rf a'", "npx -c 'rm -rf a' b"],
)
def test_npx_call_runs_its_string_as_a_script(command: str) -> None:
    assert walk(command) == ([(["rm", "-rf", "a"], ())], [])


def test_npx_call_of_a_string_built_at_runtime_asks() -> None:
    assert walk('npx -c "$X"') == (
        [],
        [("dynamic-script", "npx -c runs a string built at runtime")],
    )


def nest(command: str, levels: int) -> str:
    for _ in range(levels):
        command = "sh -c " + shlex.quote(command)
    return command


@pytest.mark.parametrize(
    ("inner", "why"),
    [
        ("npx -c 'rm x'", "npx -c"),
        ("env -S 'rm x'", "env -S"),
        ("su -c 'rm x'", "su runs a string"),
    ],
)
def test_a_wrapper_string_beyond_the_nesting_limit_names_the_wrapper(inner: str, why: str) -> None:
    findings = walk(nest(inner, MAX_DEPTH))[1]
    assert ("nesting-too-deep", f"{why}: nested deeper than {MAX_DEPTH} levels") in findings


def test_a_wrapper_string_at_the_nesting_limit_is_still_parsed() -> None:
    commands, findings = walk(nest("npx -c 'rm x'", MAX_DEPTH - 1))
    assert (RM_X, ()) in commands
    assert not [f for f in findings if f[0] == "nesting-too-deep"]


@pytest.mark.parametrize(
    ("command", "via"),
    [
        ("busybox rm -rf x", "busybox"),
        ("/bin/busybox rm -rf x", "busybox"),
        ("toybox rm -rf x", "busybox"),
    ],
)
def test_busybox_runs_its_applet(command: str, via: str) -> None:
    assert walk(command) == ([(["rm", "-rf", "x"], (via,))], [])


@pytest.mark.parametrize(
    ("command", "via"),
    [
        ("uv run rm x", "uv run"),
        ("uv --project d run rm x", "uv run"),
        ("uv --project=d run rm x", "uv run"),
        ("uv -p 3.12 run rm x", "uv run"),
        ("uv run -p 3.12 rm x", "uv run"),
        ("uv run --with rich rm x", "uv run"),
        ("uv run --frozen rm x", "uv run"),
        ("poetry run rm x", "poetry run"),
        ("poetry -C d run rm x", "poetry run"),
        ("poetry --directory d run rm x", "poetry run"),
        ("pipenv run rm x", "pipenv run"),
        ("pdm -p d run rm x", "pdm run"),
        ("hatch -e test run rm x", "hatch run"),
        ("hatch run -e test rm x", "hatch run"),
        ("rye run rm x", "rye run"),
        ("conda run -n env rm x", "conda run"),
        ("mamba run --prefix p rm x", "mamba run"),
        ("pnpm exec rm x", "pnpm exec"),
        ("pnpm dlx rm x", "pnpm dlx"),
        ("pnpm --filter a exec rm x", "pnpm exec"),
        ("yarn dlx rm x", "yarn dlx"),
        ("yarn exec rm x", "yarn exec"),
        ("bun x rm x", "bun x"),
        ("pipx run --spec x rm x", "pipx run"),
        ("npm exec rm x", "npm exec"),
        ("npm x rm x", "npm x"),
        ("npm -w pkg exec rm x", "npm exec"),
    ],
)
def test_a_runner_subcommand_runs_the_command_after_it(command: str, via: str) -> None:
    assert walk(command) == ([(RM_X, (via,))], [])


@pytest.mark.parametrize(
    "command",
    ["uv", "uv -p 3.12", "uv sync", "uv pip install x", "pnpm install", "bun run build"],
)
def test_a_runner_without_its_run_subcommand_is_the_program_itself(command: str) -> None:
    commands, _ = walk(command)
    assert commands == [(command.split(), ())]


@pytest.mark.parametrize("program", ["uv", "poetry", "npm", "bun"])
def test_runners_have_a_handler(program: str) -> None:
    handler = wrapper_handler(program)
    assert handler is not None
    assert handler is wrapper_handler("pipx")


@pytest.mark.parametrize("program", ["rm", "git", "python", "bash", "uvicorn"])
def test_ordinary_programs_have_no_wrapper_handler(program: str) -> None:
    assert wrapper_handler(program) is None


def test_word_sets_are_split_on_whitespace() -> None:
    # a wrapper's card writes its options with the cards' one helper
    assert words(" --a  --b\n--c ") == frozenset({"--a", "--b", "--c"})
    assert words("") == frozenset()
