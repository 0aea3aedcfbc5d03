"""Editors: the commands an option or a ``+`` word makes them run.

``vim -c CMD``/``--cmd CMD``/``-S FILE`` and ``vim +CMD`` (``vi``, ``ex``, ``view``, and
``nvim``, which also takes ``-l`` Lua) run editor commands, which can run any program;
``emacs --eval``/``-l``/``-f``/``--script`` run Lisp. Each asks. Their paths are not known.
"""

from __future__ import annotations

from guard._policy.bash.programs.card import Card, words

__all__ = ["EMACS", "NVIM", "VIM"]

VIM = Card(names=words("vim vi ex view"), code_options=words("-c --cmd -S"), code_prefixes=("+",))
"""vim's card (and vi's, ex's, view's)."""

NVIM = Card(names=words("nvim"), code_options=words("-c --cmd -S -l"), code_prefixes=("+",))
"""Neovim's card."""

EMACS = Card(names=words("emacs"), code_options=words("--eval -l --load -f --funcall -x --script"))
"""emacs's card."""
