"""A word's value as bash will see it, and the code bash runs while expanding it.

Quotes are removed, ``$HOME``/``$PWD`` resolved, globs and braces noted; a word with an
expansion only known at runtime has no value. Command substitutions inside a word, and text
bash expands once more (patterns, arithmetic, array subscripts), are walked as nested
scripts. :class:`WordWalker` is the base of the walker: it holds the walk's state.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from tree_sitter import Node

from guard._policy.bash.model import MAX_DEPTH, Command, Finding, Script, Word, preview
from guard._policy.bash.parsing.quoting import (
    decode_ansi_c,
    has_brace,
    has_glob,
    unquote_double,
    unquote_word,
)
from guard._policy.bash.parsing.tree import (
    SUBSTITUTION_STARTS,
    evaluation,
    node_text,
    parser,
    parser_safe,
)

__all__ = ["WordWalker"]


@dataclass(slots=True)
class _Parts:
    """Accumulates the static text of a word while walking its nodes."""

    pieces: list[str] = field(default_factory=list)
    dynamic: bool = False
    glob: bool = False
    brace: bool = False
    inner: list[Command] = field(default_factory=list)


class WordWalker(ABC):
    """The walker's state and findings, and its words (see the module docstring)."""

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

    # -- findings -------------------------------------------------------------------------
    def finding(self, check: str, detail: str, targets: tuple[str, ...] = ()) -> None:
        self.out.findings.append(Finding(check, detail, targets))

    @abstractmethod
    def walk(self, node: Node, stdin: list[Command] | None) -> list[Command]:
        """Walk the statement ``node``; return the simple commands it runs."""

    # -- words -----------------------------------------------------------------------------
    def word(self, node: Node) -> Word:
        parts = _Parts()
        self._word_into(node, parts)
        raw = node_text(node)
        self.evaluated(node, "".join(parts.pieces))
        brace = parts.brace or (node.type in ("word", "concatenation") and has_brace(raw))
        if parts.dynamic:
            return Word(None, raw, parts.glob, tuple(parts.inner), brace)
        return Word("".join(parts.pieces), raw, parts.glob, tuple(parts.inner), brace)

    def _word_into(self, node: Node, parts: _Parts) -> None:
        kind = node.type
        if kind == "word":
            text = node_text(node)
            if has_glob(text):
                parts.glob = True
            parts.pieces.append(unquote_word(text))
        elif kind == "raw_string":
            parts.pieces.append(node_text(node)[1:-1])
        elif kind == "ansi_c_string":
            decoded = decode_ansi_c(node_text(node)[2:-1])
            if decoded is None:
                parts.dynamic = True  # an escape it does not fully decode: unresolvable
            else:
                parts.pieces.append(decoded)
        elif kind == "string":
            for child in node.named_children:
                if child.type == "string_content":
                    parts.pieces.append(unquote_double(node_text(child)))
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
                    parts.pieces.append(node_text(child))
        elif kind == "brace_expression":
            parts.brace = True
            parts.pieces.append(node_text(node))
        elif kind in ("number", "string_content", "heredoc_content"):
            parts.pieces.append(node_text(node))
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
        name = node_text(names[0]) if names else ""
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

    # -- text bash expands once more ----------------------------------------------------
    def pattern(self, text: str, what: str, *, evaluated: bool) -> None:
        """Text bash expands once more, which tree-sitter-bash keeps as text: a pattern
        (``${x#$(…)}``), arithmetic or an array subscript (``read 'a[$(…)]'``). bash runs its
        substitutions, with the stdin of the statement around them.
        """
        if not any(start in text for start in SUBSTITUTION_STARTS):
            return
        if self.depth + 1 > MAX_DEPTH:
            self.finding("nesting-too-deep", f"{what}: nested deeper than {MAX_DEPTH} levels")
            return
        root = parser().parse(parser_safe(text).encode("utf-8", "surrogatepass")).root_node
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
        if not any(start in text for start in SUBSTITUTION_STARTS):
            return  # nothing to run (most words): skip the walk up the tree
        how = evaluation(node)
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
