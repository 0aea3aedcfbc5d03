"""The tree-sitter walk: a bash script's syntax tree becomes simple commands and their words.

Lists, pipelines, ``&&``/``||``, subshells, compound statements, command and process
substitution, heredocs and redirections are walked here; what a simple command then runs
(wrappers, nested shells, interpreters) is :class:`guard._policy.bash.walker.Walker`'s business.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from guard._policy.bash.model import (
    MAX_DEPTH,
    Command,
    Finding,
    Script,
    Word,
    preview,
    sensitive_variable,
)
from guard._policy.bash.quoting import (
    decode_ansi_c,
    has_brace,
    has_glob,
    splits_a_word,
    unquote_double,
    unquote_word,
)

__all__ = ["SyntaxWalker"]

_MAX_COMMANDS = 2000

_PARSER: Parser | None = None


def _parser() -> Parser:
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


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


def _fd(redirect: Node) -> str:
    """The descriptor a redirection names before its operator (``2>x``: ``"2"``), or ""."""
    for child in redirect.named_children:
        if child.type == "file_descriptor":
            return _text(child)
    return ""


_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


def _is_descriptor(number: Node) -> bool:
    """Whether ``number`` is the descriptor of the redirection glued to it (``0<file``).

    tree-sitter-bash reads the ``0`` of ``sh 0<<<'rm -rf /'`` or ``bash 0< evil.sh`` as an
    argument; bash reads it as the descriptor, so the shell reads its program on stdin.
    """
    node = number
    while node.next_sibling is None and node.parent is not None:
        if node.parent.type not in ("command_name", "command"):
            break
        node = node.parent
    after = node.next_sibling
    return (
        after is not None
        and after.type in _REDIRECTS
        and after.start_byte == number.end_byte
        and _text(number).isdigit()
    )


_SUBSTITUTION_STARTS = ("$(", "`", "<(", ">(")

# Where bash expands a word's text once more and evaluates it as arithmetic: there even a
# quoted ``'$(…)'`` runs (``(( '$(cmd)' ))``, ``${a['$(cmd)']}`` of an indexed array).
_ARITHMETIC = frozenset({"arithmetic_expansion", "subscript", "c_style_for_statement"})
# Where a word's value may be evaluated as a name or a number later (``x='a[$(cmd)]'``
# then ``$((x))``; ``[[ 'a[$(cmd)]' -eq 1 ]]``): the substitutions of its subscripts run.
_NAMES = frozenset({"variable_assignment", "test_command", "declaration_command", "unset_command"})
_OWN_WORDS = frozenset({"command_substitution", "process_substitution", "program"})


def _evaluation(node: Node) -> str | None:
    """``"arithmetic"``, ``"name"`` or ``None``: how bash may evaluate the word ``node``."""
    parent = node.parent
    while parent is not None and parent.type not in _OWN_WORDS:
        # ``(( … ))`` is a compound_statement, or an ERROR node where it does not parse
        if parent.type in _ARITHMETIC or parent.children[0].type == "((":
            return "arithmetic"
        if parent.type in _NAMES:
            return "name"
        parent = parent.parent
    return None


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
    brace: bool = False
    inner: list[Command] = field(default_factory=list)


class SyntaxWalker(ABC):
    """Walks one parsed script; nested scripts get a walker one level deeper.

    Subclasses say what a simple command runs (:meth:`run`) and what code a shell or an
    interpreter reads on its stdin (:meth:`on_stdin`).
    """

    def __init__(self, *, home: str, cwd: str, depth: int, out: Script) -> None:
        self.home = home
        self.cwd = cwd
        self.depth = depth
        self.out = out
        self.stdin_file = False
        """Whether the simple command being run reads stdin from a ``<`` redirection."""
        self.around: list[Command] | None = None
        """The producers piped into the statement being walked: its substitutions read them."""
        self.around_unknown = False
        """The statement being walked reads a file, heredoc or herestring: so do its
        substitutions."""
        self.inherited = False
        """The commands being walked read a stdin they inherit from around a substitution,
        or from around ``bash -c``, or that ``exec <FILE`` set: a shell among them that
        reads its stdin asks."""
        self.stdin_moved = False
        """A redirection just read made stdin a copy of another descriptor (``<&3``)."""
        self.dirs: list[str] = []
        """The ``pushd`` stack."""

    # -- findings and nested scripts ------------------------------------------------
    def finding(self, check: str, detail: str, targets: tuple[str, ...] = ()) -> None:
        self.out.findings.append(Finding(check, detail, targets))

    def nested(
        self,
        text: str,
        why: str,
        *,
        producers: Sequence[Command] = (),
        inherited: bool = False,
    ) -> list[Command]:
        """Parse ``text`` as a script one level deeper (``bash -c``, heredoc to a shell …).

        ``producers`` are piped into it; ``inherited``: it reads another stdin (a file, a
        heredoc or herestring) whose text is not followed into it.
        """
        if self.depth + 1 > MAX_DEPTH:
            self.finding("nesting-too-deep", f"{why}: nested deeper than {MAX_DEPTH} levels")
            return []
        walker = type(self)(home=self.home, cwd=self.cwd, depth=self.depth + 1, out=self.out)
        walker.inherited = inherited
        walker.around = list(producers) or None
        return walker.script(text, stdin=list(producers))

    def script(self, text: str, *, stdin: list[Command] | None = None) -> list[Command]:
        safe = _parser_safe(text)
        if splits_a_word(text):
            self.finding(
                "unresolved", "a line continuation splits a word (bash joins it): " + preview(text)
            )
        root = _parser().parse(safe.encode("utf-8", "surrogatepass")).root_node
        if not root.has_error:
            return self.walk(root, stdin)
        self.finding("parse-error", "the command does not parse as bash: " + preview(text))
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
        if kind == "subshell":
            subshell = (self.cwd, self.inherited)
            try:
                return self.children(node, stdin)
            finally:
                self.cwd, self.inherited = subshell
        if kind in ("command_substitution", "process_substitution"):
            return self.substitution(node)
        if kind == "function_definition":
            # The body runs wherever the function is called, with that call's stdin
            # (``f() { bash; }; curl URL | f``): a shell in it reading stdin asks.
            body = node.child_by_field_name("body")
            function = (self.cwd, self.inherited, self.around)
            self.inherited, self.around = True, None
            try:
                return self.walk(body, None) if body is not None else []
            finally:
                self.cwd, self.inherited, self.around = function
        if kind == "variable_assignment":
            name = node.child_by_field_name("name")
            self.assignment(_text(name) if name is not None else "")
            if name is not None and name.type == "subscript":
                self.children(name, None)  # ``a[$(cmd)]=1``: bash expands the subscript
            value = node.child_by_field_name("value")
            if value is not None:
                word = self.word(value)
                if word.value:
                    # The value may name a path used later through the variable.
                    self.add(Command((), self.cwd, named=[word]))
            return []
        if kind == "declaration_command":
            return self.declaration(node)
        if kind == "file_redirect":
            # A redirection on its own: ``$(< file)``.
            writes: list[Word] = []
            reads: list[Word] = []
            self.stray_words(self.file_redirect(node, writes, reads), node)
            self.add(Command((), self.cwd, redirect_writes=writes, redirect_reads=reads))
            return []
        if kind == "heredoc_body":
            # Only met outside its redirection, where tree-sitter-bash recovered from an
            # error; bash still expands it, so its substitutions run.
            for sub in node.named_children:
                if sub.type in ("command_substitution", "expansion"):
                    self.walk(sub, None)
            return []
        if kind in ("comment", "heredoc_start", "heredoc_end"):
            return []
        if kind == "regex":
            self.pattern(_text(node), "a pattern", evaluated=False)
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

    def substitution(self, node: Node) -> list[Command]:
        """``$(…)``, backquotes and ``<(…)`` read the stdin of the statement around them
        (bash expands a command's words before it applies the command's own redirections);
        ``>(…)`` reads what the command writes into it. So ``curl URL | echo "$(bash)"``
        and ``echo 'rm -rf ~' > >(bash)`` run code from stdin, as ``curl URL | bash`` does.
        """
        unknown = self.around_unknown or _text(node).startswith(">(")
        saved = (self.cwd, self.inherited)
        self.inherited = self.inherited or unknown
        try:
            return self.children(node, self.around)
        finally:
            self.cwd, self.inherited = saved

    def pattern(self, text: str, what: str, *, evaluated: bool) -> None:
        """Text bash expands once more, which tree-sitter-bash keeps as text: a pattern
        (``${x#$(…)}``), arithmetic or an array subscript (``read 'a[$(…)]'``). bash runs its
        substitutions, with the stdin of the statement around them.
        """
        if not any(start in text for start in _SUBSTITUTION_STARTS):
            return
        if self.depth + 1 > MAX_DEPTH:
            self.finding("nesting-too-deep", f"{what}: nested deeper than {MAX_DEPTH} levels")
            return
        root = _parser().parse(_parser_safe(text).encode("utf-8", "surrogatepass")).root_node
        if root.has_error:
            self.finding("unresolved", f"{what} that does not parse as bash: " + preview(text))
        walker = type(self)(home=self.home, cwd=self.cwd, depth=self.depth + 1, out=self.out)
        walker.around, walker.around_unknown = self.around, self.around_unknown
        # A name a builtin evaluates runs its subscripts with the command's own stdin, its
        # redirections applied (``read 'a[$(bash)]' < evil.sh``): a shell in it asks.
        walker.inherited = self.inherited or evaluated
        walker.substitutions(root)

    def evaluated(self, node: Node, text: str) -> None:
        """``text``, the static text of word ``node``, where bash expands it once more.

        Inside arithmetic and subscripts even quoted text is expanded (``(( '$(cmd)' ))``
        runs ``cmd``); an assignment's value or a ``[[ … ]]`` operand may be evaluated as a
        name later, which runs its subscripts (:meth:`subscripts`).
        """
        if not any(start in text for start in _SUBSTITUTION_STARTS):
            return  # nothing to run (most words): skip the walk up the tree
        how = _evaluation(node)
        if how == "arithmetic":
            # expanded with the words around it, before the statement's redirections
            self.pattern(text, "arithmetic bash evaluates", evaluated=False)
        elif how == "name":
            self.subscripts(text)

    def subscripts(self, text: str) -> None:
        """A name or number bash evaluates (``read``, ``printf -v``, ``unset``, ``let``,
        ``test -v``, ``$((var))``): the substitutions in its array subscripts run, so
        ``read 'a[$(cmd)]'`` runs ``cmd`` although the word is quoted.
        """
        bracket = text.find("[")
        if bracket >= 0:
            self.pattern(text[bracket:], "an array subscript bash evaluates", evaluated=True)

    def substitutions(self, node: Node) -> None:
        for child in node.named_children:
            if child.type in ("command_substitution", "process_substitution", "regex"):
                self.walk(child, None)
            else:
                self.substitutions(child)

    def children(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        out: list[Command] = []
        for child in node.named_children:
            out.extend(self.walk(child, stdin))
        return out

    def pipeline(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        out: list[Command] = []
        previous = stdin
        saved = self.around
        try:
            for stage in node.named_children:
                if stage.type == "comment":
                    continue
                # Every substitution in the stage reads the pipe too (see :meth:`substitution`).
                self.around = previous if previous is not None else saved
                produced = self.walk(stage, previous)
                out.extend(produced)
                previous = produced
        finally:
            self.around = saved
        return out

    def redirected(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if c != body]
        texts: list[str] = []
        # tree-sitter-bash hangs ``a | cat <<EOF`` on the whole pipeline; bash expands the
        # heredoc for its last command, whose stdin is the pipe.
        saved_unknown = self.around_unknown
        self.around_unknown = saved_unknown or (body is not None and body.type == "pipeline")
        for redirect in redirects:
            if redirect.type == "heredoc_redirect":
                quoted = any(
                    q in _text(part)
                    for part in redirect.named_children
                    if part.type == "heredoc_start"
                    for q in "'\"\\"
                )
                for part in redirect.named_children:
                    if part.type == "heredoc_body":
                        texts.append(_text(part))
                        for sub in part.named_children:
                            if sub.type in ("command_substitution", "expansion"):
                                self.walk(sub, None)
                        if not quoted:
                            self.backquotes(_text(part))
            elif redirect.type == "herestring_redirect":
                texts.extend(self.herestring(redirect))
        self.around_unknown = saved_unknown
        writes: list[Word] = []
        reads: list[Word] = []
        arguments: list[Node] = []
        for redirect in redirects:
            if redirect.type == "file_redirect":
                arguments += self.file_redirect(redirect, writes, reads)
            elif redirect.type == "heredoc_redirect":
                for part in redirect.named_children:
                    if part.type == "file_redirect":
                        arguments += self.file_redirect(part, writes, reads)
        if body is None:
            self.stray_words(arguments, node)
            commands: list[Command] = []
        elif body.type == "command":
            # (command() takes a ``<&N`` seen here: see take_stdin_moved)
            commands = self.command(body, stdin, texts, stdin_file=bool(reads), arguments=arguments)
        else:
            self.stray_words(arguments, node)
            other = bool(reads) or self.take_stdin_moved()
            saved_unknown = self.around_unknown
            self.around_unknown = saved_unknown or bool(texts) or other
            try:
                commands = self.walk(body, stdin)
            finally:
                self.around_unknown = saved_unknown
            for command in commands if (texts or other) else ():
                command.stdin_texts.extend(texts)
                command.stdin_file = command.stdin_file or other
                self.on_stdin(command, texts_only=True)
        for redirect in redirects:
            if redirect.type == "heredoc_redirect":
                for part in redirect.named_children:
                    if part.type not in (
                        "heredoc_start",
                        "heredoc_body",
                        "heredoc_end",
                        "file_redirect",
                    ):
                        commands = commands + self.walk(part, commands)
        if writes or reads:
            self.add(Command((), self.cwd, redirect_writes=writes, redirect_reads=reads))
        return commands

    def backquotes(self, body: str) -> None:
        """Run the ```…``` substitutions of an unquoted heredoc ``body``.

        tree-sitter-bash leaves them as text, bash runs them. A backslash quotes the next
        character; inside the backquotes it is dropped before a backslash, a backquote or a
        dollar sign.
        """
        inner: list[str] | None = None
        i = 0
        while i < len(body):
            char = body[i]
            if char == "\\" and i + 1 < len(body):
                following = body[i + 1]
                if inner is not None:
                    inner.append(following if following in "\\`$" else char + following)
                i += 2
                continue
            if char == "`":
                if inner is None:
                    inner = []
                else:
                    self.nested(
                        "".join(inner),
                        "a backquoted command in a heredoc",
                        producers=self.around or (),
                        inherited=self.inherited or self.around_unknown,
                    )
                    inner = None
            elif inner is not None:
                inner.append(char)
            i += 1
        if inner is not None:
            self.finding("unresolved", "an unmatched backquote in a heredoc: " + preview(body))

    def herestring(self, node: Node) -> list[str]:
        out: list[str] = []
        for part in node.named_children:
            word = self.word(part)
            if word.value is not None:
                out.append(word.value)
        return out

    def file_redirect(self, node: Node, writes: list[Word], reads: list[Word]) -> list[Node]:
        """Record the file a redirection writes or reads; return the words after it.

        tree-sitter-bash puts every word after the target into the redirection
        (``git 2>&1 reset --hard``), but bash passes them to the command as arguments.
        """
        operator = ""
        for child in node.children:
            if not child.is_named:
                operator = _text(child)
                break
        dests = node.children_by_field_name("destination")
        if operator in (">&-", "<&-"):
            return dests  # the operator closes a descriptor: it has no target
        targets = (
            dests[:1] if dests else [c for c in node.named_children if c.type != "file_descriptor"]
        )
        for target in targets:
            word = self.word(target)
            # ">& WORD" duplicates a descriptor when WORD is digits or "-", else it opens the
            # file WORD: a target only known at runtime may be a file.
            if (
                operator in (">&", "<&")
                and word.value is not None
                and (word.value.isdigit() or word.value == "-")
            ):
                if operator == "<&" and word.value not in ("0", "-") and _fd(node) in ("", "0"):
                    self.stdin_moved = True  # stdin now reads what descriptor N reads
                continue
            if operator == "<":
                reads.append(word)
            elif operator == "<>":
                reads.append(word)
                writes.append(word)
            else:
                writes.append(word)
        return dests[1:]

    def take_stdin_moved(self) -> bool:
        """Whether a redirection read since the last call made stdin another descriptor."""
        moved, self.stdin_moved = self.stdin_moved, False
        return moved

    def stray_words(self, words: Sequence[Node], node: Node) -> None:
        """Words after the redirection of something that is not a simple command."""
        if words:
            self.finding(
                "parse-error",
                "words after a redirection where bash allows none: " + preview(_text(node)),
            )
            for word in words:
                self.word(word)

    def declaration(self, node: Node) -> list[Command]:
        """``export``/``declare``/``local`` …: assignments, names built at runtime, namerefs."""
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.walk(child, None)
                continue
            if child.type in ("variable_name", "comment"):
                continue
            word = self.word(child)
            value = word.value
            if value is None or (value.startswith("-") and "n" in value[1:]) or "=" in value:
                self.finding(
                    "shell-environment",
                    "declares a variable whose name is only known at runtime, or a nameref: "
                    + word.raw,
                )
        return []

    def assignment(self, name: str) -> None:
        """``NAME=…``: a variable the analysis relies on, or that loads code, asks."""
        base = name.split("[", 1)[0]
        if sensitive_variable(base) or not base.isidentifier():
            self.finding(
                "shell-environment",
                f"assigns {base or 'a variable'}, which changes what later commands run "
                "or where their paths point",
            )

    # -- simple commands ---------------------------------------------------------------
    def command(
        self,
        node: Node,
        stdin: list[Command] | None,
        texts: Sequence[str] = (),
        *,
        stdin_file: bool = False,
        arguments: Sequence[Node] = (),
    ) -> list[Command]:
        """Run the simple command ``node``; ``arguments`` are words tree-sitter-bash put in
        a redirection after it (see :meth:`file_redirect`)."""
        argv: list[Word] = []
        texts = list(texts)
        writes: list[Word] = []
        reads: list[Word] = []
        has_name = node.child_by_field_name("name") is not None
        children = node.named_children
        # tree-sitter-bash reads ``A=1 B=2 # note`` and a command on the next line as one
        # command, but the comment ends the line: those assignments are not prefixes.
        prefixes = max((i + 1 for i, c in enumerate(children) if c.type == "comment"), default=0)
        for i, child in enumerate(children):
            kind = child.type
            if kind == "variable_assignment":
                name = child.child_by_field_name("name")
                if has_name and i >= prefixes and name is not None and _text(name) == "IFS":
                    # ``IFS=… read``: a prefix IFS only changes how that command splits.
                    value = child.child_by_field_name("value")
                    if value is not None:
                        self.word(value)
                    continue
                self.walk(child, None)
            elif kind == "command_name":
                inner = child.named_children
                if inner and inner[0].type == "number" and _is_descriptor(inner[0]):
                    continue  # ``0<evil.sh bash``: the command is the word after the target
                argv.append(self.word(inner[0]) if inner else Word.literal(_text(child)))
            elif kind == "herestring_redirect":
                texts.extend(self.herestring(child))
            elif kind == "file_redirect":
                argv.extend(self.word(w) for w in self.file_redirect(child, writes, reads))
            elif kind == "comment" or (kind == "number" and _is_descriptor(child)):
                continue
            else:
                argv.append(self.word(child))
        argv.extend(self.word(w) for w in arguments)
        if writes or reads:
            self.add(Command((), self.cwd, redirect_writes=writes, redirect_reads=reads))
        stdin_file = stdin_file or bool(reads) or self.take_stdin_moved()
        if stdin_file and [w.value for w in argv] == ["exec"]:
            # ``exec <FILE`` (or ``exec <&3``): every later command reads FILE on stdin.
            self.inherited = True
        if not argv:
            return []
        before = len(self.out.commands)
        self.stdin_file = stdin_file or self.inherited
        try:
            self.run(argv, via=(), producers=list(stdin or ()), texts=texts)
        finally:
            self.stdin_file = False
        return self.out.commands[before:]

    def add(self, command: Command) -> None:
        if self.stdin_file and command.argv:
            command.stdin_file = True
        if len(self.out.commands) >= _MAX_COMMANDS:
            if not any(f.check == "too-complex" for f in self.out.findings):
                self.finding("too-complex", f"more than {_MAX_COMMANDS} simple commands")
            return
        self.out.commands.append(command)

    @abstractmethod
    def run(
        self,
        argv: Sequence[Word],
        *,
        via: tuple[str, ...],
        producers: list[Command],
        texts: list[str],
    ) -> None:
        """Record the command ``argv`` really runs (and what it runs in turn)."""

    @abstractmethod
    def on_stdin(self, command: Command, *, texts_only: bool = False) -> None:
        """Check the code a shell or an interpreter reads on its stdin."""

    @abstractmethod
    def change_dir(self, args: Sequence[Word]) -> None:
        """Follow ``cd``/``pushd`` so later relative paths resolve where they will run."""

    @abstractmethod
    def generated_code(self, producers: Sequence[Command], why: str) -> None:
        """Check code that other commands in the pipeline produce for a shell to run."""

    @abstractmethod
    def code(self, command: Command, text: str, language: str) -> None:
        """Check inline code ``text`` in ``language`` run by ``command``."""

    # -- words -----------------------------------------------------------------------------
    def word(self, node: Node) -> Word:
        parts = _Parts()
        self._word_into(node, parts)
        raw = _text(node)
        self.evaluated(node, "".join(parts.pieces))
        brace = parts.brace or (node.type in ("word", "concatenation") and has_brace(raw))
        if parts.dynamic:
            return Word(None, raw, parts.glob, tuple(parts.inner), brace)
        return Word("".join(parts.pieces), raw, parts.glob, tuple(parts.inner), brace)

    def _word_into(self, node: Node, parts: _Parts) -> None:
        kind = node.type
        if kind == "word":
            text = _text(node)
            if has_glob(text):
                parts.glob = True
            parts.pieces.append(unquote_word(text))
        elif kind == "raw_string":
            parts.pieces.append(_text(node)[1:-1])
        elif kind == "ansi_c_string":
            decoded = decode_ansi_c(_text(node)[2:-1])
            if decoded is None:
                parts.dynamic = True  # an escape it does not fully decode: unresolvable
            else:
                parts.pieces.append(decoded)
        elif kind == "string":
            for child in node.named_children:
                if child.type == "string_content":
                    parts.pieces.append(unquote_double(_text(child)))
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
        elif kind == "brace_expression":
            parts.brace = True
            parts.pieces.append(_text(node))
        elif kind in ("number", "string_content", "heredoc_content"):
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
