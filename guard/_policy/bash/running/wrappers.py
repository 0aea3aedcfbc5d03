"""Wrappers: commands that run another command (``sudo``, ``env``, ``xargs``, ``uv run`` …).

What each wrapper is (unwrapped precisely, asking, a runner of a subcommand, ``env``,
``xargs``, ``busybox``) and its options are its card's ``wraps`` (``programs/wrappers``);
here is how each kind is followed. A handler gets the walker and a command's argv and
returns the inner argv with the wrapper chain (``via``), ``None`` when it has dealt with the
command itself (a string it parsed as a nested script, a finding), or :data:`PLAIN` when
the program is not acting as a wrapper this time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from guard._policy.bash.model import Command, Word, join_raw, preview, program_name
from guard._policy.bash.parsing.quoting import shell_quote
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs import Wraps, card_for
from guard._policy.bash.running.streams import static_output

__all__ = ["PLAIN", "Handler", "Plain", "Step", "wrapper_handler"]


class Plain:
    """The type of :data:`PLAIN`."""


PLAIN = Plain()
Step = tuple[list[Word], tuple[str, ...]] | Plain | None
Handler = Callable[[SyntaxWalker, list[Word], tuple[str, ...], list[Command], list[str]], Step]


_OPAQUE_WHY = "runs another command in a way the analysis does not follow precisely"


_UNKNOWN = Wraps(how="asks")


def _wraps(program: str) -> Wraps:
    """How ``program`` finds its command: its card's ``wraps``, by which its handler was
    chosen (``wrapper_handler``); were it missing, nothing is known: every option asks."""
    card = card_for(program)
    return _UNKNOWN if card is None or card.wraps is None else card.wraps


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


def _unknown_option(args: Sequence[Word], end: int, spec: Wraps) -> str | None:
    """The first option before ``end`` that ``spec`` does not know (``None``: all known)."""
    short_value, long_value = spec.short_values, spec.long_values
    short_flags, long_flags = spec.short_flags, spec.long_flags
    i = 0
    while i < end:
        value = args[i].value
        if value is None:
            return args[i].raw
        if value == "--" or not value.startswith("-") or value == "-":
            i += 1
            continue
        if value.startswith("--"):
            name = value.split("=", 1)[0]
            if name not in long_value and name not in long_flags:
                return value
            i += 2 if ("=" not in value and name in long_value) else 1
            continue
        step = 1
        for j, ch in enumerate(value[1:]):
            if ch in short_value:
                step = 2 if j == len(value) - 2 else 1
                break
            if ch not in short_flags:
                return value
        i += step
    return None


def _generic(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    program = program_name(argv[0]) or ""
    spec = _wraps(program)
    args = argv[1:]
    start = _skip_options(args, spec.short_values, spec.long_values)
    # ``command -v NAME`` only looks NAME up; a ``-v`` after the name is the command's own.
    if program == "command" and any(a.value in ("-v", "-V") for a in args[: min(start, 2)]):
        return None
    unknown = _unknown_option(args, start, spec)
    if unknown is not None:
        w.finding(
            "opaque-wrapper", f"{program} with an option the analysis does not know: {unknown}"
        )
    rest = args[start:]
    if program == "timeout" and rest:
        rest = rest[1:]
    if program == "npx":
        for i, arg in enumerate(args[:start]):
            if arg.value in ("-c", "--call") and i + 1 < len(args):
                call = args[i + 1]
                if call.value is None:
                    w.finding("dynamic-script", "npx -c runs a string built at runtime")
                else:
                    w.nested(call.value, "npx -c")
                return None
    if (
        program == "taskset"
        and rest
        and not any((a.value or "").startswith(("-p", "--pid")) for a in args[:start])
    ):
        rest = rest[1:]
    return rest, (*via, program)


def _opaque(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    """Ask, then look at what it may run, so that a block rule inside still blocks."""
    program = program_name(argv[0]) or ""
    spec = _wraps(program)
    args = argv[1:]
    start = _skip_options(args, spec.short_values, spec.long_values)
    if start >= len(args) and spec.command_optional:
        return PLAIN  # ssh-agent -s, tmux ls: not running a command
    w.finding("opaque-wrapper", f"{program} {_OPAQUE_WHY}: {preview(join_raw(argv))}")
    if len(via) >= 6:
        return None
    # Every string an option or argument carries may be a command line (su -c, script -c,
    # tmux 'cmd', hyperfine 'cmd', ssh host 'cmd'): parse the ones with a space.
    for word in args:
        if word.value is not None and (" " in word.value or "\n" in word.value):
            w.nested(word.value, f"{program} runs a string")
        elif word.value is None and word.inner:
            continue
    for n, skip in enumerate(spec.leading):
        if start + skip < len(args):
            # The first reading inherits stdin (curl … | sudo bash).
            w.run(
                args[start + skip :],
                via=(*via, program),
                producers=producers if n == 0 else [],
                texts=texts if n == 0 else [],
            )
    return None


def _env(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    """``env -C DIR`` moves only the command env runs: the walk's own directory stays."""
    saved = w.cwd
    try:
        step = _env_command(w, argv, via)
        if isinstance(step, tuple) and w.cwd != saved:
            w.run(step[0], via=step[1], producers=producers, texts=texts)
            return None
        return step
    finally:
        w.cwd = saved


