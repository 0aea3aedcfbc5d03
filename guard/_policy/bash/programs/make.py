"""make: the makefile it reads, inline make code, and variables that change what runs.

* **Runs.** ``-f``/``--file`` from stdin or a stream, ``--eval``/``-E`` inline make code,
  and ``SHELL=``, ``.SHELLFLAGS=``, ``MAKEFLAGS=``, ``MAKEFILES=``, ``LD_*=`` on the command
  line ask. The makefile's recipes are the project's own files (a write to one before is
  ``builtin.inline-code``).
* **Paths.** ``make`` reads what it names; ``gmake``'s words are not known.
"""

from __future__ import annotations

from guard._policy.bash.model import Command, preview
from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words
from guard._policy.bash.programs.code import option_values

__all__ = ["GMAKE", "MAKE"]


_READ = Use(read=True, write=False)

_LONG = words("--eval --file --makefile --include-dir --always-make")
"""The long options of make the guard reacts to."""


def _runs(w: SyntaxWalker, command: Command) -> None:
    for word in option_values(command.args, words("-f --file --makefile")):
        value = word.value
        if value is None or value == "-" or value.startswith(("/dev/", "/proc/")):
            w.finding("shell-stdin", "make reads a makefile from stdin or a stream")
    for word in command.args:
        value = word.value or ""
        if value.startswith(("--eval", "-E")):
            w.finding("inline-code", "make --eval runs inline make code: " + preview(word.raw))
        name = value.split("=", 1)[0] if "=" in value and not value.startswith("-") else ""
        if name in ("SHELL", ".SHELLFLAGS", "MAKEFLAGS", "MAKEFILES") or name.startswith("LD_"):
            w.finding("shell-environment", "make variable that changes what runs: " + value)


MAKE = Card(
    names=words("make"),
    paths=Shape(operands=_READ, values=_READ, assignments=True),
    runs=_runs,
    runs_files=True,
    long_options=_LONG,
    abbreviates=True,
)
"""make's card."""

GMAKE = Card(
    names=words("gmake"), runs=_runs, runs_files=True, long_options=_LONG, abbreviates=True
)
"""GNU make by its other name: what it runs is read, its paths are not known."""
