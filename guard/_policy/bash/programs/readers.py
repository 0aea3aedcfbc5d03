"""The programs that only read what they name: ``cat``, ``head``, ``ls``, ``diff``, ``jq``,
the linters and test runners …

Every operand, option value and ``KEY=PATH`` is read; none of them writes a file it names
or runs code the command does not show (what a test runner or a build tool runs is the
project's own files: written earlier in the same call, the matching asks).
"""

from __future__ import annotations

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["READERS"]

_READ = Use(read=True, write=False)

READERS = Card(
    names=words("""
        cat more head tail wc stat file ls du diff cmp md5sum sha1sum sha256sum
        sha512sum b2sum cksum bat jq yq xxd od hexdump strings base64
        realpath readlink basename dirname uniq cut column nl
        tac rev fold fmt paste join comm tree fd fdfind locate pytest mypy ruff black
        flake8 pylint shellcheck eslint tsc go cargo info tldr tr open xdg-open code
    """),
    paths=Shape(operands=_READ, values=_READ, assignments=True),
)
"""The programs that only read what they name."""
