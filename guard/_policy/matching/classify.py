"""Classification: the verdict of one tool call against the compiled rules of the policy."""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit import shorten
from guard._errors import BadInputError
from guard._evidence import normalize_path
from guard._policy.bash.walker import Command, analyze
from guard._policy.matching.checks import (
    UNRELAXABLE,
    Match,
    catastrophic_matches,
    check,
    unique,
    unresolved_matches,
)
from guard._policy.matching.paths import Mention, command_mentions
from guard._policy.matching.realpath import realpath
from guard._policy.matching.rules import CompiledRule, first_subcommand_words, leading_positionals
from guard._policy.matching.tools import (
    MCP_RESOURCE_TOOLS,
    PLANNER_TOOL_NAME,
    REACHING_TOOLS,
    McpTrust,
    ToolFacts,
    command_strings,
    describe_source,
    path_strings,
)
from guard._policy.matching.writable import TOO_WIDE_HINT, WritableSet
from guard._policy.settings.models import PolicyActionKind, Settings, Verdict

__all__ = ["Classifier", "pi_file_target", "pi_tool_path"]

_READ_TOOLS = frozenset({"read", "grep", "find", "ls"})
_WRITE_TOOLS = frozenset({"write", "edit"})
_PI_FILE_TOOLS = _READ_TOOLS | _WRITE_TOOLS
_SEARCH_TOOLS = frozenset({"grep", "find", "ls"})
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def _strip_at(text: str) -> str:
    return text[1:] if text.startswith("@") else text


def pi_tool_path(raw: str) -> str:
    """The path pi's own file tools open for ``raw``, before it is resolved against the cwd.

    pi's ``expandPath`` (``core/tools/path-utils``) strips one leading ``@`` and turns
    Unicode spaces into plain spaces, then expands ``~`` (as :func:`normalize_path` does);
    ``resolveToCwd`` resolves what is left against the cwd, so nothing left is the cwd.
    """
    return _UNICODE_SPACES.sub(" ", _strip_at(raw)) or "."


_OPENING_TOOLS = frozenset({"read", "write", "edit"})


def pi_file_target(
    tool_name: str, tool_input: Mapping[str, Any], cwd: str | os.PathLike[str]
) -> tuple[str, str] | None:
    """For pi's ``read``, ``write`` and ``edit``: the absolute path pi will open and the real
    file that is now (``None`` for other tools or an unusable path).

    The shim opens the file itself and compares what it opened with this real path, so a
    link swapped in after the guard decided (by a parallel call) is refused, not followed.
    """
    raw = tool_input.get("path") if isinstance(tool_input, Mapping) else None
    if tool_name not in _OPENING_TOOLS or not isinstance(raw, str) or not raw:
        return None
    try:
        path = normalize_path(pi_tool_path(raw), os.fspath(cwd))
    except BadInputError:
        return None
    return path, realpath(path)


@dataclass(slots=True)
class _Unit:
    command: Command | None
    mentions: list[Mention]


def _search_patterns(tool_name: str, tool_input: Mapping[str, Any], base: str) -> list[Mention]:
    """pi's ``grep`` ``glob`` and ``find`` ``pattern``: which files they select, as a glob.

    A glob without ``/`` matches names at any depth (ripgrep's and fd's reading), so it
    becomes ``<path>/**/<glob>``; the rules then say whether it could select a protected file.
    """
    key = "glob" if tool_name == "grep" else "pattern" if tool_name == "find" else None
    value = tool_input.get(key) if key is not None else None
    if not isinstance(value, str) or not value:
        return []
    text = value.lstrip("/") if "/" in value else "**/" + value
    text = text.replace("{", "*").replace("}", "*")  # brace alternatives: any name
    pattern = base.rstrip("/") + "/" + text
    read_contents = tool_name == "grep"
    return [Mention(None, value, True, False, recursive=read_contents, pattern=pattern)]


