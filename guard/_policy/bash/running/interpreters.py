"""Shells and interpreters: the code they run (``bash -c``, ``python -c``, a script on stdin).

Handlers for ``sh``/``bash``/…, ``python`` and the interpreters whose card names an
inline-code option (``node -e``, ``perl -e`` …: ``inline_code``), and the checks on what a
shell or interpreter reads on stdin: code from a downloader, the static output of
``echo``/``printf``/``cat <<EOF``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from guard._policy.bash.model import Command, Word, preview, program_name
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs import card_for
from guard._policy.bash.running.javascript import node_allowed, node_code
from guard._policy.bash.running.streams import from_downloader, static_output
from guard._policy.bash.running.wrappers import Handler, Step

__all__ = [
    "CODE_STRING",
    "PYTHON",
    "SHELLS",
    "from_downloader",
    "interpreter_handler",
    "is_stream",
    "python_reads_stdin",
    "shell_reads_stdin",
    "static_output",
]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


SHELLS = _set("sh bash zsh dash ksh mksh ash yash fish rbash")
PYTHON = re.compile(r"^(?:python(?:[23](?:\.\d+)?)?|pypy3?)$")
_PRINT_FLAGS = frozenset({"-p", "--print", "-pe", "-ep"})
CODE_STRING = re.compile(r"'([^'\\\n]{1,512})'|\"([^\"\\\n]{1,512})\"")
_SHELL_SHORT_VALUE = "oO"
_SHELL_LONG_VALUE = _set("--rcfile --init-file")


def is_stream(word: Word) -> bool:
    """A script argument that is not a file the agent can point at: a stream or unknown."""
    value = word.value
    return value is None or value.startswith(("/dev/", "/proc/"))


def shell_reads_stdin(args: Sequence[Word]) -> bool:
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            return False
        if value == "--":
            return i + 1 >= len(args)
        if value.startswith(("-", "+")) and value not in ("-", "+"):
            letters = value[1:]
            if not value.startswith("--") and "c" in letters:
                return False
            if not value.startswith("--") and "s" in letters:
                return True
            if value in _SHELL_LONG_VALUE or (not value.startswith("--") and letters[-1:] in "oO"):
                i += 2
                continue
            i += 1
            continue
        return value == "-"
    return True


def _shell(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    program = program_name(argv[0]) or "sh"
    args = argv[1:]
    i = 0
    command_mode = False
    while i < len(args):
        value = args[i].value
        if value is None or value == "-" or not value.startswith(("-", "+")):
            break
        if value == "--":
            i += 1
            break
        if value.startswith("--"):
            i += 2 if value in _SHELL_LONG_VALUE else 1
            continue
        letters = value[1:]
        if "c" in letters:
            command_mode = True
        i += 2 if letters[-1:] in _SHELL_SHORT_VALUE else 1
    rest = args[i:]
    if command_mode:
        if not rest:
            return None
        script = rest[0]
        if script.value is None:
            if script.inner and from_downloader(script.inner):
                w.finding("download-exec", f"{program} -c runs code downloaded from the network")
            else:
                w.finding(
                    "dynamic-script",
                    f"{program} -c runs a string built at runtime: " + preview(script.raw),
                )
            return None
        # The script reads the shell's stdin: the pipe, or a file, heredoc or herestring.
        w.nested(
            script.value,
            f"{program} -c",
            producers=producers,
            inherited=bool(texts) or w.stdin_file,
        )
        return None
    if rest and rest[0].inner:
        w.generated_code(rest[0].inner, f"{program} runs a generated script")
        return None
    if rest and is_stream(rest[0]):
        w.finding("shell-stdin", f"{program} runs a script from a stream: {rest[0].raw}")
    # A script file or stdin: the command itself is recorded; on_stdin looks at stdin.
    command = Command(tuple(argv), w.cwd, via, producers, texts)
    w.add(command)
    if texts or producers or w.stdin_file:
        w.on_stdin(command)
    return None


_PY_FLAG_LETTERS = frozenset("bBdEhiIOPqRsSuvV")
_PY_MODULES = _set("""
    pytest pip venv unittest mypy ruff black isort flake8 pylint coverage http.server json.tool
    build site sysconfig platform compileall py_compile ensurepip tox nox pyright pipx uv poetry
    """)
"""``python -m`` modules run as programs without asking (their own rules still apply)."""


def _python_options(args: Sequence[Word]) -> tuple[str, str | None, int] | None:
    """(mode, value, index after it): mode ``c``/``m``/``-`` (stdin), ``file`` or ``none``.

    Bundled flags are read like CPython does (``-Im guard``, ``-Bc code``); ``None`` when
    an option is not understood (the caller asks).
    """
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            return ("dynamic", None, i)
        if value == "-":
            return ("-", None, i + 1)
        if value == "--" or not value.startswith("-"):
            j = i + 1 if value == "--" else i
            if j >= len(args):
                return ("none", None, j)
            return (
                ("file", args[j].value, j + 1)
                if args[j].value is not None
                else (
                    "dynamic",
                    None,
                    j,
                )
            )
        if value.startswith("--"):
            if value in ("--version", "--help"):
                return ("info", None, i + 1)
            if value == "--check-hash-based-pycs":
                i += 2
                continue
            return None
        letters = value[1:]
        step = 1
        for k, letter in enumerate(letters):
            if letter in "cm":
                rest = letters[k + 1 :]
                if rest:
                    return (letter, rest, i + 1)
                nxt = args[i + 1].value if i + 1 < len(args) else ""
                return (letter, nxt, i + 2)
            if letter in "WX":
                step = 1 if letters[k + 1 :] else 2
                break
            if letter not in _PY_FLAG_LETTERS:
                return None
        i += step
    return ("none", None, i)


def python_reads_stdin(args: Sequence[Word]) -> bool:
    """Whether ``python ARGS`` reads its program from stdin (no ``-c``/``-m``/script)."""
    parsed = _python_options(args)
    return parsed is None or parsed[0] in ("-", "none", "dynamic")


def _python(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    args = argv[1:]
    parsed = _python_options(args)
    command = Command(tuple(argv), w.cwd, via, producers, texts)
    if parsed is None:
        w.add(command)
        w.finding("inline-code", "python runs with options the analysis does not read")
        return None
    mode, value, after = parsed
    if mode == "dynamic":
        w.add(command)
        w.finding("dynamic-script", "python's options or script are only known at runtime")
        return None
    if mode == "c":
        w.add(command)
        if value is None:
            w.finding("dynamic-script", "python -c runs code built at runtime")
        else:
            w.code(command, value, "python")
        return None
    if mode == "m":
        return _python_module(w, value, list(args[after:]), via, command)
    if mode == "file" and value is not None and value.startswith(("/dev/", "/proc/")):
        w.finding("shell-stdin", "python runs a script from a stream: " + value)
    if mode == "file" and value is not None:
        base = value.rstrip("/").rsplit("/", 1)[-1]
        if base == "pi-guard":
            return [Word.literal("pi-guard"), *args[after:]], (*via, "python")
        if _is_guard_package(value):
            w.add(command)
            w.finding("guard-self", "runs the guard package: python " + value)
            return None
    w.add(command)
    if texts or producers or w.stdin_file:
        w.on_stdin(command)
    return None


def _is_guard_package(path: str) -> bool:
    parts = [p for p in path.split("/") if p and p != "."]
    if not parts:
        return False
    if parts[-1] == "guard":
        return True
    if "guard" not in parts[:-1] or not parts[-1].endswith((".py", ".pyc")):
        return False
    # compiled copies too: guard/__main__.pyc, guard/__pycache__/__main__.cpython-311.pyc
    inside = [p for p in parts[parts.index("guard") + 1 :] if p != "__pycache__"]
    return inside[0] == "_cli" or inside[-1].split(".", 1)[0] == "__main__"


def _python_module(
    w: SyntaxWalker,
    module: str | None,
    rest: list[Word],
    via: tuple[str, ...],
    command: Command,
) -> Step:
    if module is None:
        w.add(command)
        w.finding("dynamic-command", "python -m runs a module named at runtime")
        return None
    top = module.split(".", 1)[0]
    if top == "guard":
        w.add(command)
        w.finding("guard-self", "runs the guard's own CLI: python -m " + module)
        return None
    if module == "runpy":
        target = rest[0].value if rest else None
        if rest and rest[0].value is not None and rest[0].value.startswith("-"):
            target = None
        return _python_module(w, target, rest[1:], (*via, "python -m runpy"), command)
    if module not in _PY_MODULES:
        w.add(command)
        w.finding("inline-code", f"python -m {module} runs a module not on the short allowlist")
    name = "pip" if top == "pip" else module
    return [Word.literal(name), *rest], (*via, "python -m")


def _inline(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    program = program_name(argv[0]) or ""
    flags = _inline_code(program)
    command = Command(tuple(argv), w.cwd, via, producers, texts)
    w.add(command)
    args = argv[1:]
    if program in ("node", "nodejs"):
        inline = node_code([a.value for a in args])
        if inline is not None:
            _node_inline(w, command, program, inline.code, inline.prints, inline.problem)
            if texts or producers or w.stdin_file:
                w.on_stdin(command)
            return None
    script = next((a for a in args if not (a.value or "").startswith("-")), None)
    if script is not None and not any((a.value or "") in flags for a in args) and is_stream(script):
        w.finding("shell-stdin", f"{program} runs a script from a stream: {script.raw}")
    for i, arg in enumerate(args):
        value = arg.value
        if value is None:
            continue
        if (
            program == "perl"
            and value[:2] in ("-M", "-m")
            and not re.fullmatch(r"-[mM][\w:]+", value)
        ):
            w.finding("inline-code", "perl -M with code: " + preview(value))
        if value in flags or (
            value.startswith("-")
            and not value.startswith("--")
            and any(f"-{ch}" in flags for ch in value[1:])
            and program in ("perl", "ruby", "node", "nodejs")
        ):
            code = args[i + 1] if i + 1 < len(args) else None
            if code is None:
                continue
            if code.value is None:
                w.finding("dynamic-script", f"{program} runs inline code built at runtime")
            else:
                w.code(command, code.value, program + (" print" if value in _PRINT_FLAGS else ""))
    for attached in _attached_code(program, args, flags):
        w.code(command, attached, program)
    if texts or producers or w.stdin_file:
        w.on_stdin(command)
    return None


def _node_inline(
    w: SyntaxWalker,
    command: Command,
    program: str,
    code: str | None,
    prints: bool,
    problem: str | None,
) -> None:
    """``node -e``/``-p``: the code is read like ``python -c``'s; other options ask (one
    finding: the code's when it asks anyway)."""
    if problem is not None and (code is None or node_allowed(code, prints=prints)):
        w.finding("inline-code", f"{program} runs inline code with {problem}")
    if code is None:
        if problem is None:
            w.finding("dynamic-script", f"{program} runs inline code built at runtime")
        return
    w.code(command, code, program + (" print" if prints else ""))


