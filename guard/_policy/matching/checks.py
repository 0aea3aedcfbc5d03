"""The built-in checks (fail-closed findings, catastrophic targets) and what a match is."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from guard._policy.bash.model import Command
from guard._policy.bash.operands.arguments import has_flag, split_args
from guard._policy.bash.programs import card_for
from guard._policy.matching.paths import Mention
from guard._policy.settings.models import LayerName, RuleKind, VerdictName

__all__ = [
    "CHECKS",
    "RANK",
    "UNRELAXABLE",
    "Match",
    "catastrophic_matches",
    "check",
    "unique",
    "unresolved_matches",
]

CHECKS: dict[str, tuple[VerdictName, RuleKind, str]] = {
    "builtin.parse-error": (
        "confirm",
        "protected",
        "the command does not parse cleanly as bash, so it cannot be analyzed (fail closed)",
    ),
    "builtin.eval": ("confirm", "protected", "eval runs a string as a command"),
    "builtin.dynamic-command": (
        "confirm",
        "protected",
        "a command name is only known at runtime",
    ),
    "builtin.dynamic-script": (
        "confirm",
        "protected",
        "a shell or interpreter runs a string built at runtime",
    ),
    "builtin.nesting-too-deep": (
        "confirm",
        "protected",
        "nested shell strings go deeper than the analysis follows",
    ),
    "builtin.too-complex": ("confirm", "protected", "the command is too large to analyze"),
    "builtin.shell-stdin": (
        "confirm",
        "protected",
        "a shell or interpreter runs code another command produces",
    ),
    "builtin.download-exec": (
        "confirm",
        "destructive",
        "code downloaded from the network is executed (curl … | sh)",
    ),
    "builtin.inline-code": (
        "confirm",
        "protected",
        "inline code (python -c, node -e, awk, sed, SQL, python -m …) that a small allowlist "
        "does not prove harmless",
    ),
    "builtin.unresolved": (
        "confirm",
        "protected",
        "a word or path the analysis cannot resolve to a literal (an expansion, a command "
        "substitution, an undecoded escape, a brace or glob it cannot bound, a split word)",
    ),
    "builtin.shell-environment": (
        "confirm",
        "protected",
        "changes how later commands are found or read (PATH, IFS, CDPATH, LD_PRELOAD, "
        "alias, shopt, enable, hash -p …)",
    ),
    "builtin.opaque-wrapper": (
        "confirm",
        "protected",
        "a wrapper that changes user, namespaces, tracing or lifetime, or that the analysis "
        "does not unwrap precisely (sudo, strace, script, unshare, setsid, flock …)",
    ),
    "builtin.find-exec": (
        "confirm",
        "protected",
        "find runs a command on, or writes, what it finds (-exec, -execdir, -ok, -fprint)",
    ),
    "builtin.xargs": (
        "confirm",
        "protected",
        "xargs runs a command on arguments only known at runtime",
    ),
    "builtin.git-config": (
        "confirm",
        "protected",
        "git configuration or options that run programs (git -c alias.*=!…, core.*, "
        "git config, --upload-pack, rebase --exec …)",
    ),
    "builtin.opaque-write": (
        "confirm",
        "protected",
        "writes files whose names come from content the analysis cannot see (tar -x, unzip, "
        "patch, git apply, curl -J, wget -r)",
    ),
    "builtin.link-then-use": (
        "confirm",
        "protected",
        "creates a link and then uses paths in the same command (the link is not there yet "
        "when the command is checked)",
    ),
    "builtin.guard-self": (
        "block",
        "protected",
        "the guard's own signing surface (python -m guard, python -m runpy guard, the pi-guard "
        "script run by python, code that names the guard package)",
    ),
    "builtin.catastrophic-target": (
        "block",
        "destructive",
        "recursive deletion or rewrite of /, the home directory or a top-level system directory",
    ),
    "builtin.outside-workspace": (
        "confirm",
        "protected",
        "writes outside the session's writable places (the workspace and the user policy's "
        "[sandbox] writable paths)",
    ),
    "builtin.invalid-input": (
        "confirm",
        "protected",
        "the tool input does not have the expected shape, so it cannot be analyzed (fail closed)",
    ),
    "builtin.unknown-tool": (
        "confirm",
        "protected",
        "a tool the guard cannot judge from facts (an MCP server's, another extension's, a "
        "pi tool it does not know): what it does is only its own claim",
    ),
    "builtin.project-mcp-server": (
        "confirm",
        "protected",
        "a tool of an MCP server that the project's .pi/mcp.json defines (the project can be "
        "written by the agent): no rule of yours and no hint of the server makes it run unasked",
    ),
}

UNRELAXABLE = frozenset({"builtin.project-mcp-server"})
"""Checks no user rule relaxes: what they guard against is the project's own say."""

Normalize = Callable[[str, str], "str | None"]

RANK: dict[VerdictName, int] = {"allow": 0, "confirm": 1, "block": 2}


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOP_LEVEL = _set("""
    /bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /media /mnt /opt /proc /root /run
    /sbin /snap /srv /sys /usr /var /Users /System /Library /Applications /private /Volumes
""")


