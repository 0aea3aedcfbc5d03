"""Bash analysis on a real parser (tree-sitter): a command string becomes simple commands.

The walk covers lists, pipelines, ``&&``/``||``, subshells, compound statements,
command and process substitution, heredocs and redirections. Wrappers (``sudo``,
``env``, ``nice``, ``nohup``, ``time``, ``command``, ``exec``, ``xargs``, ``timeout``,
``find -exec`` …) are unwrapped; ``bash -c``/``sh -c`` strings, heredocs fed to a shell
and ``echo … | sh`` are parsed recursively up to :data:`MAX_DEPTH`. What cannot be known
statically (``eval``, a parse error, a command name built at runtime, too deep a nesting)
becomes a :class:`Finding`, which the policy turns into ``confirm``: fail closed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

__all__ = ["MAX_DEPTH", "Command", "Finding", "Script", "Word", "analyze", "program_name"]

MAX_DEPTH = 8
"""How deep ``bash -c '…'`` strings (and other nested scripts) are parsed; beyond: confirm."""

_MAX_COMMANDS = 2000

_PARSER: Parser | None = None


def _parser() -> Parser:
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: ``value`` after quote removal, ``None`` when only known at runtime."""

    value: str | None
    raw: str
    glob: bool = False
    inner: tuple[Command, ...] = ()

    @staticmethod
    def literal(text: str) -> Word:
        return Word(text, text)


