"""Wrappers: commands that run another command (``sudo``, ``env``, ``xargs``, ``uv run`` …).

A handler gets the walker and a command's argv and returns the inner argv with the wrapper
chain (``via``), ``None`` when it has dealt with the command itself (a string it parsed as
a nested script, a finding), or :data:`PLAIN` when the program is not acting as a wrapper
this time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from guard._policy.bash.model import Command, Word, join_raw, program_name
from guard._policy.bash.quoting import shell_quote
from guard._policy.bash.syntax import SyntaxWalker

__all__ = ["PLAIN", "Handler", "Plain", "Step", "wrapper_handler"]


class Plain:
    """The type of :data:`PLAIN`."""


PLAIN = Plain()
Step = tuple[list[Word], tuple[str, ...]] | Plain | None
Handler = Callable[[SyntaxWalker, list[Word], tuple[str, ...], list[Command], list[str]], Step]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Short options taking a value (as letters) and long ones, per wrapper.
_OPTS: dict[str, tuple[str, frozenset[str]]] = {
    "sudo": (
        "ugpCDhrtTU",
        _set("""
        --user --group --prompt --chdir --close-from --role --type --command-timeout
        --other-user --host
    """),
    ),
    "doas": ("uC", frozenset()),
    "nice": ("n", _set("--adjustment")),
    "ionice": ("cnt", _set("--class --classdata")),
    "nohup": ("", frozenset()),
    "setsid": ("", frozenset()),
    "time": ("fo", _set("--format --output")),
    "stdbuf": ("ioe", _set("--input --output --error")),
    "unbuffer": ("", frozenset()),
    "chronic": ("", frozenset()),
    "coproc": ("", frozenset()),
    "builtin": ("", frozenset()),
    "exec": ("a", frozenset()),
    "command": ("", frozenset()),
    "timeout": ("sk", _set("--signal --kill-after")),
    "chrt": ("", frozenset()),
    "taskset": ("", frozenset()),
    "flock": ("wEn", _set("--timeout --conflict-exit-code")),
    "npx": ("pc", _set("--package --call")),
    "bunx": ("p", _set("--package")),
    "uvx": ("p", _set("--from --with --python --with-requirements --index")),
    "busybox": ("", frozenset()),
}
_XARGS_SHORT = "adEILnPs"
_XARGS_LONG = _set("""
    --arg-file --delimiter --eof --replace --max-lines --max-args --max-procs --max-chars
    --process-slot-var
