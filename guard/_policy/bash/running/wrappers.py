"""Wrappers: commands that run another command (``sudo``, ``env``, ``xargs``, ``uv run`` …).

A handler gets the walker and a command's argv and returns the inner argv with the wrapper
chain (``via``), ``None`` when it has dealt with the command itself (a string it parsed as
a nested script, a finding), or :data:`PLAIN` when the program is not acting as a wrapper
this time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from guard._policy.bash.model import Command, Word, join_raw, preview, program_name
from guard._policy.bash.parsing.quoting import shell_quote
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.running.streams import static_output

__all__ = ["PLAIN", "Handler", "Plain", "Step", "wrapper_handler"]


class Plain:
    """The type of :data:`PLAIN`."""


PLAIN = Plain()
Step = tuple[list[Word], tuple[str, ...]] | Plain | None
Handler = Callable[[SyntaxWalker, list[Word], tuple[str, ...], list[Command], list[str]], Step]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _words(text: str) -> list[str]:
    return text.split()


# Wrappers the analysis unwraps precisely: (short options taking a value, long ones,
# short flags, long flags). An option not listed here makes the call ask.
_HARMLESS: dict[str, tuple[str, frozenset[str], str, frozenset[str]]] = {
    "time": ("fo", _set("--format --output"), "pvaq", _set("--portability --verbose --append")),
    "nohup": ("", frozenset(), "", frozenset()),
    "timeout": (
        "sk",
        _set("--signal --kill-after"),
        "v",
        _set("--preserve-status --foreground --verbose"),
    ),
    "nice": ("n", _set("--adjustment"), "0123456789", frozenset()),
    "ionice": ("cnpPu", _set("--class --classdata --pid --pgid --uid"), "t", _set("--ignore")),
    "stdbuf": ("ioe", _set("--input --output --error"), "", frozenset()),
    "command": ("", frozenset(), "pvV", frozenset()),
    "builtin": ("", frozenset(), "", frozenset()),
    "exec": ("a", frozenset(), "cl", frozenset()),
    "chronic": ("", frozenset(), "evb", frozenset()),
    "unbuffer": ("", frozenset(), "p", frozenset()),
    "coproc": ("", frozenset(), "", frozenset()),
    "taskset": ("", frozenset(), "acp", _set("--all-tasks --cpu-list --pid")),
    "busybox": ("", frozenset(), "", frozenset()),
    "toybox": ("", frozenset(), "", frozenset()),
    "npx": ("pc", _set("--package --call"), "yq", _set("--yes --no --quiet --no-install")),
    "bunx": ("p", _set("--package"), "", _set("--bun --silent")),
    "uvx": (
        "p",
        _set("--from --with --python --with-requirements --index"),
        "q",
        _set("--quiet --isolated --no-cache --offline"),
    ),
}
# Wrappers that change user, namespaces, tracing or lifetime, or that the analysis does
# not unwrap precisely: they ask. (short options taking a value, long ones) guide the
# best-effort look at what they run, so a block rule inside still blocks.
_OPAQUE: dict[str, tuple[str, frozenset[str]]] = {
    "sudo": (
        "ugpCDhrtTU",
        _set("""
        --user --group --prompt --chdir --close-from --role --type --command-timeout
        --other-user --host
    """),
    ),
    "doas": ("uC", frozenset()),
    "su": ("cgGs", _set("--command --group --supp-group --shell")),
    "runuser": ("cgGsu", _set("--command --group --supp-group --shell --user")),
    "pkexec": ("", _set("--user")),
    "setsid": ("", frozenset()),
    "flock": ("wEnc", _set("--timeout --conflict-exit-code --command")),
    "watch": ("nqd", _set("--interval --chgexit")),
    "ssh": ("bcDEeFIiJLlmOoPpQRSWw", frozenset()),
    "strace": ("abeEIoOpPsSuUX", frozenset()),
    "ltrace": ("aAeEfFlnopsSuTx", frozenset()),
    "script": ("cEIOBT", _set("--command --echo --log-in --log-out --log-io --log-timing")),
    "unshare": ("", frozenset()),
    "chroot": ("", _set("--userspec --groups")),
    "nsenter": ("tSGmuinpUCTr", frozenset()),
    "setpriv": ("", frozenset()),
    "setarch": ("", frozenset()),
    "linux32": ("", frozenset()),
    "linux64": ("", frozenset()),
    "prlimit": ("p", _set("--pid")),
    "numactl": ("", frozenset()),
    "cgexec": ("g", frozenset()),
    "chrt": ("T", _set("--sched-runtime --sched-period --sched-deadline")),
    "valgrind": ("", frozenset()),
    "gdb": ("", frozenset()),
    "perf": ("eo", _set("--event --output")),
    "faketime": ("f", frozenset()),
    "fakeroot": ("is", frozenset()),
    "fakechroot": ("", frozenset()),
    "firejail": ("", frozenset()),
    "bwrap": ("", frozenset()),
    "proot": ("rbwq", frozenset()),
    "systemd-run": ("upEM", frozenset()),
    "torsocks": ("aPu", frozenset()),
    "proxychains": ("f", frozenset()),
    "proxychains4": ("f", frozenset()),
    "xvfb-run": ("nsfe", frozenset()),
    "dbus-run-session": ("", frozenset()),
    "dbus-launch": ("", frozenset()),
    "catchsegv": ("", frozenset()),
    "chpst": ("ugUenlmdopftc", frozenset()),
    "sg": ("c", frozenset()),
    "gosu": ("", frozenset()),
    "su-exec": ("", frozenset()),
    "setuidgid": ("", frozenset()),
    "parallel": ("jSa", frozenset()),
    "entr": ("", frozenset()),
    "watchexec": ("ewi", frozenset()),
    "nodemon": ("xew", _set("--exec --watch --ext")),
    "tmux": ("cfLSt", frozenset()),
    "screen": ("cSX", frozenset()),
    "at": ("fqt", frozenset()),
    "batch": ("f", frozenset()),
    "nq": ("", frozenset()),
    "tsp": ("", frozenset()),
    "daemonize": ("aceEoplu", frozenset()),
    "start-stop-daemon": ("", frozenset()),
    "expect": ("c", frozenset()),
    "hyperfine": ("prwmMcs", frozenset()),
    "caffeinate": ("tw", frozenset()),
    "nix-shell": ("pI", _set("--run --command --packages")),
    "direnv": ("", frozenset()),
    "pyenv": ("", frozenset()),
    "rbenv": ("", frozenset()),
    "nodenv": ("", frozenset()),
    "ssh-agent": ("atE", frozenset()),
    "flatpak-spawn": ("", frozenset()),
}
# How many arguments may come before the command (a user, a root, a host, a lock file);
# each reading is looked at.
_LEADING_ARGS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(
        _words("chroot setarch faketime sg ssh gosu su-exec setuidgid flock perf tmux screen"),
        (0, 1),
    ),
    **dict.fromkeys(_words("direnv pyenv rbenv nodenv"), (1, 2)),
    **dict.fromkeys(_words("su runuser"), (0, 1)),
}
_COMMAND_OPTIONAL = _set("ssh-agent tmux screen")
_OPAQUE_WHY = "runs another command in a way the analysis does not follow precisely"
_XARGS_SHORT = "adEILnPs"
# --eof, --replace and --max-lines take a value only as --eof=VALUE (an optional argument)
_XARGS_LONG = _set("--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var")
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
    "npm": (("exec", "x"), "w", _set("--workspace --package --prefix")),
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


def _unknown_option(
    args: Sequence[Word], end: int, spec: tuple[str, frozenset[str], str, frozenset[str]]
) -> str | None:
    """The first option before ``end`` that ``spec`` does not know (``None``: all known)."""
    short_value, long_value, short_flags, long_flags = spec
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
    spec = _HARMLESS[program]
    short, long = spec[0], spec[1]
    args = argv[1:]
    start = _skip_options(args, short, long)
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
    short, long = _OPAQUE[program]
    args = argv[1:]
    start = _skip_options(args, short, long)
    if start >= len(args) and program in _COMMAND_OPTIONAL:
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
    for n, skip in enumerate(_LEADING_ARGS.get(program, (0,))):
        if start + skip < len(args):
            # The first reading inherits stdin (curl … | sudo bash).
            w.run(
                args[start + skip :],
                via=(*via, program),
                producers=producers if n == 0 else [],
                texts=texts if n == 0 else [],
            )
    return None


_ENV_FLAGS = frozenset({"-", "-i", "--ignore-environment", "-0", "--null", "-v", "--debug"})


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
            if value not in _ENV_FLAGS:
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
    start = _skip_options(args, _XARGS_SHORT, _XARGS_LONG)
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


_HANDLERS: dict[str, Handler] = dict.fromkeys(_HARMLESS, _generic)
_HANDLERS.update(dict.fromkeys(_OPAQUE, _opaque))
_HANDLERS.update({"env": _env, "xargs": _xargs, "busybox": _busybox, "toybox": _busybox})


def wrapper_handler(program: str) -> Handler | None:
    """The handler of a wrapper program, ``None`` when ``program`` is no wrapper."""
    handler = _HANDLERS.get(program)
    if handler is None and program in _RUNNERS:
        return _runner
    return handler
