"""grep, rg and their kin: what they search, read, never written.

The first operand is the pattern unless ``-e``/``--regexp``/``-f``/``--file`` gives it; the
rest are read (recursively with ``-r``/``-R`` for grep, always for rg, ag and ack); grep's
option values (``--include``, ``-f FILE`` …) are read too. None of them runs anything.
"""

from __future__ import annotations

from dataclasses import replace

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["AG", "EGREP", "GREP", "RG"]


_READ = Use(read=True, write=False)
_PATTERNS = ("-e", "--regexp", "-f", "--file")
_GREP = Shape(
    operands=_READ,
    first_unless=_PATTERNS,
    recursive=("-r", "-R", "--recursive", "--dereference-recursive"),
    values=_READ,
)
_RG = Shape(operands=_READ, first_unless=_PATTERNS, always_recursive=True)

GREP = Card(
    names=words("grep"),
    paths=replace(
        _GREP,
        short_values="efmABCdD",
        long_values=words("""
        --regexp --file --max-count --context --after-context --before-context --include
        --exclude --exclude-dir
    """),
    ),
)
"""grep's card."""

EGREP = Card(names=words("egrep fgrep"), paths=_GREP)
"""egrep and fgrep: grep's reading, without its options' values known."""

RG = Card(
    names=words("rg"),
    paths=replace(
        _RG,
        short_values="efgtTmABCM",
        long_values=words("""
        --regexp --file --glob --type --type-not --max-count --context --after-context
        --before-context --max-columns
    """),
    ),
)
"""ripgrep's card."""

AG = Card(names=words("ag ack"), paths=_RG)
"""ag and ack: read recursively."""