@dataclass(frozen=True, slots=True)
class Match:
    """One rule or built-in check that matched a tool call (``unit``: which command)."""

    rule_id: str
    layer: LayerName
    verdict: VerdictName
    kind: RuleKind
    reason: str
    targets: tuple[str, ...] = ()
    unit: int | None = None
    paths: tuple[str, ...] = ()

    @property
    def rank(self) -> int:
        return RANK[self.verdict]

    def text(self) -> str:
        if not self.targets:
            return self.reason
        shown = ", ".join(self.targets[:3])
        more = f" (+{len(self.targets) - 3} more)" if len(self.targets) > 3 else ""
        return f"{self.reason}: {shown}{more}"


def check(name: str, detail: str = "") -> Match:
    """A match of the built-in check ``name`` (with or without its ``builtin.`` prefix)."""
    rule_id = "builtin." + name if not name.startswith("builtin.") else name
    verdict, kind, reason = CHECKS[rule_id]
    return Match(rule_id, "builtin", verdict, kind, detail or reason)


def unique(items: Iterable[str]) -> tuple[str, ...]:
    """``items`` without duplicates, in first-seen order."""
    return tuple(dict.fromkeys(items))


def catastrophic_matches(
    command: Command, mentions: Sequence[Mention], index: int, home: str
) -> list[Match]:
    """``builtin.catastrophic-target`` for a recursive rewrite of /, home or a system dir."""
    program = command.program
    card = card_for(program)
    if card is None or not card.catastrophic:
        return []
    flags, _, _ = split_args(command.args)
    if card.catastrophic_flags and has_flag(flags, *card.catastrophic_flags):
        detail = f"{program} {card.catastrophic_flags[0]}: recursive deletion of /"
        return [check("catastrophic-target", detail)]
    hits = [
        m.path
        for m in mentions
        if m.path is not None and m.target and m.recursive and _is_catastrophic(m.path, home)
    ]
    if not hits:
        return []
    verdict, kind, reason = CHECKS["builtin.catastrophic-target"]
    return [
        Match(
            "builtin.catastrophic-target",
            "builtin",
            verdict,
            kind,
            reason,
            unique(hits),
            index,
        )
    ]


def _is_catastrophic(path: str, home: str) -> bool:
    for suffix in ("/*", "/.*", "/.[!.]*", "/..?*"):
        if path.endswith(suffix):
            path = path[: -len(suffix)] or "/"
            break
    return path == "/" or path == home or path in _TOP_LEVEL


def _creates_link(command: Command) -> bool:
    card = card_for(command.program)
    if card is None or card.creates_links is None:
        return False
    if not card.creates_links:
        return True
    flags, _, _ = split_args(command.args)
    return has_flag(flags, *card.creates_links)


# Programs without a card whose files may be code they run (a card says ``runs_files``).
_SCRIPT_RUNNERS = _set("""
    sh bash zsh dash ksh mksh ash yash fish rbash python python2 python3 pypy pypy3
""")


def _runs_files(program: str | None) -> bool:
    card = card_for(program)
    if card is not None:
        return card.runs_files
    return program in _SCRIPT_RUNNERS or (program or "").startswith("python")


def _writes_content(program: str | None) -> bool:
    card = card_for(program)
    return card is None or card.writes_content


def _runs_written(
    units: Sequence[tuple[Command | None, Sequence[Mention]]], normalize: Normalize
) -> bool:
    """Whether a command runs a script that an earlier command in the same call wrote (or
    inline code that imports a module, which any file written before may be)."""
    written: set[str] = set()
    for command, mentions in units:
        program = command.program if command is not None else None
        if command is not None and command.argv and written:
            runs: set[str] = set()
            head = command.argv[0].value
            if head is not None and "/" in head:
                runs.add(normalize(head, command.cwd) or head)
            if _runs_files(program):
                runs.update(m.path for m in mentions if m.path is not None and m.read)
            if runs & written or command.imports:
                return True
        if _writes_content(program):
            written.update(m.path for m in mentions if m.path is not None and m.write and m.target)
    return False


def unresolved_matches(
    units: Sequence[tuple[Command | None, Sequence[Mention]]], normalize: Normalize
) -> list[Match]:
    """``builtin.unresolved`` for paths only known at runtime; ``builtin.link-then-use``;
    ``builtin.inline-code`` for a script written and run in the same command."""
    out: list[Match] = []
    unresolved = [
        m.raw for _, mentions in units for m in mentions if m.path is None and m.pattern is None
    ]
    if unresolved:
        shown = ", ".join(unresolved[:3])
        out.append(check("unresolved", "a path only known at runtime: " + shown))
    linked = False
    for command, mentions in units:
        if linked and any(m.path is not None or m.pattern is not None for m in mentions):
            out.append(check("link-then-use"))
            break
        if command is not None and _creates_link(command):
            linked = True
    if _runs_written(units, normalize):
        out.append(check("inline-code", "writes a script and runs it in the same command"))
    return out
