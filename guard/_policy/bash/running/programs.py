"""Programs that run code or write files the analysis cannot see, looked at one by one.

Every program that is known to run something has a card (``bash/programs``): its
``runs`` looks at a command (the builtins' checks are ``programs/builtins``), its
``code_options`` (and with them ``code_prefixes``) name the words that carry code, which
ask. A program without a card runs nothing the analysis knows of.
"""

from __future__ import annotations

from guard._policy.bash.model import Command
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs import card_for

__all__ = ["check_program"]


def check_program(w: SyntaxWalker, command: Command) -> None:
    """Findings for ``command`` according to what its program's card says it does."""
    program = command.program or ""
    card = card_for(program)
    if card is None:
        return
    if card.runs is not None:
        card.runs(w, command)
    options = card.code_options
    if not options:
        return
    found = [
        a.value
        for a in command.args
        if a.value is not None
        and (
            a.value in options
            or a.value.split("=", 1)[0] in options
            or a.value.startswith(card.code_prefixes)
        )
    ]
    if found:
        w.finding("inline-code", f"{program} {found[0]} runs code or another program")
