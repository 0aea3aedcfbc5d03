"""curl and wget: the files they write, and options that take names from elsewhere.

* **Paths.** ``curl -o FILE``/``--output``, ``wget -O FILE``: changed (under
  ``--output-dir``/``-P DIR`` when relative); the directory is written recursively; with
  ``curl -O``/``--remote-name`` (and wget by default) the name is the URL's last part;
  an operand that is no URL is read.
* **Runs.** ``curl -J``/``-K``, ``wget -r``/``-m``/``-i``/``-e``/``--content-disposition``
  … take names or options from the server or a file: that asks (``wget -qr`` too).
"""

from __future__ import annotations

from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.arguments import bundled_values, has_flag, option_value
from guard._policy.bash.operands.irregular import Touches, Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words

__all__ = ["CURL", "WGET"]

_READ = Use(read=True, write=False)
_CHANGED = Use(read=False, write=True, target=True)
_CURL_VALUE_LETTERS = "odHXuAebcFTwxmKCrEYyzUQP"
_WGET_SHORT = "Vhbe:o:a:qvdn:Nw:i:FB:t:O:cST:Q:P:U:l:A:R:D:I:X:HrpkKmLxE46"
_WGET_VALUES = frozenset(c for i, c in enumerate(_WGET_SHORT) if _WGET_SHORT[i + 1 : i + 2] == ":")


def _paths(
    command: Command, flags: Sequence[Word], values: Sequence[Word], positionals: Sequence[Word]
) -> Touches:
    """curl/wget: ``-o FILE``, ``--output-dir``/``-P DIR``, and names taken from URLs."""
    args = command.args
    if command.program == "curl":
        outputs = option_value(args, "--output")
        outputs += bundled_values(args, "o", _CURL_VALUE_LETTERS)
        dirs = option_value(args, "--output-dir")
        remote = has_flag(flags, "-O", "--remote-name", "--remote-name-all")
    else:
        outputs = option_value(args, "-O", "--output-document")
        dirs = option_value(args, "-P", "--directory-prefix")
        remote = not outputs
    out: Touches = []
    for word in outputs:
        if dirs and word.value is not None and not word.value.startswith("/"):
            for base in dirs:
                joined = None if base.value is None else base.value + "/" + word.value
                out.append((Word(joined, word.raw), _CHANGED))
        else:
            out.append((word, _CHANGED))
    out += [(base, Use(read=False, write=True, target=True, recursive=True)) for base in dirs]
    for word in positionals:
        value = word.value or ""
        if "://" not in value:
            out.append((word, _READ))
            continue
        name = value.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        name = name.rsplit("/", 1)[-1] if "/" in name else ""
        if remote and name:
            for base in dirs or [Word.literal(".")]:
                if base.value is not None:
                    out.append((Word.literal(base.value + "/" + name), _CHANGED))
    return out


def _recursive_cluster(value: str) -> bool:
    """A cluster of wget's flags alone with ``-r`` or ``-m`` in it (``wget -qr``); one with a
    letter taking a value is split before it is read (``spelling``)."""
    letters = value[1:] if value[:1] == "-" and value[1:2] != "-" else ""
    return not any(c in _WGET_VALUES for c in letters) and any(c in "rm" for c in letters)


def _runs(w: SyntaxWalker, command: Command) -> None:
    program = command.program or ""
    values = [a.value or "" for a in command.args]
    if program == "curl":
        risky = [
            v
            for v in values
            if v in ("-J", "--remote-header-name", "-K", "--config")
            or (v.startswith("-") and not v.startswith("--") and ("J" in v or "K" in v))
        ]
    else:
        risky = [
            v
            for v in values
            if v
            in (
                "-r",
                "--recursive",
                "-m",
                "--mirror",
                "-i",
                "--input-file",
                "-e",
                "--execute",
                "--content-disposition",
                "--trust-server-names",
            )
            or _recursive_cluster(v)
        ]
    if risky:
        w.finding("opaque-write", f"{program} {risky[0]}: names or options come from elsewhere")


CURL = Card(names=words("curl"), paths=Shape(reader=_paths), runs=_runs, abbreviates=True)
"""curl's card."""

WGET = Card(
    names=words("wget"),
    paths=Shape(reader=_paths),
    runs=_runs,
    long_options=words("""
        --output-document --directory-prefix --execute --input-file --mirror --recursive
        --content-disposition --trust-server-names --config --output-file --append-output
        """),
    abbreviates=True,
    short_options=_WGET_SHORT,
)
"""wget's card."""
