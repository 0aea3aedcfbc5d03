"""Reading tree-sitter-bash's syntax tree: the parser, a node's text, and what a node is.

The parser is made safe for text it would crash on; the rest answers questions about one
node (its text, the descriptor a redirection names, whether bash evaluates a word once
more). Walking the tree is :mod:`guard._policy.bash.parsing.syntax`'s business.
"""

from __future__ import annotations

import re

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

__all__ = [
    "REDIRECTS",
    "SUBSTITUTION_STARTS",
    "evaluation",
    "fd_of",
    "is_descriptor",
    "node_text",
    "parser",
    "parser_safe",
]

_PARSER: Parser | None = None


def parser() -> Parser:
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


_UNSAFE_FOR_PARSER = re.compile("[\U00010000-\U0010ffff\ud800-\udfff]")


def parser_safe(text: str) -> str:
    """``text`` with every non-BMP character and lone surrogate replaced by U+FFFD.

    tree-sitter-bash 0.25 reads out of bounds (SIGSEGV on Linux) on a ``{`` followed by a
    4-byte UTF-8 sequence (tree-sitter/tree-sitter-bash#337): a crash would take the guard
    down. In bash these characters are plain word characters, so the structure is the same;
    only such characters inside words read differently (the payload hash still binds the
    exact command).
    """
    return _UNSAFE_FOR_PARSER.sub("\ufffd", text) if not text.isascii() else text


def fd_of(redirect: Node) -> str:
    """The descriptor a redirection names before its operator (``2>x``: ``"2"``), or ""."""
    for child in redirect.named_children:
        if child.type == "file_descriptor":
            return node_text(child)
    return ""


REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


def is_descriptor(number: Node) -> bool:
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
        and after.type in REDIRECTS
        and after.start_byte == number.end_byte
        and node_text(number).isdigit()
    )


SUBSTITUTION_STARTS = ("$(", "`", "<(", ">(")

# Where bash expands a word's text once more and evaluates it as arithmetic: there even a
# quoted ``'$(…)'`` runs (``(( '$(cmd)' ))``, ``${a['$(cmd)']}`` of an indexed array).
_ARITHMETIC = frozenset({"arithmetic_expansion", "subscript", "c_style_for_statement"})
# Where a word's value may be evaluated as a name or a number later (``x='a[$(cmd)]'``
# then ``$((x))``; ``[[ 'a[$(cmd)]' -eq 1 ]]``): the substitutions of its subscripts run.
_NAMES = frozenset({"variable_assignment", "test_command", "declaration_command", "unset_command"})
_OWN_WORDS = frozenset({"command_substitution", "process_substitution", "program"})


def evaluation(node: Node) -> str | None:
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


def node_text(node: Node) -> str:
    data = node.text
    if data is None:
        return ""
    try:
        return data.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:  # a token boundary inside a broken sequence
        return data.decode("utf-8", "replace")