class Classifier:
    """Applies compiled rules to tool calls (pure apart from reading symlinks and globs)."""

    def __init__(
        self,
        *,
        rules: Sequence[CompiledRule],
        exceptions: Sequence[CompiledRule],
        settings: Settings,
        problem_count: int,
        writable: Sequence[str] = (),
        mcp: McpTrust | None = None,
    ) -> None:
        self._writable = tuple(writable)
        self._mcp = mcp or McpTrust()
        self._rules = tuple(rules)
        self._exceptions = tuple(exceptions)
        self._problem_count = problem_count
        self._resolve = bool(settings.resolve_symlinks)
        self._shell_tools = frozenset(settings.shell_tools or ())
        self._path_rules = tuple(r for r in self._rules if r.rule.family == "paths")
        # The pre-filter tries each path rule's own matcher: one union of them all would be
        # as slow to match in ``re`` (no DFA) and cost as much again to compile at every load.
        self._path_matchers = tuple(r.paths for r in self._path_rules if r.paths)
        self._blocked_roots = any(
            r.rule.verdict == "block" and r.paths is not None and r.paths.roots
            for r in self._path_rules
        )
        self._tool_rules = tuple(r for r in self._rules if r.rule.family == "tools")
        # Index shape rules by program and by literal first subcommand word, so that a
        # command is only checked against the few rules that can match it.
        by_program: dict[str, list[CompiledRule]] = {}
        by_sub: dict[tuple[str, str], list[CompiledRule]] = {}
        globbed: list[CompiledRule] = []
        for rule in self._rules:
            if rule.rule.family != "program":
                continue
            if any(any(ch in p for ch in "*?[") for p in rule.rule.program):
                globbed.append(rule)
                continue
            first = first_subcommand_words(rule.rule)
            for pattern in rule.rule.program:
                if first is None:
                    by_program.setdefault(pattern, []).append(rule)
                else:
                    for word in first:
                        by_sub.setdefault((pattern, word), []).append(rule)
        self._by_program = {k: tuple(v) for k, v in by_program.items()}
        self._by_sub = {k: tuple(v) for k, v in by_sub.items()}
        self._sub_programs = frozenset(program for program, _ in by_sub)
        self._globbed = tuple(globbed)
        self._globbed_any = (
            re.compile("|".join(fnmatch.translate(p) for r in globbed for p in r.rule.program))
            if globbed
            else None
        )

    def may_protect(self, path: str) -> bool:
        """A cheap first look: could any path rule cover ``path`` (as it is, or resolved)?"""
        if self._any_path_regex(path):
            return True
        real = realpath(path)
        return real != path and self._any_path_regex(real)

    def _any_path_regex(self, path: str) -> bool:
        return any(matcher.match(path) for matcher in self._path_matchers)

    def classify(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: Path,
        facts: ToolFacts | None = None,
    ) -> Verdict:
        """The verdict for one pending tool call (strictest matching rule wins).

        ``facts``: what pi says of the tool (:mod:`.tools`); they decide only whether a
        tool the guard does not know asks, never the kind or the fingerprint.
        """
        if not isinstance(tool_input, Mapping):
            raise BadInputError("tool input", "must be a JSON object", type(tool_input).__name__)
        cwd_text = normalize_path(os.fspath(cwd), os.getcwd())
        home = os.path.expanduser("~")
        matches: list[Match] = []
        units: list[_Unit] = []
        path_out: str | None = None
        notes: list[str] = []
        if tool_name in self._shell_tools:
            matches.extend(self._shell_units(tool_input.get("command"), cwd_text, home, units))
        elif tool_name in _PI_FILE_TOOLS and ("path" in tool_input or tool_name in _SEARCH_TOOLS):
            # pi's grep/find/ls without a path search the workspace: that is their target.
            raw = tool_input.get("path", ".") if tool_name in _SEARCH_TOOLS else tool_input["path"]
            if raw is None and tool_name in _SEARCH_TOOLS:
                raw = "."
            path_out, unit = self._file_unit(tool_name, raw, cwd_text)
            if unit is not None and path_out is not None and tool_name in _SEARCH_TOOLS:
                unit.mentions.extend(_search_patterns(tool_name, tool_input, path_out))
            if unit is None:
                matches.append(
                    check(
                        "invalid-input",
                        "the path input is not usable: "
                        + shorten(repr(raw) if isinstance(raw, str) else raw),
                    )
                )
            else:
                units.append(unit)
        elif tool_name not in _PI_FILE_TOOLS:  # pi rejects read/write/edit without a path
            path_out = self._other_tool(
                tool_name, tool_input, cwd_text, home, facts, matches, units, notes
            )
        impostor = facts is not None and facts.source not in ("builtin", "guard")
        if impostor and (tool_name in self._shell_tools or tool_name in _PI_FILE_TOOLS):
            # Named like a tool the guard judges, but not that tool: another extension's.
            matches.append(
                check(
                    "unknown-tool",
                    f"named like pi's own '{tool_name}', but registered by "
                    f"{describe_source(tool_name, facts)}: the guard cannot judge it (and "
                    "does not sandbox it)",
                )
            )
        matches.extend(self._match_units(tool_name, units, home))
        if tool_name not in self._shell_tools:
            matches.extend(self._outside_writable(units, cwd_text))
        for rule in self._tool_rules:
            if rule.tool_matches(tool_name):
                matches.append(self._rule_match(rule, (), None))
        return self._verdict(tool_name, matches, units, path_out, notes)

    def _shell_units(self, command: object, cwd: str, home: str, units: list[_Unit]) -> list[Match]:
        if not isinstance(command, str):
            return [check("invalid-input", "a shell call without a command string")]
        script = analyze(command, cwd=cwd, home=home)
        for cmd in script.commands:
            units.append(_Unit(cmd, command_mentions(cmd, self._normalize, home)))
        return [check(f.check, f.detail) for f in script.findings]

    def _other_tool(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str,
        home: str,
        facts: ToolFacts | None,
        matches: list[Match],
        units: list[_Unit],
        notes: list[str],
    ) -> str | None:
        """A tool other than pi's shell and file tools: whether it asks, and the paths and
        commands its arguments name (matched like any other). Returns the fingerprint path."""
        placed = facts is None or facts.source == "builtin"
        if tool_name in REACHING_TOOLS and placed:
            return None  # it only reaches other tools; each of its calls passes the guard
        resource = tool_name in MCP_RESOURCE_TOOLS and placed
        trusted = None if facts is None else self._mcp.trusts_hints_of(facts)
        hints = facts.annotations if facts is not None else None
        read_only = bool(
            trusted is not None
            and hints is not None
            and hints.read_only_hint is True
            and hints.destructive_hint is not True
        )
        path_out: str | None = None
        raw = tool_input.get("path")
        if isinstance(raw, str) and raw:
            path_out, unit = self._file_unit(tool_name, raw, cwd)
            if unit is not None:
                units.append(unit)
        strings, too_many = path_strings(tool_input)
        if too_many:
            matches.append(
                check("too-complex", "the tool's arguments are too many or too deep to judge")
            )
        write = not (read_only or resource)
        # A server resolves a relative path against its own root, which the guard does not
        # know: the workspace, or (a server rooted at the home) the home; both are judged,
        # the home's as a read (what a protected place of the home asks or blocks).
        relative = [s for s in (*strings, *([raw] if isinstance(raw, str) else [])) if _rel(s)]
        extra = [
            Mention(path, text, True, write, target=True)
            for text in strings
            if text != raw and (path := self._normalize(text, cwd)) is not None
        ] + [
            Mention(path, text, True, False)
            for text in dict.fromkeys(relative)
            if (path := self._normalize(text, home)) is not None
        ]
        if units and not write:
            units[0].mentions[:] = [
                Mention(m.path, m.raw, True, False, target=m.target) for m in units[0].mentions
            ]
        if extra:
            units.append(_Unit(None, extra))
        if not resource:
            for command in command_strings(tool_input):
                matches.extend(self._shell_units(command, cwd, home, units))
        own = tool_name == PLANNER_TOOL_NAME and (facts is None or facts.source == "guard")
        if resource or own:
            return path_out
        project = self._mcp.project_defines(tool_name, facts)
        source = describe_source(tool_name, facts)
        if project is not None:
            matches.append(
                check(
                    "project-mcp-server",
                    f"{tool_name} comes from the MCP server '{project}' that this project's "
                    ".pi/mcp.json defines; no rule and no hint makes it run unasked",
                )
            )
        if read_only:
            notes.append(f"read-only by the hints of the MCP server '{trusted}' you trust")
            return path_out
        matches.append(check("unknown-tool", _unknown_reason(tool_name, source, facts, trusted)))
        return path_out

    def _outside_writable(self, units: Sequence[_Unit], cwd: str) -> list[Match]:
        """``builtin.outside-workspace`` for a file tool's write outside the writable set.

        The path is checked as written and, unless the policy turned symlink resolution off,
        as resolved: a link inside the workspace that points outside it is outside.
        """
        writes = [
            (index, m.path)
            for index, unit in enumerate(units)
            for m in unit.mentions
            if m.write and m.path is not None
        ]
        if not writes:
            return []
        allowed = WritableSet.of(cwd, self._writable)
        out: list[Match] = []
        for index, path in writes:
            real = realpath(path) if self._resolve else path
            if allowed.covers(path) and allowed.covers(real):
                continue
            where = path if real == path else f"{path} (really {real})"
            why = f"; {allowed.narrowed}: {TOO_WIDE_HINT}" if allowed.narrowed else ""
            base = check("outside-workspace")
            out.append(
                Match(
                    base.rule_id,
                    base.layer,
                    base.verdict,
                    base.kind,
                    base.reason + why,
                    (where,),
                    index,
                    (path, real),
                )
            )
        return out

    def _normalize(self, text: str, cwd: str) -> str | None:
        try:
            return normalize_path(text, cwd)
        except BadInputError:
            return None

    def _file_unit(self, tool_name: str, raw: object, cwd: str) -> tuple[str | None, _Unit | None]:
        if not isinstance(raw, str) or not raw:
            return None, None
        pi_tool = tool_name in _PI_FILE_TOOLS
        try:
            # For pi's own file tools the path is the file pi really opens.
            path = normalize_path(pi_tool_path(raw) if pi_tool else raw, cwd)
        except BadInputError:
            return None, None
        read = tool_name not in _WRITE_TOOLS
        write = tool_name not in _READ_TOOLS
        recursive = tool_name == "grep"  # searches file contents beneath the path
        mentions = [Mention(path, raw, read, write, target=write, recursive=recursive)]
        if pi_tool:
            return path, _Unit(None, mentions)
        # Another tool may open the path as written or the way pi's tools do: check each.
        spaced = _UNICODE_SPACES.sub(" ", raw)
        variants = {_strip_at(raw), spaced, _strip_at(spaced)}
        for variant in variants - {raw}:
            other = self._normalize(variant, cwd) if variant else None
            if other is not None and other != path:
                mentions.append(
                    Mention(other, variant, read, write, target=write, recursive=recursive)
                )
        return path, _Unit(None, mentions)

    def _resolved(self, units: Sequence[_Unit]) -> dict[str, str]:
        if not self._resolve:
            return {}
        out: dict[str, str] = {}
        for unit in units:
            for mention in unit.mentions:
                path = mention.path
                if path is None or path in out:
                    continue
                out[path] = realpath(path)
        return out

    def _may_hit(self, mention: Mention, resolved: Mapping[str, str]) -> bool:
        """Cheap pre-filter: could any path rule cover this mention?"""
        path = mention.path
        if mention.pattern is not None:
            return True
        if path is None:
            return False
        if mention.recursive and self._blocked_roots:
            return True
        if self._any_path_regex(path):
            return True
        real = resolved.get(path)
        return real is not None and real != path and self._any_path_regex(real)

    def _rule_match(
        self,
        rule: CompiledRule,
        targets: Sequence[str],
        unit: int | None,
        paths: Sequence[str] = (),
    ) -> Match:
        r = rule.rule
        reason = r.reason or f"matches rule {r.id}"
        return Match(
            r.id,
            rule.layer,
            r.verdict,
            r.effective_kind,
            reason,
            unique(targets),
            unit,
            tuple(paths),
        )

    def _match_units(self, tool_name: str, units: Sequence[_Unit], home: str) -> list[Match]:
        matches: list[Match] = unresolved_matches(
            [(u.command, u.mentions) for u in units], self._normalize
        )
        resolved = self._resolved(units)
        for index, unit in enumerate(units):
            command = unit.command
            if command is not None and command.program is not None:
                program = command.program
                candidates = self._candidates(command, program)
                shown = [m.path or m.raw for m in unit.mentions if m.target]
                for rule in candidates:
                    if rule.applies_to_tool(tool_name) and rule.shape_matches(
                        command, unit.mentions, program_checked=True
                    ):
                        matches.append(self._rule_match(rule, shown, index))
                matches.extend(catastrophic_matches(command, unit.mentions, index, home))
            candidates_m = [m for m in unit.mentions if self._may_hit(m, resolved)]
            if not candidates_m:
                continue
            for rule in self._path_rules:
                if not rule.applies_to_tool(tool_name):
                    continue
                hits = rule.mention_hits(candidates_m, resolved)
                if hits:
                    matches.append(self._rule_match(rule, hits, index, hits))
        return matches

    def _candidates(self, command: Command, program: str) -> tuple[CompiledRule, ...]:
        rules = self._by_program.get(program, ())
        if self._globbed_any is not None and self._globbed_any.match(program):
            rules += tuple(r for r in self._globbed if r.program_matches(program))
        if program not in self._sub_programs:
            return rules
        positionals, ambiguous = leading_positionals(command, program)
        heads = positionals[:2] if ambiguous else positionals[:1]
        if any(w.value is None for w in heads):
            # A subcommand only known at runtime could be any of them (fail closed).
            subs = [r for (p, _), rs in self._by_sub.items() if p == program for r in rs]
            return rules + tuple(dict.fromkeys(subs))
        for word in heads:
            rules += self._by_sub.get((program, word.value or ""), ())
        return tuple(dict.fromkeys(rules))

    def _relaxed_by(self, match: Match, tool_name: str, units: Sequence[_Unit]) -> str | None:
        if match.layer != "builtin" or match.verdict != "confirm" or match.rule_id in UNRELAXABLE:
            return None
        for exception in self._exceptions:
            rule = exception.rule
            if match.rule_id not in rule.relaxes:
                continue
            if rule.family == "tools":
                if exception.tool_matches(tool_name):
                    return rule.id
                continue
            if match.unit is None or not exception.applies_to_tool(tool_name):
                continue
            unit = units[match.unit]
            if rule.family == "program":
                if unit.command is not None and exception.shape_matches(
                    unit.command, unit.mentions, exception=True
                ):
                    return rule.id
            elif (
                match.paths
                and exception.paths is not None
                and all(exception.paths.match(p) for p in match.paths)
            ):
                return rule.id
        return None

    def _verdict(
        self,
        tool_name: str,
        matches: Sequence[Match],
        units: Sequence[_Unit],
        path: str | None,
        facts_notes: Sequence[str] = (),
    ) -> Verdict:
        active: list[Match] = []
        relaxed: list[str] = []
        relaxers: list[str] = []
        allowed: list[str] = []  # what the user's rules let through: the effects review's too
        for match in matches:
            by = self._relaxed_by(match, tool_name, units)
            if by is None:
                active.append(match)
            else:
                relaxers.append(by)
                relaxed.append(f"{match.rule_id} relaxed by the user's rule {by}")
                allowed.extend(match.targets)
        notes: list[str] = [*relaxed, *facts_notes]
        if self._problem_count:
            notes.append(
                f"policy config has {self._problem_count} problem(s); running on the built-in "
                "rules plus what is valid in the other layers (see `pi-guard policy show`)"
            )
        targets_file = (path,) if path is not None else ()
        if not active:
            return Verdict(
                verdict="allow",
                action_kind="local-safe",
                rule_ids=unique(relaxers),
                reasons=unique(notes),
                targets=unique([*targets_file, *allowed]),
                path=path,
            )
        top = max(m.rank for m in active)
        ordered = sorted(active, key=lambda m: -m.rank)
        leading = [m for m in ordered if m.rank == top]
        kind: PolicyActionKind = (
            "destructive" if any(m.kind == "destructive" for m in leading) else "protected"
        )
        targets = unique([*targets_file, *(t for m in ordered for t in m.targets)])
        return Verdict(
            verdict=leading[0].verdict,
            action_kind=kind,
            rule_ids=unique([*(m.rule_id for m in ordered), *relaxers]),
            reasons=unique([*(m.text() for m in ordered), *notes]),
            targets=targets,
            path=path,
        )


def _rel(text: str) -> bool:
    """A relative path (not ``~``, not a ``file:`` URI): its meaning depends on a root."""
    return bool(text) and not text.startswith(("/", "~")) and text[:5].lower() != "file:"


def _unknown_reason(
    tool_name: str, source: str, facts: ToolFacts | None, trusted: str | None
) -> str:
    """Why a call of a tool the guard does not know asks, with what pi says of it."""
    hints = facts.annotations if facts is not None else None
    if hints is None:
        said = "no hints"
    else:
        said = (
            ", ".join(
                f"{name}={value}"
                for name, value in (
                    ("readOnly", hints.read_only_hint),
                    ("destructive", hints.destructive_hint),
                    ("openWorld", hints.open_world_hint),
                )
                if value is not None
            )
            or "no hints"
        )
    if facts is not None and facts.from_pi_mcp:
        if trusted is None:
            why = "its server's hints are not trusted ([mcp] trust_hints of your policy)"
        else:
            why = "its hints do not say read-only"
        return f"{tool_name} from {source} ({said}): {why}; the guard cannot tell what it does"
    return f"{tool_name} from {source} ({said}): the guard cannot tell what it does"
