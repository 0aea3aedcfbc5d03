"""Language runtimes read one by one: the code an option carries.

``Rscript -e``, ``julia -e``, ``pwsh -c``, ``guile -c``, ``sbcl --eval``, ``racket -e``,
``elixir -e``, ``erl -eval``, ``ghc -e``, ``groovy -e``, ``scala -e``, ``tclsh -c``,
``osascript -e`` … run the code they are given: each asks. ``Rscript``, ``julia`` and
``tclsh`` run the files they read. Their paths are not known. (The shells, python, node,
perl, ruby and bun are the interpreters' knowledge: ``running/interpreters``.)
"""

from __future__ import annotations

from guard._policy.bash.programs.card import Card, words

__all__ = ["OTHERS", "POWERSHELL", "SCRIPTS"]

_E = words("-e")

SCRIPTS = (
    Card(names=words("Rscript"), code_options=_E, runs_files=True),
    Card(names=words("julia"), code_options=words("-e -E --eval --print"), runs_files=True),
    Card(names=words("tclsh"), code_options=words("-c"), runs_files=True),
)
"""The runtimes whose files may be code they run."""

POWERSHELL = Card(
    names=words("pwsh powershell"),
    code_options=words("-c -Command -command -EncodedCommand -e -ec"),
)
"""PowerShell's card."""

OTHERS = (
    Card(names=words("osascript R ghc groovy scala"), code_options=_E),
    Card(names=words("wish"), code_options=words("-c")),
    Card(names=words("guile"), code_options=words("-c -l -e")),
    Card(names=words("sbcl"), code_options=words("--eval --load --script")),
    Card(names=words("racket"), code_options=words("-e --eval -l --lib")),
    Card(names=words("elixir"), code_options=words("-e --eval")),
    Card(names=words("erl"), code_options=words("-eval -s -run")),
)
"""The other runtimes read one by one."""