@dataclass(slots=True)
class Command:
    """A simple command after unwrapping; ``argv`` is empty for a bare redirection."""

    argv: tuple[Word, ...]
    cwd: str
    via: tuple[str, ...] = ()
    producers: list[Command] = field(default_factory=list)
    stdin_texts: list[str] = field(default_factory=list)
    redirect_writes: list[Word] = field(default_factory=list)
    redirect_reads: list[Word] = field(default_factory=list)
    named: list[Word] = field(default_factory=list)
    code_strings: tuple[str, ...] = ()
    program: str | None = field(init=False, default=None)
    leading: tuple[tuple[Word, ...], bool] | None = field(init=False, default=None)
    """Cache for rule matching: positionals after global options, and whether that is ambiguous."""

    def __post_init__(self) -> None:
        self.program = program_name(self.argv[0]) if self.argv else None

    @property
    def args(self) -> tuple[Word, ...]:
        return self.argv[1:]


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the static analysis flags by itself (a built-in check id and a detail)."""

    check: str
    detail: str
    targets: tuple[str, ...] = ()


@dataclass(slots=True)
class Script:
    commands: list[Command]
    findings: list[Finding]


def program_name(word: Word) -> str | None:
    """The basename of a static command word (``/usr/bin/rm`` -> ``rm``)."""
    if word.value is None:
        return None
    return posixpath.basename(word.value.rstrip("/")) or word.value


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SHELLS = _set("sh bash zsh dash ksh mksh ash yash fish rbash")
_PYTHON = re.compile(r"^(?:python(?:[23](?:\.\d+)?)?|pypy3?)$")
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
_GUARD_IMPORT = re.compile(r"\b(?:import\s+guard\b|from\s+guard(?:\.|\s))|\bguard\._")
_CODE_DELETE = re.compile(
    r"rmtree|\bos\.(?:remove|unlink|rmdir|removedirs)\b|\.unlink\s*\(|\.rmdir\s*\(|"
    r"\b(?:unlinkSync|rmSync|rmdirSync)\b|\bfs(?:\.promises)?\.(?:rm|unlink|rmdir)\b|"
    r"\bFileUtils\.rm|\bFile\.delete\b|\bunlink\b|\bsystem\s*\(|\bos\.system\b|"
    r"\bsubprocess\b|\bchild_process\b|\bexecSync\b|\bspawnSync\b|\bshell_exec\b|\bpassthru\b"
)
_CODE_STRING = re.compile(r"'([^'\\\n]{1,512})'|\"([^\"\\\n]{1,512})\"")
_GLOB_CHARS = re.compile(r"(?<!\\)[*?\[]")
_BACKSLASH = re.compile(r"\\(.)", re.DOTALL)
_DQ_BACKSLASH = re.compile(r"\\([$`\"\\\n])")
_ANSI_SIMPLE = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}

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
_SHELL_SHORT_VALUE = "oO"
_SHELL_LONG_VALUE = _set("--rcfile --init-file")
_PY_SHORT_VALUE = "WX"
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


def _unescape_word(text: str) -> str:
    return _BACKSLASH.sub(r"\1", text.replace("\\\n", ""))


def _decode_ansi(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in _ANSI_SIMPLE:
                out.append(_ANSI_SIMPLE[nxt])
                i += 2
                continue
            if nxt == "x":
                digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :])
                if digits:
                    out.append(chr(int(digits.group(0), 16)))
                    i += 2 + len(digits.group(0))
                    continue
            if nxt in "01234567":
                digits = re.match(r"[0-7]{1,3}", body[i + 1 :])
                if digits:
                    out.append(chr(int(digits.group(0), 8)))
                    i += 1 + len(digits.group(0))
                    continue
            out.append(nxt)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_UNSAFE_FOR_PARSER = re.compile("[\U00010000-\U0010ffff\ud800-\udfff]")


def _parser_safe(text: str) -> str:
    """``text`` with every non-BMP character and lone surrogate replaced by U+FFFD.

    tree-sitter-bash 0.25 reads out of bounds (SIGSEGV on Linux) on a ``{`` followed by a
    4-byte UTF-8 sequence (tree-sitter/tree-sitter-bash#337): a crash would take the guard
    down. In bash these characters are plain word characters, so the structure is the same;
    only such characters inside words read differently (the payload hash still binds the
    exact command).
    """
    return _UNSAFE_FOR_PARSER.sub("\ufffd", text) if not text.isascii() else text


def _text(node: Node) -> str:
    data = node.text
    if data is None:
        return ""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # a token boundary inside a broken sequence
        return data.decode("utf-8", "replace")


@dataclass(slots=True)
class _Parts:
    """Accumulates the static text of a word while walking its nodes."""

    pieces: list[str] = field(default_factory=list)
    dynamic: bool = False
    glob: bool = False
    inner: list[Command] = field(default_factory=list)


class _Walker:
    """Walks one parsed script; nested scripts get a walker one level deeper."""

    def __init__(self, *, home: str, cwd: str, depth: int, out: Script) -> None:
        self.home = home
        self.cwd = cwd
        self.depth = depth
        self.out = out

    # -- findings and nested scripts ------------------------------------------------
    def finding(self, check: str, detail: str, targets: tuple[str, ...] = ()) -> None:
        self.out.findings.append(Finding(check, detail, targets))

    def nested(self, text: str, why: str, *, producers: Sequence[Command] = ()) -> list[Command]:
        """Parse ``text`` as a script one level deeper (``bash -c``, heredoc to a shell …)."""
        if self.depth + 1 > MAX_DEPTH:
            self.finding("nesting-too-deep", f"{why}: nested deeper than {MAX_DEPTH} levels")
            return []
        walker = _Walker(home=self.home, cwd=self.cwd, depth=self.depth + 1, out=self.out)
        return walker.script(text, stdin=list(producers))

    def script(self, text: str, *, stdin: list[Command] | None = None) -> list[Command]:
        safe = _parser_safe(text)
        root = _parser().parse(safe.encode("utf-8", "surrogatepass")).root_node
        if not root.has_error:
            return self.walk(root, stdin)
        self.finding("parse-error", "the command does not parse as bash: " + _preview(text))
        commands = self.walk(root, stdin)
        if "((" in safe:
            # bash reads "$((" / "((" that is not valid arithmetic as "$( (" / "( (":
            # look at that reading too, so "echo $((rm -rf /))" is not just a parse error.
            saved = self.cwd
            alternative = _parser().parse(
                safe.replace("((", "( (").encode("utf-8", "surrogatepass")
            )
            commands += self.walk(alternative.root_node, stdin)
            self.cwd = saved
        return commands

    # -- statements ------------------------------------------------------------------
    def walk(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        kind = node.type
        if kind == "command":
            return self.command(node, stdin)
        if kind == "redirected_statement":
            return self.redirected(node, stdin)
        if kind == "pipeline":
            return self.pipeline(node, stdin)
        if kind in ("subshell", "command_substitution", "process_substitution"):
            saved = self.cwd
            try:
                return self.children(node, stdin if kind == "subshell" else None)
            finally:
                self.cwd = saved
        if kind == "function_definition":
            saved = self.cwd
            body = node.child_by_field_name("body")
            try:
                return self.walk(body, None) if body is not None else []
            finally:
                self.cwd = saved
        if kind == "variable_assignment":
            value = node.child_by_field_name("value")
            if value is not None:
                word = self.word(value)
                if word.value:
                    # The value may name a path used later through the variable.
                    self.add(Command((), self.cwd, named=[word]))
            return []
        if kind in ("comment", "heredoc_body", "heredoc_start", "heredoc_end"):
            return []
        if kind in (
            "word",
            "string",
            "raw_string",
            "concatenation",
            "simple_expansion",
            "expansion",
            "number",
            "ansi_c_string",
        ):
            self.word(node)
            return []
        return self.children(node, stdin)

    def children(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        out: list[Command] = []
        for child in node.named_children:
            out.extend(self.walk(child, stdin))
        return out

    def pipeline(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        out: list[Command] = []
        previous = stdin
        for stage in node.named_children:
            if stage.type == "comment":
                continue
            produced = self.walk(stage, previous)
            out.extend(produced)
            previous = produced
        return out

    def redirected(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if c != body]
        texts: list[str] = []
        for redirect in redirects:
            if redirect.type == "heredoc_redirect":
                for part in redirect.named_children:
                    if part.type == "heredoc_body":
                        texts.append(_text(part))
                        for sub in part.named_children:
                            if sub.type in ("command_substitution", "expansion"):
                                self.walk(sub, None)
            elif redirect.type == "herestring_redirect":
                texts.extend(self.herestring(redirect))
        if body is None:
            commands: list[Command] = []
        elif body.type == "command":
            commands = self.command(body, stdin, texts)
        else:
            commands = self.walk(body, stdin)
            for command in commands if texts else ():
                command.stdin_texts.extend(texts)
                self.on_stdin(command, texts_only=True)
        writes: list[Word] = []
        reads: list[Word] = []
        for redirect in redirects:
            if redirect.type == "file_redirect":
                self.file_redirect(redirect, writes, reads)
            elif redirect.type == "heredoc_redirect":
                for part in redirect.named_children:
                    if part.type == "file_redirect":
                        self.file_redirect(part, writes, reads)
                    elif part.type not in ("heredoc_start", "heredoc_body", "heredoc_end"):
                        commands = commands + self.walk(part, commands)
        if writes or reads:
            self.add(Command((), self.cwd, redirect_writes=writes, redirect_reads=reads))
        return commands

    def herestring(self, node: Node) -> list[str]:
        out: list[str] = []
        for part in node.named_children:
            word = self.word(part)
            if word.value is not None:
                out.append(word.value)
        return out

    def file_redirect(self, node: Node, writes: list[Word], reads: list[Word]) -> None:
        operator = ""
        for child in node.children:
            if not child.is_named:
                operator = _text(child)
                break
        dest = node.child_by_field_name("destination")
        targets = (
            [dest]
            if dest is not None
            else [c for c in node.named_children if c.type != "file_descriptor"]
        )
        for target in targets:
            word = self.word(target)
            if operator in (">&", "<&", ">&-", "<&-") and (
                word.value is None or word.value.isdigit() or word.value == "-"
            ):
                continue
            if operator == "<":
                reads.append(word)
            else:
                writes.append(word)

    # -- simple commands ---------------------------------------------------------------
    def command(
        self, node: Node, stdin: list[Command] | None, texts: Sequence[str] = ()
    ) -> list[Command]:
        argv: list[Word] = []
        texts = list(texts)
        writes: list[Word] = []
        reads: list[Word] = []
        for child in node.named_children:
            kind = child.type
            if kind == "variable_assignment":
                self.walk(child, None)
            elif kind == "command_name":
                inner = child.named_children
                argv.append(self.word(inner[0]) if inner else Word.literal(_text(child)))
            elif kind == "herestring_redirect":
                texts.extend(self.herestring(child))
            elif kind == "file_redirect":
                self.file_redirect(child, writes, reads)
            elif kind == "comment":
                continue
            else:
                argv.append(self.word(child))
        if writes or reads:
            self.add(Command((), self.cwd, redirect_writes=writes, redirect_reads=reads))
        if not argv:
            return []
        before = len(self.out.commands)
        self.run(argv, via=(), producers=list(stdin or ()), texts=texts)
        return self.out.commands[before:]

    def add(self, command: Command) -> None:
        if len(self.out.commands) >= _MAX_COMMANDS:
            if not any(f.check == "too-complex" for f in self.out.findings):
                self.finding("too-complex", f"more than {_MAX_COMMANDS} simple commands")
            return
        self.out.commands.append(command)

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
            handler = _HANDLERS.get(program)
            if handler is None and _PYTHON.match(program):
                handler = _python
            if handler is None and program in _SHELLS:
                handler = _shell
            if handler is None and program in _INLINE_FLAGS:
                handler = _inline
            if handler is None and program in _RUNNERS:
                handler = _runner
            if handler is None:
                break
            step = handler(self, argv, via, producers, texts)
            if step is None:
                return
            if isinstance(step, _Plain):
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
        self.finding("eval", "eval runs a string as a command: " + _preview(_join(command.argv)))
        if command.args and all(w.value is not None for w in command.args):
            self.nested(" ".join(w.value or "" for w in command.args), "eval")

    def source(self, command: Command) -> None:
        for word in command.args[:1]:
            if word.inner:
                self.generated_code(word.inner, "source of generated code")

    def generated_code(self, producers: Sequence[Command], why: str) -> None:
        """A shell reads code that other commands produce (pipe or process substitution)."""
        if _from_downloader(producers):
            self.finding("download-exec", f"{why}: code downloaded from the network is executed")
            return
        static = _static_output(producers)
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
        if program in _SHELLS:
            reads_code = _shell_reads_stdin(command.args)
        elif _PYTHON.match(program):
            reads_code = not _python_has_source(command.args)
            if reads_code:
                for text in command.stdin_texts:
                    self.code(command, text)
                if command.producers and not texts_only:
                    if _from_downloader(command.producers):
                        self.finding(
                            "download-exec", "python runs code downloaded from the network"
                        )
                    elif _static_output(command.producers) is None:
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
        if _GUARD_IMPORT.search(text):
            self.finding("guard-self", "inline code imports the guard package: " + _preview(text))
        if _CODE_DELETE.search(text):
            self.finding(
                "inline-code", "inline code deletes files or runs commands: " + _preview(text)
            )
        strings = tuple(a or b for a, b in _CODE_STRING.findall(text))
        if strings:
            command.code_strings = command.code_strings + strings

    # -- words -----------------------------------------------------------------------------
    def word(self, node: Node) -> Word:
        parts = _Parts()
        self._word_into(node, parts)
        raw = _text(node)
        if parts.dynamic:
            return Word(None, raw, parts.glob, tuple(parts.inner))
        return Word("".join(parts.pieces), raw, parts.glob, tuple(parts.inner))

    def _word_into(self, node: Node, parts: _Parts) -> None:
        kind = node.type
        if kind == "word":
            text = _text(node)
            if _GLOB_CHARS.search(text):
                parts.glob = True
            parts.pieces.append(_unescape_word(text))
        elif kind == "raw_string":
            parts.pieces.append(_text(node)[1:-1])
        elif kind == "ansi_c_string":
            parts.pieces.append(_decode_ansi(_text(node)[2:-1]))
        elif kind == "string":
            for child in node.named_children:
                if child.type == "string_content":
                    parts.pieces.append(_DQ_BACKSLASH.sub(r"\1", _text(child)))
                else:
                    self._word_into(child, parts)
        elif kind in ("simple_expansion", "expansion"):
            self._expansion(node, parts)
        elif kind in ("command_substitution", "process_substitution"):
            before = len(self.out.commands)
            self.walk(node, None)
            parts.inner.extend(self.out.commands[before:])
            parts.dynamic = True
        elif kind == "concatenation":
            for child in node.children:
                if child.is_named:
                    self._word_into(child, parts)
                else:
                    parts.pieces.append(_text(child))
        elif kind in ("number", "string_content", "heredoc_content") or kind == "brace_expression":
            parts.pieces.append(_text(node))
        else:
            # arithmetic, translated strings, anything exotic: walk it for substitutions.
            for child in node.named_children:
                if child.type in ("command_substitution", "process_substitution"):
                    self._word_into(child, parts)
                else:
                    self.walk(child, None)
            parts.dynamic = True

    def _expansion(self, node: Node, parts: _Parts) -> None:
        names = [
            c for c in node.named_children if c.type in ("variable_name", "special_variable_name")
        ]
        plain = len(node.named_children) == 1 and len(names) == 1
        name = _text(names[0]) if names else ""
        if plain and name == "HOME":
            parts.pieces.append(self.home)
            return
        if plain and name == "PWD":
            parts.pieces.append(self.cwd)
            return
        for child in node.named_children:
            if child.type not in ("variable_name", "special_variable_name"):
                self.walk(child, None)
        parts.dynamic = True


def _preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _join(argv: Sequence[Word]) -> str:
    return " ".join(w.raw for w in argv)


def _from_downloader(producers: Sequence[Command], depth: int = 0) -> bool:
    for producer in producers:
        if producer.program in _DOWNLOADERS:
            return True
        if depth < 8 and _from_downloader(producer.producers, depth + 1):
            return True
        for word in producer.argv:
            if word.inner and _from_downloader(word.inner, depth + 1):
                return True
    return False


def _static_output(producers: Sequence[Command]) -> str | None:
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


def _shell_reads_stdin(args: Sequence[Word]) -> bool:
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


def _python_has_source(args: Sequence[Word]) -> bool:
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


# -- wrapper handlers: return the inner argv (and the wrapper chain), None when done, or
# _PLAIN when the program is not acting as a wrapper this time.
class _Plain:
    pass


_PLAIN = _Plain()
_Step = tuple[list[Word], tuple[str, ...]] | _Plain | None
_Handler = Callable[[_Walker, list[Word], tuple[str, ...], list[Command], list[str]], _Step]


def _generic(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
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


def _env(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
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
            tail = " ".join(_shell_quote(x.value) if x.value is not None else x.raw for x in rest)
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


def _xargs(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
    args = argv[1:]
    start = _skip_options(args, _XARGS_SHORT, _XARGS_LONG)
    replace = any((a.value or "").startswith(("-I", "-i", "--replace")) for a in args[:start])
    rest = args[start:] or [Word.literal("echo")]
    if not replace:
        rest = [*rest, Word(None, "<xargs input>")]
    return rest, (*via, "xargs")


def _watch(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
    args = argv[1:]
    start = _skip_options(args, "nq", frozenset({"--interval", "--chgexit"}))
    rest = args[start:]
    if any(a.value in ("-x", "--exec") for a in args[:start]):
        return rest, (*via, "watch")
    return _run_string(w, rest, "watch")


def _su(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
    args = argv[1:]
    for i, arg in enumerate(args):
        if arg.value in ("-c", "--command") and i + 1 < len(args):
            return _run_string(w, args[i + 1 : i + 2], "su -c")
        if arg.value is not None and arg.value.startswith("--command="):
            return _run_string(w, [Word.literal(arg.value.split("=", 1)[1])], "su -c")
    return None


def _ssh(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
    args = argv[1:]
    start = _skip_options(args, _SSH_SHORT, frozenset())
    rest = args[start + 1 :]
    if not rest:
        return None
    return _run_string(w, rest, "ssh remote command")


def _run_string(w: _Walker, words: Sequence[Word], why: str) -> _Step:
    if not words:
        return None
    if any(word.value is None for word in words):
        w.finding("dynamic-script", f"{why} runs a string built at runtime: " + _join(words))
        return None
    w.nested(" ".join(word.value or "" for word in words), why)
    return None


def _shell(
    w: _Walker, argv: list[Word], via: tuple[str, ...], producers: list[Command], texts: list[str]
) -> _Step:
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
            if script.inner and _from_downloader(script.inner):
                w.finding("download-exec", f"{program} -c runs code downloaded from the network")
            else:
                w.finding(
                    "dynamic-script",
                    f"{program} -c runs a string built at runtime: " + _preview(script.raw),
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
    w: _Walker, argv: list[Word], via: tuple[str, ...], producers: list[Command], texts: list[str]
) -> _Step:
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
    w: _Walker, argv: list[Word], via: tuple[str, ...], producers: list[Command], texts: list[str]
) -> _Step:
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


def _runner(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
    program = program_name(argv[0]) or ""
    subcommands, short, long = _RUNNERS[program]
    args = argv[1:]
    start = _skip_options(args, short, long)
    if start >= len(args) or args[start].value not in subcommands:
        return _PLAIN
    rest = args[start + 1 :]
    inner = _skip_options(rest, short, long)
    return rest[inner:], (*via, f"{program} {args[start].value}")


def _busybox(w: _Walker, argv: list[Word], via: tuple[str, ...], *_: object) -> _Step:
    return argv[1:], (*via, "busybox")


def _shell_quote(text: str) -> str:
    if text and re.fullmatch(r"[A-Za-z0-9_./=:@%+,-]+", text):
        return text
    return "'" + text.replace("'", "'\\''") + "'"


_HANDLERS: dict[str, _Handler] = dict.fromkeys(_OPTS, _generic)
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


def analyze(command: str, *, cwd: str, home: str | None = None) -> Script:
    """Parse ``command`` and return every simple command it would run, plus findings."""
    script = Script([], [])
    walker = _Walker(home=home or os.path.expanduser("~"), cwd=cwd, depth=0, out=script)
    try:
        walker.script(command)
    except RecursionError:
        # Pathologically deep nesting: what was collected so far stays, plus a finding.
        walker.finding("too-complex", "the command is nested too deeply to analyze")
    return script
