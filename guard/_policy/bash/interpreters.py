"""Shells and interpreters: the code they run (``bash -c``, ``python -c``, a script on stdin).

Handlers for ``sh``/``bash``/…, ``python`` and the interpreters with an inline-code flag
(``node -e``, ``perl -e`` …), and the checks on what a shell or interpreter reads on stdin:
code from a downloader, the static output of ``echo``/``printf``/``cat <<EOF``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from guard._policy.bash.model import Command, Word, preview, program_name
from guard._policy.bash.syntax import SyntaxWalker
from guard._policy.bash.wrappers import Handler, Step

__all__ = [
    "CODE_DELETE",
    "CODE_STRING",
    "GUARD_IMPORT",
    "PYTHON",
    "SHELLS",
    "from_downloader",
    "interpreter_handler",
    "python_has_source",
    "shell_reads_stdin",
    "static_output",
]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


SHELLS = _set("sh bash zsh dash ksh mksh ash yash fish rbash")
PYTHON = re.compile(r"^(?:python(?:[23](?:\.\d+)?)?|pypy3?)$")
_DOWNLOADERS = _set("curl wget fetch http https xh aria2c lwp-request")
_ECHOERS = frozenset({"echo", "printf"})
_INLINE_FLAGS: dict[str, frozenset[str]] = {
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
}
GUARD_IMPORT = re.compile(r"\b(?:import\s+guard\b|from\s+guard(?:\.|\s))|\bguard\._")
CODE_DELETE = re.compile(
    r"rmtree|\bos\.(?:remove|unlink|rmdir|removedirs)\b|\.unlink\s*\(|\.rmdir\s*\(|"
    r"\b(?:unlinkSync|rmSync|rmdirSync)\b|\bfs(?:\.promises)?\.(?:rm|unlink|rmdir)\b|"
    r"\bFileUtils\.rm|\bFile\.delete\b|\bunlink\b|\bsystem\s*\(|\bos\.system\b|"
    r"\bsubprocess\b|\bchild_process\b|\bexecSync\b|\bspawnSync\b|\bshell_exec\b|\bpassthru\b"
)
CODE_STRING = re.compile(r"'([^'\\\n]{1,512})'|\"([^\"\\\n]{1,512})\"")
_SHELL_SHORT_VALUE = "oO"
_SHELL_LONG_VALUE = _set("--rcfile --init-file")
_PY_SHORT_VALUE = "WX"


def from_downloader(producers: Sequence[Command], depth: int = 0) -> bool:
    for producer in producers:
        if producer.program in _DOWNLOADERS:
            return True
        if depth < 8 and from_downloader(producer.producers, depth + 1):
            return True
        for word in producer.argv:
            if word.inner and from_downloader(word.inner, depth + 1):
                return True
    return False


def static_output(producers: Sequence[Command]) -> str | None:
    """The text ``echo``/``printf``/``cat <<EOF`` producers write, when fully static."""
    if not producers:
        return None
    out: list[str] = []
    for producer in producers:
        program = producer.program
        if program in _ECHOERS and all(w.value is not None for w in producer.args):
            words = [w.value or "" for w in producer.args]
            while words and words[0].startswith("-") and program == "echo":
                words.pop(0)
            out.append(" ".join(words))
        elif program == "cat" and not producer.args and producer.stdin_texts:
            out.extend(producer.stdin_texts)
        else:
            return None
    return "\n".join(out)


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


def python_has_source(args: Sequence[Word]) -> bool:
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None:
            return True
        if value == "-":
            return False
        if value.startswith("-") and value != "--":
            if value[1:2] in ("c", "m"):
                return True
            i += 2 if (len(value) == 2 and value[1] in _PY_SHORT_VALUE) else 1
            continue
        return True
    return False


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
        w.nested(script.value, f"{program} -c")
        return None
    if rest and rest[0].inner:
        w.generated_code(rest[0].inner, f"{program} runs a generated script")
        return None
    # A script file or stdin: the command itself is recorded; on_stdin looks at stdin.
    w.add(Command(tuple(argv), w.cwd, via, producers, texts))
    if texts or producers:
        w.on_stdin(w.out.commands[-1])
    return None


def _python(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    args = argv[1:]
    i = 0
    while i < len(args):
        value = args[i].value
        if value is None or not value.startswith("-") or value in ("-", "--"):
            break
        letters = value[1:]
        if letters.startswith("c"):
            code = letters[1:] or (args[i + 1].value if i + 1 < len(args) else "")
            command = Command(tuple(argv), w.cwd, via, producers, texts)
            w.add(command)
            if code is None:
                w.finding("dynamic-script", "python -c runs code built at runtime")
            else:
                w.code(command, code)
            return None
        if letters.startswith("m"):
            module = letters[1:] or (args[i + 1].value if i + 1 < len(args) else "")
            rest = args[i + 1 :] if letters[1:] else args[i + 2 :]
            if module is None:
                w.finding("dynamic-command", "python -m runs a module named at runtime")
                return None
            if module == "guard" or module.startswith("guard."):
                w.finding("guard-self", "runs the guard's own CLI: python -m " + module)
                return None
            top = module.split(".", 1)[0]
            return [Word.literal(top), *rest], (*via, "python -m")
        i += 2 if (len(letters) == 1 and letters in _PY_SHORT_VALUE) else 1
    command = Command(tuple(argv), w.cwd, via, producers, texts)
    w.add(command)
    if texts or producers:
        w.on_stdin(command)
    return None


def _inline(
    w: SyntaxWalker,
    argv: list[Word],
    via: tuple[str, ...],
    producers: list[Command],
    texts: list[str],
) -> Step:
    program = program_name(argv[0]) or ""
    flags = _INLINE_FLAGS[program]
    command = Command(tuple(argv), w.cwd, via, producers, texts)
    w.add(command)
    args = argv[1:]
    for i, arg in enumerate(args):
        value = arg.value
        if value is None:
            continue
        if value in flags or (
            value.startswith("-")
            and not value.startswith("--")
            and any(f"-{ch}" in flags for ch in value[1:])
            and program in ("perl", "ruby")
        ):
            code = args[i + 1] if i + 1 < len(args) else None
            if code is None:
                continue
            if code.value is None:
                w.finding("dynamic-script", f"{program} runs inline code built at runtime")
            else:
                w.code(command, code.value)
    return None


def interpreter_handler(program: str) -> Handler | None:
    """The handler of a shell or interpreter, ``None`` when ``program`` is neither."""
    if PYTHON.match(program):
        return _python
    if program in SHELLS:
        return _shell
    if program in _INLINE_FLAGS:
        return _inline
    return None