""")
_SSH_SHORT = "bcDEeFIiJLlmOoPpQRSWw"
# program: (subcommands that run a command, short value options, long value options)
_RUNNERS: dict[str, tuple[tuple[str, ...], str, frozenset[str]]] = {
    "uv": (
        ("run",),
        "p",
        _set("""
        --with --python --project --directory --env-file --extra --group --package --index
        --from --with-requirements --with-editable --only-group
    """),
    ),
    "poetry": (("run",), "C", _set("--directory --project")),
    "pipenv": (("run",), "", frozenset()),
    "pdm": (("run",), "p", _set("--project")),
    "hatch": (("run",), "e", _set("--env")),
    "rye": (("run",), "", frozenset()),
    "conda": (("run",), "np", _set("--name --prefix --cwd")),
    "mamba": (("run",), "np", _set("--name --prefix --cwd")),
    "pnpm": (("exec", "dlx"), "C", _set("--dir --filter")),
    "yarn": (("exec", "dlx"), "", frozenset()),
    "bun": (("x",), "", frozenset()),
    "pipx": (("run",), "", _set("--spec --python")),
}


def _skip_options(args: Sequence[Word], short_value: str, long_value: frozenset[str]) -> int:
    """Index of the first non-option word (after ``--``), skipping option values."""
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or value == "-" or not value.startswith("-"):
            return i
        if value == "--":
            return i + 1
        if value.startswith("--"):
            i += 2 if ("=" not in value and value in long_value) else 1
            continue
        letters = value[1:]
        step = 1
        for j, ch in enumerate(letters):
            if ch in short_value:
                if j == len(letters) - 1:
                    step = 2
                break
        i += step
    return i


def _generic(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    program = program_name(argv[0]) or ""
    short, long = _OPTS[program]
    args = argv[1:]
    if program == "command" and any(a.value in ("-v", "-V") for a in args[:2]):
        return None
    start = _skip_options(args, short, long)
    rest = args[start:]
    if program == "timeout" and rest:
        rest = rest[1:]
    if program == "flock" and rest:
        rest = rest[1:]
        if rest and rest[0].value in ("-c", "--command") and len(rest) > 1:
            if rest[1].value is None:
                w.finding(
                    "dynamic-script", "flock -c runs a string built at runtime: " + rest[1].raw
                )
                return None
            w.nested(rest[1].value, "flock -c")
            return None
    if program == "npx":
        for i, arg in enumerate(args[:start]):
            if arg.value in ("-c", "--call") and i + 1 < len(args):
                call = args[i + 1]
                if call.value is None:
                    w.finding("dynamic-script", "npx -c runs a string built at runtime")
                else:
                    w.nested(call.value, "npx -c")
                return None
    if program in ("taskset", "chrt") and rest:
        rest = rest[1:]
    return rest, (*via, program)


def _env(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    args = argv[1:]
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            break
        if value in ("-S", "--split-string") or value.startswith(("-S", "--split-string=")):
            if value in ("-S", "--split-string"):
                text = args[i + 1].value if i + 1 < len(args) else ""
                rest = args[i + 2 :]
            else:
                text = value.split("=", 1)[1] if value.startswith("--") else value[2:]
                rest = args[i + 1 :]
            if text is None:
                w.finding("dynamic-script", "env -S splits a string built at runtime")
                return None
            tail = " ".join(shell_quote(x.value) if x.value is not None else x.raw for x in rest)
            w.nested(f"{text} {tail}".strip(), "env -S")
            return None
        if value in ("-u", "--unset", "-C", "--chdir"):
            if value in ("-C", "--chdir") and i + 1 < len(args) and args[i + 1].value:
                w.change_dir([args[i + 1]])
            i += 2
            continue
        if value == "--":
            i += 1
            continue
        if value.startswith("-") and value != "-":
            i += 1
            continue
        if "=" in value and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", value):
            i += 1
            continue
        break
    return args[i:], (*via, "env")


def _xargs(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    args = argv[1:]
    start = _skip_options(args, _XARGS_SHORT, _XARGS_LONG)
    replace = any((a.value or "").startswith(("-I", "-i", "--replace")) for a in args[:start])
    rest = args[start:] or [Word.literal("echo")]
    if not replace:
        rest = [*rest, Word(None, "<xargs input>")]
    return rest, (*via, "xargs")


def _watch(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    args = argv[1:]
    start = _skip_options(args, "nq", frozenset({"--interval", "--chgexit"}))
    rest = args[start:]
    if any(a.value in ("-x", "--exec") for a in args[:start]):
        return rest, (*via, "watch")
    return _run_string(w, rest, "watch")


def _su(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    args = argv[1:]
    for i, arg in enumerate(args):
        if arg.value in ("-c", "--command") and i + 1 < len(args):
            return _run_string(w, args[i + 1 : i + 2], "su -c")
        if arg.value is not None and arg.value.startswith("--command="):
            return _run_string(w, [Word.literal(arg.value.split("=", 1)[1])], "su -c")
    return None


def _ssh(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    args = argv[1:]
    start = _skip_options(args, _SSH_SHORT, frozenset())
    rest = args[start + 1 :]
    if not rest:
        return None
    return _run_string(w, rest, "ssh remote command")


def _run_string(w: SyntaxWalker, words: Sequence[Word], why: str) -> Step:
    if not words:
        return None
    if any(word.value is None for word in words):
        w.finding("dynamic-script", f"{why} runs a string built at runtime: " + join_raw(words))
        return None
    w.nested(" ".join(word.value or "" for word in words), why)
    return None


def _runner(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    program = program_name(argv[0]) or ""
    subcommands, short, long = _RUNNERS[program]
    args = argv[1:]
    start = _skip_options(args, short, long)
    if start >= len(args) or args[start].value not in subcommands:
        return PLAIN
    rest = args[start + 1 :]
    inner = _skip_options(rest, short, long)
    return rest[inner:], (*via, f"{program} {args[start].value}")


def _busybox(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    return argv[1:], (*via, "busybox")


_HANDLERS: dict[str, Handler] = dict.fromkeys(_OPTS, _generic)
_HANDLERS.update(
    {
        "env": _env,
        "xargs": _xargs,
        "watch": _watch,
        "su": _su,
        "ssh": _ssh,
        "busybox": _busybox,
    }
)


def wrapper_handler(program: str) -> Handler | None:
    """The handler of a wrapper program, ``None`` when ``program`` is no wrapper."""
    handler = _HANDLERS.get(program)
    if handler is None and program in _RUNNERS:
        return _runner
    return handler
