"""Bash analysis on a real parser (tree-sitter): a command string becomes simple commands.

The walk covers lists, pipelines, ``&&``/``||``, subshells, compound statements,
command and process substitution, heredocs and redirections. Known harmless wrappers
(``env``, ``nice``, ``nohup``, ``time``, ``timeout``, ``command``, ``exec`` …) are
unwrapped; other wrappers ask and are looked into; ``bash -c``/``sh -c`` strings are parsed
recursively up to :data:`MAX_DEPTH`. Whatever cannot be resolved to literal argv and
literal paths becomes a :class:`Finding`, which the policy turns into ``confirm``: fail
closed.

Layout: ``model`` (words, commands, findings), ``syntax`` (the tree-sitter walk),
``quoting`` (quote removal, ANSI-C strings, braces), ``wrappers`` (``env``, ``sudo``,
``xargs`` …), ``interpreters`` (shells, ``python``, ``node -e`` …), ``inline`` (the
allowlist of harmless inline code), ``programs`` (programs that run code or write files
the analysis cannot see: sed, awk, git -c, make, tar -x …), and here the :class:`Walker`
that decides what each simple command runs, and :func:`analyze`.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence

from guard._policy.bash.model import (
    MAX_DEPTH,
    Command,
    Finding,
    Script,
    Word,
    join_raw,
    preview,
    program_name,
)
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.registry import spelled
from guard._policy.bash.running.inline import (
    GUARD_CODE,
    awk_allowed,
    python_allowed,
    sed_allowed,
    sql_allowed,
)
from guard._policy.bash.running.interpreters import (
    CODE_STRING,
    PYTHON,
    SHELLS,
    interpreter_handler,
    python_reads_stdin,
    shell_reads_stdin,
)
from guard._policy.bash.running.javascript import node_allowed
from guard._policy.bash.running.programs import check_program
from guard._policy.bash.running.streams import from_downloader, static_output
from guard._policy.bash.running.wrappers import Plain, wrapper_handler

__all__ = [
    "MAX_DEPTH",
    "Command",
    "Finding",
    "Script",
    "Walker",
    "Word",
    "analyze",
    "program_name",
]

_INTERPRETERS = frozenset({"node", "nodejs", "perl", "ruby", "php", "lua", "deno", "bun"})
_IMPORTS = re.compile(r"\b(?:import|require)\b")
_CHECKERS = {
    "python": python_allowed,
    "awk": awk_allowed,
    "sed": sed_allowed,
    "sql": sql_allowed,
}


class Walker(SyntaxWalker):
    """The walk plus what simple commands run: wrappers, ``cd``, ``eval``, the cards …"""

    def run(
        self,
        argv: Sequence[Word],
        *,
        via: tuple[str, ...],
        producers: list[Command],
        texts: list[str],
    ) -> None:
        """Unwrap wrappers around ``argv`` and record the command that really runs."""
        argv = list(argv)
        while argv:
            name = argv[0]
            program = program_name(name)
            if program is None or name.glob or name.brace:
                why = "a glob or brace" if program is not None else "only known at runtime"
                self.finding("dynamic-command", f"command name {why}: " + name.raw)
                self.add(Command(tuple(argv), self.cwd, via, producers, texts))
                return
            handler = wrapper_handler(program) or interpreter_handler(program)
            if handler is None:
                break
            step = handler(self, argv, via, producers, texts)
            if step is None:
                return
            if isinstance(step, Plain):
                break
            argv, via = step
        if not argv:
            return
        argv = spelled(argv)
        command = Command(tuple(argv), self.cwd, via, producers, texts)
        self.add(command)
        program = command.program or ""
        if program in ("cd", "pushd", "popd"):
            self.change_dir_command(program, argv[1:])
        elif program == "eval":
            self.eval(command)
        elif program in ("source", "."):
            self.source(command)
        elif program == "trap" and len(argv) > 1:
            if argv[1].value is None:
                self.finding("dynamic-script", "trap runs a handler built at runtime")
            else:
                self.nested(argv[1].value, "trap handler")
        else:
            check_program(self, command)
        if texts or producers or command.stdin_file:
            self.on_stdin(command)

    def change_dir_command(self, program: str, args: Sequence[Word]) -> None:
        stack = self.dirs
        if program == "popd":
            if not stack:
                self.finding("unresolved", "popd: the directory it returns to is not known here")
            else:
                self.cwd = stack.pop()
            return
        if program == "pushd":
            stack.append(self.cwd)
        self.change_dir(args)

    def change_dir(self, args: Sequence[Word]) -> None:
        positional = [w for w in args if not (w.value or "").startswith("-") or w.value == "-"]
        if not positional:
            self.cwd = self.home
            return
        word = positional[0]
        target = word.value
        if target is None or target == "-" or word.glob or word.brace or target.startswith("~+"):
            self.finding("unresolved", "cd to a directory only known at runtime: " + word.raw)
            return
        if os.environ.get("CDPATH") and not target.startswith(("/", ".", "~")):
            self.finding("unresolved", "cd with CDPATH set: the directory depends on CDPATH")
        if target == "~" or target.startswith("~/"):
            target = self.home + target[1:]
        elif target.startswith("~"):
            # ``~user``: that user's home (an unknown user's word stays as it is, as in bash).
            target = os.path.expanduser(target)
        self.cwd = posixpath.normpath(posixpath.join(self.cwd, target))

    def eval(self, command: Command) -> None:
        self.finding("eval", "eval runs a string as a command: " + preview(join_raw(command.argv)))
        if command.args and all(w.value is not None for w in command.args):
            self.nested(" ".join(w.value or "" for w in command.args), "eval")

    def source(self, command: Command) -> None:
        """``source FILE`` runs a script file; from stdin, a pipe or ``/dev/*`` it asks."""
        word = command.args[0] if command.args else None
        value = word.value if word is not None else None
        if word is not None and word.inner:
            self.generated_code(word.inner, "source of generated code")
        opaque = (
            word is None
            or value is None
            or value.startswith(("/dev/", "/proc/"))
            or value == "-"
            or bool(command.stdin_texts or command.producers or command.stdin_file)
        )
        if opaque:
            self.finding("shell-stdin", "source runs code from stdin or a stream")
            for text in command.stdin_texts:
                self.nested(text, "source of stdin")

    def generated_code(self, producers: Sequence[Command], why: str) -> None:
        """A shell reads code that other commands produce (pipe or process substitution)."""
        if from_downloader(producers):
            self.finding("download-exec", f"{why}: code downloaded from the network is executed")
            return
        self.finding("shell-stdin", f"{why}: a shell runs code that is not in the command")
        static = static_output(producers)
        if static is not None:
            self.nested(static, why)

    def on_stdin(self, command: Command, *, texts_only: bool = False) -> None:
        """A shell or interpreter reading its program on stdin asks; what is static is read."""
        program = command.program
        if program is None:
            return
        if program in SHELLS:
            if not shell_reads_stdin(command.args):
                return
            language = "sh"
        elif PYTHON.match(program):
            if not python_reads_stdin(command.args):
                return
            language = "python"
        elif program in _INTERPRETERS:
            language = program
            if any(
                w.value not in (None, "-") and not (w.value or "-").startswith("-")
                for w in command.args
            ):
                return
        else:
            return
        if command.producers and not texts_only and from_downloader(command.producers):
            self.finding("download-exec", f"{program} runs code downloaded from the network")
            return
        self.finding("shell-stdin", f"{program} reads its program on stdin")
        static = [*command.stdin_texts]
        if command.producers and not texts_only:
            out = static_output(command.producers)
            if out is not None:
                static.append(out)
        for text in static:
            if language == "sh":
                self.nested(text, f"{program} reads a script on stdin")
            else:
                self.code(command, text, language)

    def code(self, command: Command, text: str, language: str) -> None:
        """Inline code asks unless a small allowlist proves it harmless; the guard blocks."""
        if GUARD_CODE.search(text):
            self.finding("guard-self", "inline code reaches for the guard: " + preview(text))
        base = language.split(" ", 1)[0]
        if base in ("node", "nodejs"):
            allowed = node_allowed(text, prints=language.endswith("print"))
        else:
            checker = _CHECKERS.get(base)
            allowed = checker is not None and checker(text)
        if not allowed:
            self.finding("inline-code", f"inline {base} code: " + preview(text))
        if base in ("python", "node", "nodejs") and _IMPORTS.search(text):
            command.imports = True
        strings = tuple(a or b for a, b in CODE_STRING.findall(text))
        if strings:
            command.code_strings = command.code_strings + strings


def analyze(command: str, *, cwd: str, home: str | None = None) -> Script:
    """Parse ``command`` and return every simple command it would run, plus findings."""
    script = Script([], [])
    walker = Walker(home=home or os.path.expanduser("~"), cwd=cwd, depth=0, out=script)
    try:
        walker.script(command)
    except RecursionError:
        # Pathologically deep nesting: what was collected so far stays, plus a finding.
        walker.finding("too-complex", "the command is nested too deeply to analyze")
    return script
