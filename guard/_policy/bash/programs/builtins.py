"""The shell's builtins, ``echo``/``printf`` and ``perl``, and programs that name no path.

* **Paths.** The builtins and the small programs of ``INERT`` (``true``, ``export``,
  ``kill``, ``date``, ``ps`` …) name no path; ``echo``/``printf`` read their words as text
  known before running (``static_args``); ``cd``, ``pushd``, ``popd``, ``source``/``.`` read
  what they name (the walk follows ``cd`` and ``source`` itself); ``perl -i`` changes its
  operands, else perl is read like a program nothing is known of.
* **Runs.** What changes how later words are read asks (``alias``, ``shopt``, ``enable``,
  ``hash -p``); ``declare``/``export``/``read``/``printf -v`` … assign the names they are
  given (a sensitive variable asks), ``mapfile -C`` runs a callback, ``kill`` of targets
  only known at runtime asks, and the names and numbers a builtin evaluates (array
  subscripts: ``unset 'a[$(cmd)]'``) run their substitutions. ``eval``, ``trap`` and
  ``source`` are the walk's own (``walker``).
"""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import UNKNOWN, Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words

__all__ = ["ECHO", "INERT", "PERL", "PRINTF", "READS_NAMED", "SHELL_STATE", "SOURCE"]

_SHOPT_QUERY = words("-p -q")
_ASSIGNING = words("declare typeset export local readonly")
_READING = words("read mapfile readarray getopts")
# Builtins that evaluate a name or a number given as an argument, array subscripts included.
_EVALUATING = words(
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


def _runs(w: SyntaxWalker, command: Command) -> None:
    """The builtins' checks (see the module docstring); nothing for the other programs."""
    program = command.program or ""
    if program in ("alias", "shopt", "enable", "hash", "set", "printf", *_ASSIGNING, *_READING):
        _builtins(w, command, program)
    elif program in ("kill", "pkill", "killall") and any(a.value is None for a in command.args):
        w.finding("unresolved", f"{program} signals processes only known at runtime")
    if program in _EVALUATING:
        for a in command.args:
            w.subscripts(a.value if a.value is not None else a.raw)


_READ = Use(read=True, write=False)

INERT = Card(
    names=words("""
        true false : test [ [[ export set unset exit return sleep date seq expr read
        wait kill jobs type which hash alias unalias shift local declare typeset readonly let
        pwd whoami id uname hostname printenv history clear yes break continue getopts
        ulimit umask shopt bg fg disown eval trap nproc uptime ps pgrep pkill killall
        """),
    paths=Shape(),
    runs=_runs,
)
"""The builtins and small programs whose words name no path."""

SHELL_STATE = Card(names=words("enable mapfile readarray"), runs=_runs)
"""``enable``, ``mapfile``, ``readarray``: their words' paths are not known."""

ECHO = Card(names=words("echo"), paths=Shape(operands=_READ, static_args=True))
"""``echo``: its words are text known before running."""

PRINTF = Card(names=words("printf"), paths=Shape(operands=_READ, static_args=True), runs=_runs)
"""``printf``: its words are text; ``-v NAME`` assigns."""

READS_NAMED = Card(
    names=words("cd pushd popd"), paths=Shape(operands=_READ, values=_READ, assignments=True)
)
"""``cd``, ``pushd``, ``popd``: read what they name (the walk follows the directory)."""

SOURCE = Card(
    names=words("source ."),
    paths=Shape(operands=_READ, values=_READ, assignments=True),
    runs_files=True,
)
"""``source``, ``.``: run the file they read (the walk reads it when it can)."""

PERL = Card(
    names=words("perl"),
    paths=Shape(
        operands=Use(read=True, write=True, target=True),
        first_unless=("-e", "--expression", "-f", "--file", "-E"),
        only_with=("-i", "--in-place"),
        otherwise=UNKNOWN,
    ),
    runs_files=True,
    inline_code=words("-e -E"),
)
"""``perl``: with ``-i`` its operands (after the program) are changed; a file it reads may
be code it runs; its inline code is the interpreters' (``running/interpreters``)."""
