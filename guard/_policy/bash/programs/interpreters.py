"""Interpreters with an inline-code option: node, deno, ruby, php, lua (perl's card is the
builtins'): the options whose value is code they run.

``node -e CODE``, ``ruby -e CODE``, ``php -r CODE`` … run the code the option carries; the
walk reads it (``running/interpreters``: a small allowlist of harmless code, else it asks).
A file they read may be code they run (``runs_files``). node reads the paths it names; the
others are read like a program nothing is known of. The shells and python are not in cards
yet (``running/interpreters``).
"""

from __future__ import annotations

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["DENO", "LUA", "NODE", "NODEJS", "PHP", "RUBY"]

_READ = Use(read=True, write=False)
_NODE_CODE = words("-e --eval -p --print")

NODE = Card(
    names=words("node"),
    paths=Shape(operands=_READ, values=_READ, assignments=True),
    runs_files=True,
    inline_code=_NODE_CODE,
)
"""node's card: ``-e``/``--eval``/``-p``/``--print`` carry code."""

NODEJS = Card(names=words("nodejs"), runs_files=True, inline_code=_NODE_CODE)
"""node by its Debian name: its paths are not known."""

DENO = Card(names=words("deno"), runs_files=True, inline_code=words("eval"))
"""deno's card: ``deno eval CODE``."""

RUBY = Card(names=words("ruby"), runs_files=True, inline_code=words("-e"))
"""ruby's card."""

PHP = Card(names=words("php"), runs_files=True, inline_code=words("-r -B -R -E"))
"""php's card."""

LUA = Card(names=words("lua"), runs_files=True, inline_code=words("-e"))
"""lua's card."""
