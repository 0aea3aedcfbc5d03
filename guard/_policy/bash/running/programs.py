"""Programs that run code or write files the analysis cannot see, looked at one by one.

A program with a card (``bash/programs``) is looked at by its card: what it runs, the
options that carry code. For the others, the shell builtins: those that change how later
words are read (``alias``, ``shopt``, ``enable``, ``hash -p``, assignments to sensitive
variables), ``mapfile -C`` (a callback it runs), ``kill`` of targets only known at runtime,
and the names and numbers bash evaluates (array subscripts). Each either asks (a finding)
or hands inline code to the walker.
"""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs import card_for

__all__ = ["check_program"]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SHOPT_QUERY = _set("-p -q")
_ASSIGNING = _set("declare typeset export local readonly")
_READING = _set("read mapfile readarray getopts")
# Builtins that evaluate a name or a number given as an argument, array subscripts included.
_EVALUATING = _set(
    "read mapfile readarray getopts printf unset let test [ declare typeset local export "
    "readonly shift exit return ulimit wait kill break continue"
)
# The options of read and mapfile that take a value that is not a variable name.
_READ_VALUE_LETTERS = {"read": "dinNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}


def _builtins(w: SyntaxWalker, command: Command, program: str) -> None:
    args = command.args
    values = [a.value for a in args]
    if program == "alias" and any(v is None or "=" in v for v in values):
        w.finding("shell-environment", "alias changes what a command word runs")
    elif program == "shopt" and not any(v in _SHOPT_QUERY for v in values) and args:
        w.finding("shell-environment", "shopt changes how words are read or expanded")
    elif program == "enable" and args:
        w.finding("shell-environment", "enable loads or disables shell builtins")
    elif program == "hash" and any(v is None or (v or "").startswith("-p") for v in values):
        w.finding("shell-environment", "hash -p makes a command name run another file")
    elif program == "set" and any(v is not None and v.startswith("+") and "f" in v for v in values):
        pass  # set +f turns globbing back on: still a glob the analysis expands
    elif program in _ASSIGNING or program in _READING or program == "printf":
        if program in ("mapfile", "readarray"):
            _mapfile_callback(w, program, args)
        targets = args if program in _ASSIGNING else _read_targets(program, args)
        for word in targets:
            if word.value is None:
                if program in _ASSIGNING or program in _READING or program == "printf":
                    w.finding("shell-environment", f"{program} of a name only known at runtime")
                continue
            name = word.value.split("=", 1)[0]
            if name.split("[", 1)[0].isidentifier() or program in _ASSIGNING:
                w.assignment(name)


def _mapfile_callback(w: SyntaxWalker, program: str, args: Sequence[Word]) -> None:
    """``mapfile -C CALLBACK``: bash runs CALLBACK as a command (index and line appended)."""
    takes_value = _READ_VALUE_LETTERS[program]
    for j, a in enumerate(args):
        text = a.value if a.value is not None else a.raw
        if text == "--" or not text.startswith("-") or len(text) < 2:
            continue
        letters = text[1:]
        first = next((k for k, ch in enumerate(letters) if ch in takes_value), None)
        if first is None or letters[first] != "C":
            continue
        if first < len(letters) - 1:
            callback = a.value[first + 2 :] if a.value is not None else None
        else:
            callback = args[j + 1].value if j + 1 < len(args) else ""
        if callback is None:
            w.finding("dynamic-script", f"{program} -C runs a callback built at runtime")
        elif callback:
            w.nested(callback, f"{program} -C")


def _read_targets(program: str, args: Sequence[Word]) -> list[Word]:
    if program == "printf":
        return [args[i + 1] for i, a in enumerate(args[:-1]) if a.value == "-v"]
    if program == "getopts":
        return list(args[1:2])
    # read/mapfile: every word that is not an option or an option's value names a variable
    # (``read -a NAME`` too); a name only known at runtime is kept, so that it asks.
    takes_value = _READ_VALUE_LETTERS[program]
    targets: list[Word] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        text = a.value if a.value is not None else a.raw
        if text.startswith("-") and len(text) > 1:
            letters = text[1:]
            first = next((k for k, ch in enumerate(letters) if ch in takes_value), None)
            skip = first == len(letters) - 1  # the value is the next word
            continue
        if a.value is None or a.value.split("[", 1)[0].isidentifier():
            targets.append(a)
    return targets


def check_program(w: SyntaxWalker, command: Command) -> None:
    """Findings for ``command`` according to what its program is known to do."""
    program = command.program or ""
    card = card_for(program)
    prefixes: tuple[str, ...] = ()
    if card is not None:
        if card.runs is not None:
            card.runs(w, command)
        options = card.code_options or None
        prefixes = card.code_prefixes
    else:
        options = _uncarded(w, command, program)
    if options is not None:
        found = [
            a.value
            for a in command.args
            if a.value is not None
            and (
                a.value in options
                or a.value.split("=", 1)[0] in options
                or a.value.startswith(prefixes)
            )
        ]
        if found:
            w.finding("inline-code", f"{program} {found[0]} runs code or another program")


def _uncarded(w: SyntaxWalker, command: Command, program: str) -> frozenset[str] | None:
    """What ``program``, which has no card, is known to run; no option of it carries code (a
    program whose options do has a card)."""
    if program in ("alias", "shopt", "enable", "hash", "set", "printf", *_ASSIGNING, *_READING):
        _builtins(w, command, program)
    elif program in ("kill", "pkill", "killall") and any(a.value is None for a in command.args):
        w.finding("unresolved", f"{program} signals processes only known at runtime")
    if program in _EVALUATING:
        for a in command.args:
            w.subscripts(a.value if a.value is not None else a.raw)
    return None