def _attached_code(program: str, args: Sequence[Word], flags: frozenset[str]) -> list[str]:
    """Code glued to its flag (``perl -e'…'``, ``ruby -ne'…'``, ``php -r'…'``, ``lua -e'…'``).

    perl and ruby bundle flags, so the code follows the first code-flag letter; node takes
    no glued value (it refuses ``-e'…'``).
    """
    codes: list[str] = []
    for arg in args:
        value = arg.value or ""
        if value.startswith("--") or not value.startswith("-"):
            continue
        if program in ("perl", "ruby"):
            k = next((k for k, ch in enumerate(value[1:], 2) if f"-{ch}" in flags), len(value))
            code = value[k:]
        else:
            code = value[2:] if program in ("php", "lua") and value[:2] in flags else ""
        if code:
            codes.append(code)
    return codes


def interpreter_handler(program: str) -> Handler | None:
    """The handler of a shell or interpreter, ``None`` when ``program`` is neither."""
    if PYTHON.match(program):
        return _python
    if program in SHELLS:
        return _shell
    if _inline_code(program):
        return _inline
    return None


def _inline_code(program: str) -> frozenset[str]:
    """The options whose value is code ``program`` runs: its card's ``inline_code``."""
    card = card_for(program)
    return frozenset() if card is None else card.inline_code
