"""The tree-sitter walk: a bash script's syntax tree becomes simple commands and their words.

Lists, pipelines, ``&&``/``||``, subshells, compound statements, command and process
substitution are walked here, on the node helpers of ``tree``; a word's value is ``words``'
(:class:`WordWalker`), redirections and heredocs are ``redirects``' (:class:`RedirectWalker`),
the bases of :class:`SyntaxWalker`. What a simple command then runs (wrappers, nested shells,
interpreters) is :class:`guard._policy.bash.walker.Walker`'s business.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from tree_sitter import Node

from guard._policy.bash.model import MAX_DEPTH, Command, Word, preview, sensitive_variable
from guard._policy.bash.parsing.quoting import splits_a_word
from guard._policy.bash.parsing.redirects import RedirectWalker
from guard._policy.bash.parsing.tree import is_descriptor, node_text, parser, parser_safe

__all__ = ["SyntaxWalker"]

_MAX_COMMANDS = 2000


class SyntaxWalker(RedirectWalker):
    """Walks one parsed script; nested scripts get a walker one level deeper.

    Subclasses say what a simple command runs (:meth:`run`) and what code a shell or an
    interpreter reads on its stdin (:meth:`on_stdin`).
    """

    # -- nested scripts ---------------------------------------------------------------
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
        safe = parser_safe(text)
        if splits_a_word(text):
            self.finding(
                "unresolved", "a line continuation splits a word (bash joins it): " + preview(text)
            )
        root = parser().parse(safe.encode("utf-8", "surrogatepass")).root_node
        if not root.has_error:
            return self.walk(root, stdin)
        self.finding("parse-error", "the command does not parse as bash: " + preview(text))
        commands = self.walk(root, stdin)
        if "((" in safe:
            # bash reads "$((" / "((" that is not valid arithmetic as "$( (" / "( (":
            # look at that reading too, so "echo $((rm -rf /))" is not just a parse error.
            saved = self.cwd
            alternative = parser().parse(safe.replace("((", "( (").encode("utf-8", "surrogatepass"))
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
            self.assignment(node_text(name) if name is not None else "")
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
            self.pattern(node_text(node), "a pattern", evaluated=False)
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
        unknown = self.around_unknown or node_text(node).startswith(">(")
        saved = (self.cwd, self.inherited)
        self.inherited = self.inherited or unknown
        try:
            return self.children(node, self.around)
        finally:
            self.cwd, self.inherited = saved

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
                if has_name and i >= prefixes and name is not None and node_text(name) == "IFS":
                    # ``IFS=… read``: a prefix IFS only changes how that command splits.
                    value = child.child_by_field_name("value")
                    if value is not None:
                        self.word(value)
                    continue
                self.walk(child, None)
            elif kind == "command_name":
                inner = child.named_children
                if inner and inner[0].type == "number" and is_descriptor(inner[0]):
                    continue  # ``0<evil.sh bash``: the command is the word after the target
                argv.append(self.word(inner[0]) if inner else Word.literal(node_text(child)))
            elif kind == "herestring_redirect":
                texts.extend(self.herestring(child))
            elif kind == "file_redirect":
                argv.extend(self.word(w) for w in self.file_redirect(child, writes, reads))
            elif kind == "comment" or (kind == "number" and is_descriptor(child)):
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
    def change_dir(self, args: Sequence[Word]) -> None:
        """Follow ``cd``/``pushd`` so later relative paths resolve where they will run."""

    @abstractmethod
    def generated_code(self, producers: Sequence[Command], why: str) -> None:
        """Check code that other commands in the pipeline produce for a shell to run."""

    @abstractmethod
    def code(self, command: Command, text: str, language: str) -> None:
        """Check inline code ``text`` in ``language`` run by ``command``."""
