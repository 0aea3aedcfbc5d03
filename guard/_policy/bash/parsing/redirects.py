"""Redirections, heredocs and herestrings: what a statement writes, reads and feeds stdin.

tree-sitter-bash hangs the words after a redirection's target on the redirection, and a
heredoc on a whole pipeline; bash does neither, and this reads them as bash does. An
unquoted heredoc's substitutions (backquotes included) run, with the statement's stdin.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from tree_sitter import Node

from guard._policy.bash.model import Command, Word, preview
from guard._policy.bash.parsing.tree import fd_of, node_text
from guard._policy.bash.parsing.words import WordWalker

__all__ = ["RedirectWalker"]


class RedirectWalker(WordWalker):
    """The walker's redirections (see the module docstring); statements are its subclass's."""

    @abstractmethod
    def command(
        self,
        node: Node,
        stdin: list[Command] | None,
        texts: Sequence[str] = (),
        *,
        stdin_file: bool = False,
        arguments: Sequence[Node] = (),
    ) -> list[Command]:
        """Run the simple command ``node`` (see :class:`.syntax.SyntaxWalker`)."""

    @abstractmethod
    def nested(
        self,
        text: str,
        why: str,
        *,
        producers: Sequence[Command] = (),
        inherited: bool = False,
    ) -> list[Command]:
        """Parse ``text`` as a script one level deeper."""

    @abstractmethod
    def add(self, command: Command) -> None:
        """Record ``command``."""

    @abstractmethod
    def on_stdin(self, command: Command, *, texts_only: bool = False) -> None:
        """Check the code a shell or an interpreter reads on its stdin."""

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
                    q in node_text(part)
                    for part in redirect.named_children
                    if part.type == "heredoc_start"
                    for q in "'\"\\"
                )
                for part in redirect.named_children:
                    if part.type == "heredoc_body":
                        texts.append(node_text(part))
                        for sub in part.named_children:
                            if sub.type in ("command_substitution", "expansion"):
                                self.walk(sub, None)
                        if not quoted:
                            self.backquotes(node_text(part))
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
                operator = node_text(child)
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
                if operator == "<&" and word.value not in ("0", "-") and fd_of(node) in ("", "0"):
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
                "words after a redirection where bash allows none: " + preview(node_text(node)),
            )
            for word in words:
                self.word(word)