def _env_command(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...]) -> Step:
    spec = _wraps("env")
    flags = {"-", *(f"-{c}" for c in spec.short_flags), *spec.long_flags}
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
            # bash expanded globs and braces before env ran: keep them as written
            tail = " ".join(
                shell_quote(x.value) if x.value is not None and not (x.glob or x.brace) else x.raw
                for x in rest
            )
            w.nested(f"{text} {tail}".strip(), "env -S")
            return None
        if value in ("-u", "--unset", "-C", "--chdir"):
            if value in ("-C", "--chdir") and i + 1 < len(args):
                w.change_dir([args[i + 1]])
            i += 2
            continue
        if value == "--":
            i += 1
            continue
        if value.startswith("-"):  # a lone "-" is -i
            if value not in flags:
                w.finding(
                    "opaque-wrapper", "env with an option the analysis does not know: " + value
                )
            i += 1
            continue
        if "=" in value:  # env takes any word with "=" as NAME=VALUE (BASH_FUNC_ls%%=…)
            w.assignment(value.split("=", 1)[0])
            i += 1
            continue
        break
    return args[i:], (*via, "env")


_XARGS_NO_FILES = frozenset({"echo", "printf", "true", "false"})
_MAX_XARGS_RUNS = 8


def _xargs(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    """xargs asks (its arguments come from stdin) unless it only echoes; static input is used."""
    args = argv[1:]
    spec = _wraps("xargs")
    start = _skip_options(args, spec.short_values, spec.long_values)
    marker: str | None = None
    for i, arg in enumerate(args[:start]):
        value = arg.value or ""
        if value == "-I" and i + 1 < min(start, len(args)):
            marker = args[i + 1].value or "{}"
        elif value.startswith("-I"):
            marker = value[2:]
        elif value.startswith("--replace="):
            marker = value.split("=", 1)[1]
        elif value in ("-i", "--replace"):
            marker = "{}"
        elif value.startswith("-i"):
            marker = value[2:]
    inner = list(args[start:]) or [Word.literal("echo")]
    program = program_name(inner[0])
    if program not in _XARGS_NO_FILES:
        w.finding(
            "xargs",
            "xargs runs a command on arguments only known at runtime: " + preview(join_raw(argv)),
        )
    text = static_output(producers) if producers else ("\n".join(texts) if texts else None)
    via = (*via, "xargs")
    if text is None:
        tail = [] if marker is not None else [Word(None, "<xargs input>")]
        w.run([*inner, *tail], via=via, producers=[], texts=[])
        return None
    if marker is not None:
        for line in [x for x in text.splitlines() if x.strip()][:_MAX_XARGS_RUNS]:
            replaced = [
                Word(a.value.replace(marker, line), a.raw) if a.value is not None else a
                for a in inner
            ]
            w.run(replaced, via=via, producers=[], texts=[])
        return None
    w.run([*inner, *(Word.literal(t) for t in text.split())], via=via, producers=[], texts=[])
    return None


def _runner(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    program = program_name(argv[0]) or ""
    spec = _wraps(program)
    subcommands, short, long = spec.subcommands, spec.short_values, spec.long_values
    args = argv[1:]
    start = _skip_options(args, short, long)
    if start >= len(args) or args[start].value not in subcommands:
        return PLAIN
    rest = args[start + 1 :]
    inner = _skip_options(rest, short, long)
    return rest[inner:], (*via, f"{program} {args[start].value}")


def _busybox(w: SyntaxWalker, argv: list[Word], via: tuple[str, ...], *_: object) -> Step:
    return argv[1:], (*via, "busybox")


_HANDLERS: dict[str, Handler] = {
    "unwraps": _generic,
    "asks": _opaque,
    "subcommand": _runner,
    "env": _env,
    "xargs": _xargs,
    "applet": _busybox,
}


def wrapper_handler(program: str) -> Handler | None:
    """The handler of a wrapper program, ``None`` when ``program`` is no wrapper."""
    card = card_for(program)
    return None if card is None or card.wraps is None else _HANDLERS[card.wraps.how]
