"""Bash analysis on a real parser (tree-sitter): a command string becomes simple commands.

The walk covers lists, pipelines, ``&&``/``||``, subshells, compound statements,
command and process substitution, heredocs and redirections. Wrappers (``sudo``,
``env``, ``nice``, ``nohup``, ``time``, ``command``, ``exec``, ``xargs``, ``timeout``,
``find -exec`` …) are unwrapped; ``bash -c``/``sh -c`` strings, heredocs fed to a shell
and ``echo … | sh`` are parsed recursively up to :data:`MAX_DEPTH`. What cannot be known
statically (``eval``, a parse error, a command name built at runtime, too deep a nesting)
becomes a :class:`Finding`, which the policy turns into ``confirm``: fail closed.

Layout: :mod:`._bash_model` (words, commands, findings), :mod:`._bash_syntax` (the
tree-sitter walk), :mod:`._bash_quoting` (quote removal), :mod:`._bash_wrappers` (``sudo``,
``env``, ``xargs`` …), :mod:`._bash_interpreters` (shells, ``python``, ``node -e`` …), and
here the :class:`Walker` that decides what each simple command runs, and :func:`analyze`.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence

from guard._policy.bash.interpreters import (
    CODE_DELETE,
    CODE_STRING,
    GUARD_IMPORT,
    PYTHON,
    SHELLS,
    from_downloader,
    interpreter_handler,
    python_has_source,
    shell_reads_stdin,
    static_output,
)
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
from guard._policy.bash.syntax import SyntaxWalker
from guard._policy.bash.wrappers import Plain, wrapper_handler

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


class Walker(SyntaxWalker):
    """The walk plus what simple commands run: wrappers, ``cd``, ``find -exec``, ``eval`` …"""

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
            if program is None:
                self.finding("dynamic-command", "command name only known at runtime: " + name.raw)
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
        command = Command(tuple(argv), self.cwd, via, producers, texts)
        self.add(command)
        program = command.program
        if program in ("cd", "pushd"):
            self.change_dir(argv[1:])
        elif program == "find":
            self.find_exec(command)
        elif program in ("eval",):
            self.eval(command)
        elif program in ("source", "."):
            self.source(command)
        elif program == "trap" and len(argv) > 1 and argv[1].value is not None:
            self.nested(argv[1].value, "trap handler")
        if texts or producers:
            self.on_stdin(command)

    def change_dir(self, args: Sequence[Word]) -> None:
        positional = [w for w in args if not (w.value or "").startswith("-") or w.value == "-"]
        if not positional:
            self.cwd = self.home
            return
        target = positional[0].value
        if target is None or target == "-":
            return
        if target == "~" or target.startswith("~/"):
            target = self.home + target[1:]
        self.cwd = posixpath.normpath(posixpath.join(self.cwd, target))

    def find_exec(self, command: Command) -> None:
        args = list(command.args)
        i = 0
        while i < len(args):
            value = args[i].value
            if value in ("-exec", "-execdir", "-ok", "-okdir"):
                j = i + 1
                while j < len(args) and args[j].value not in (";", "+"):
                    j += 1
                inner = [Word(None, "{}") if w.value == "{}" else w for w in args[i + 1 : j]]
                if inner:
                    self.run(inner, via=(*command.via, f"find {value}"), producers=[], texts=[])
                i = j + 1
                continue
            i += 1

    def eval(self, command: Command) -> None:
        self.finding("eval", "eval runs a string as a command: " + preview(join_raw(command.argv)))
        if command.args and all(w.value is not None for w in command.args):
            self.nested(" ".join(w.value or "" for w in command.args), "eval")

    def source(self, command: Command) -> None:
        for word in command.args[:1]:
            if word.inner:
                self.generated_code(word.inner, "source of generated code")

    def generated_code(self, producers: Sequence[Command], why: str) -> None:
        """A shell reads code that other commands produce (pipe or process substitution)."""
        if from_downloader(producers):
            self.finding("download-exec", f"{why}: code downloaded from the network is executed")
            return
        static = static_output(producers)
        if static is not None:
            self.nested(static, why)
            return
        self.finding("shell-stdin", f"{why}: a shell runs code produced at runtime")

    def on_stdin(self, command: Command, *, texts_only: bool = False) -> None:
        """Shells and interpreters that read code on stdin get that code checked."""
        program = command.program
        if program is None:
            return
        reads_code = False
        if program in SHELLS:
            reads_code = shell_reads_stdin(command.args)
        elif PYTHON.match(program):
            reads_code = not python_has_source(command.args)
            if reads_code:
                for text in command.stdin_texts:
                    self.code(command, text)
                if command.producers and not texts_only:
                    if from_downloader(command.producers):
                        self.finding(
                            "download-exec", "python runs code downloaded from the network"
                        )
                    elif static_output(command.producers) is None:
                        self.finding("shell-stdin", "python runs code produced at runtime")
                return
        if not reads_code:
            return
        for text in command.stdin_texts:
            self.nested(text, f"{program} reads a script on stdin")
        if command.producers and not texts_only:
            self.generated_code(command.producers, f"{program} reads commands from a pipe")

    def code(self, command: Command, text: str) -> None:
        """Inline interpreter code: the guard's own package, deletions, paths it names."""
        if GUARD_IMPORT.search(text):
            self.finding("guard-self", "inline code imports the guard package: " + preview(text))
        if CODE_DELETE.search(text):
            self.finding(
                "inline-code", "inline code deletes files or runs commands: " + preview(text)
            )
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
