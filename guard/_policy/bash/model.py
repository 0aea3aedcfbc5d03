"""What the bash analysis produces: words, simple commands, findings, and small text helpers."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "MAX_DEPTH",
    "SENSITIVE_VARIABLES",
    "Command",
    "Finding",
    "Script",
    "Word",
    "join_raw",
    "preview",
    "program_name",
    "sensitive_variable",
]

MAX_DEPTH = 8
"""How deep ``bash -c '…'`` strings (and other nested scripts) are parsed; beyond: confirm."""


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


SENSITIVE_VARIABLES = _set("""
    PATH HOME PWD OLDPWD CDPATH IFS BASH_ENV ENV SHELLOPTS BASHOPTS GLOBIGNORE PROMPT_COMMAND
    BASH_LOADABLES_PATH EXECIGNORE FIGNORE HOSTFILE INPUTRC TMOUT PS4 PS0 BASH_XTRACEFD
    LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT DYLD_INSERT_LIBRARIES DYLD_LIBRARY_PATH
    NODE_OPTIONS NODE_PATH PERL5OPT PERL5LIB PERLLIB RUBYOPT RUBYLIB PYTHONSTARTUP PYTHONHOME
    PYTHONINSPECT PYTHONUSERBASE PYTHONSAFEPATH JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS
    GIT_CONFIG GIT_CONFIG_GLOBAL GIT_CONFIG_SYSTEM GIT_CONFIG_COUNT GIT_CONFIG_PARAMETERS
    GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR GIT_SEQUENCE_EDITOR
    GIT_ASKPASS SSH_ASKPASS GIT_EXEC_PATH GIT_DIR GIT_WORK_TREE GIT_TEMPLATE_DIR GIT_PROXY_COMMAND
    PAGER MANPAGER EDITOR VISUAL LESSOPEN LESSCLOSE BROWSER SUDO_ASKPASS
    PI_OPERATOR_GUARD_HOME PI_GUARD_HOME PI_CODING_AGENT_DIR
    """)
"""Variables whose assignment changes what later commands run or where paths point.

``PATH``/``HOME``/``PWD``/``CDPATH``/``IFS`` change how the analysis resolves names and
paths; the rest make ordinary programs load code (``LD_PRELOAD``, ``NODE_OPTIONS``,
``GIT_CONFIG_*`` …). Assigning one asks (``builtin.shell-environment``).
"""


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: ``value`` after quote removal, ``None`` when only known at runtime."""

    value: str | None
    raw: str
    glob: bool = False
    inner: tuple[Command, ...] = ()
    brace: bool = False

    @staticmethod
    def literal(text: str) -> Word:
        return Word(text, text)


@dataclass(slots=True)
class Command:
    """A simple command after unwrapping; ``argv`` is empty for a bare redirection."""

    argv: tuple[Word, ...]
    cwd: str
    via: tuple[str, ...] = ()
    producers: list[Command] = field(default_factory=list)
    stdin_texts: list[str] = field(default_factory=list)
    redirect_writes: list[Word] = field(default_factory=list)
    redirect_reads: list[Word] = field(default_factory=list)
    named: list[Word] = field(default_factory=list)
    code_strings: tuple[str, ...] = ()
    imports: bool = False
    """Its inline code imports or requires a module (which a file written earlier in the
    same call may be)."""
    stdin_file: bool = False
    """stdin comes from a ``<`` redirection (a file, ``/dev/stdin``, a process substitution)."""
    program: str | None = field(init=False, default=None)
    leading: tuple[tuple[Word, ...], bool] | None = field(init=False, default=None)
    """Cache for rule matching: positionals after global options, and whether that is ambiguous."""

    def __post_init__(self) -> None:
        self.program = program_name(self.argv[0]) if self.argv else None

    @property
    def args(self) -> tuple[Word, ...]:
        return self.argv[1:]


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the static analysis flags by itself (a built-in check id and a detail)."""

    check: str
    detail: str
    targets: tuple[str, ...] = ()


@dataclass(slots=True)
class Script:
    commands: list[Command]
    findings: list[Finding]


def sensitive_variable(name: str) -> bool:
    """Whether assigning ``name`` changes what runs or where paths point (see above)."""
    return name in SENSITIVE_VARIABLES or name.startswith(
        ("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_", "BASH_FUNC_", "LD_")
    )


def program_name(word: Word) -> str | None:
    """The basename of a static command word (``/usr/bin/rm`` -> ``rm``)."""
    if word.value is None:
        return None
    return posixpath.basename(word.value.rstrip("/")) or word.value


def preview(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def join_raw(argv: Sequence[Word]) -> str:
    return " ".join(w.raw for w in argv)
