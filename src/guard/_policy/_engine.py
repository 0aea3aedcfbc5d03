"""The policy: layered rules (built-in < user < project, strictest wins) applied to tool calls."""

from __future__ import annotations

import fnmatch
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic.alias_generators import to_camel

from guard._errors import BadInputError
from guard._fingerprint import normalize_path
from guard._home import pi_agent_dir
from guard._policy._bash import Command, analyze
from guard._policy._config import (
    PROJECT_RELAX_MESSAGE,
    LayerFile,
    builtin_layer,
    read_layer,
)
from guard._policy._glob import GlobError
from guard._policy._models import (
    ActionKind,
    ConfigProblem,
    DescribedCheck,
    DescribedLayer,
    DescribedRule,
    IgnoredRule,
    LayerName,
    PolicyDescription,
    Rule,
    RuleKind,
    Settings,
    Verdict,
    VerdictName,
)
from guard._policy._paths import Mention, command_mentions, has_flag, split_args
from guard._policy._rules import (
    CompiledRule,
    compile_rule,
    first_subcommand_words,
    leading_positionals,
)

__all__ = ["CHECKS", "CONFIG_FILE_NAME", "Policy"]

CONFIG_FILE_NAME = "operator-guard.toml"

CHECKS: dict[str, tuple[VerdictName, RuleKind, str]] = {
    "builtin.parse-error": (
        "confirm",
        "destructive",
        "the command does not parse cleanly as bash, so it cannot be analyzed (fail closed)",
    ),
    "builtin.eval": ("confirm", "destructive", "eval runs a string as a command"),
    "builtin.dynamic-command": (
        "confirm",
        "destructive",
        "a command name is only known at runtime",
    ),
    "builtin.dynamic-script": (
        "confirm",
        "destructive",
        "a shell or interpreter runs a string built at runtime",
    ),
    "builtin.nesting-too-deep": (
        "confirm",
        "destructive",
        "nested shell strings go deeper than the analysis follows",
    ),
    "builtin.too-complex": ("confirm", "destructive", "the command is too large to analyze"),
    "builtin.shell-stdin": (
        "confirm",
        "destructive",
        "a shell or interpreter runs code another command produces",
    ),
    "builtin.download-exec": (
        "confirm",
        "destructive",
        "code downloaded from the network is executed (curl … | sh)",
    ),
    "builtin.inline-code": (
        "confirm",
        "destructive",
        "inline interpreter code deletes files or runs commands",
    ),
    "builtin.guard-self": (
        "block",
        "protected",
        "the guard's own signing surface (python -m guard, code importing the guard package)",
    ),
    "builtin.catastrophic-target": (
        "block",
        "destructive",
        "recursive deletion or rewrite of /, the home directory or a top-level system directory",
    ),
    "builtin.invalid-input": (
        "confirm",
        "destructive",
        "the tool input does not have the expected shape, so it cannot be analyzed (fail closed)",
    ),
}

_RANK: dict[VerdictName, int] = {"allow": 0, "confirm": 1, "block": 2}
_READ_TOOLS = frozenset({"read", "grep", "find", "ls"})
_WRITE_TOOLS = frozenset({"write", "edit"})
_UNICODE_SPACES = re.compile("[\u00a0\u2000-\u200a\u202f\u205f\u3000]")


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOP_LEVEL = _set("""
    /bin /boot /dev /etc /home /lib /lib32 /lib64 /libx32 /media /mnt /opt /proc /root /run
    /sbin /snap /srv /sys /usr /var /Users /System /Library /Applications /private /Volumes
""")
_CATASTROPHIC_PROGRAMS = _set("rm rimraf trash trash-put srm shred find chmod chown chgrp mv")
_PRECEDENCE = (
    "built-in < user (<home>/operator-guard.toml) < project (<project>/.pi/operator-guard.toml); "
    "strictest wins (block > confirm > allow). The project layer can only add restrictions: the "
    "model can write the project directory, so a relaxing project rule or setting is reported and "
    "ignored. Only the user's layer may relax a built-in confirm rule, with an allow rule naming "
    "it in 'relaxes'; block rules are never relaxed."
)


@dataclass(frozen=True, slots=True)
class _Match:
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
        return _RANK[self.verdict]

    def text(self) -> str:
        if not self.targets:
            return self.reason
        shown = ", ".join(self.targets[:3])
        more = f" (+{len(self.targets) - 3} more)" if len(self.targets) > 3 else ""
        return f"{self.reason}: {shown}{more}"


@dataclass(slots=True)
class _Unit:
    command: Command | None
    mentions: list[Mention]


@dataclass(slots=True)
class _Loaded:
    rules: list[CompiledRule] = field(default_factory=list)
    exceptions: list[CompiledRule] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)
    ignored: list[IgnoredRule] = field(default_factory=list)


def _check(check: str, detail: str = "") -> _Match:
    rule_id = "builtin." + check if not check.startswith("builtin.") else check
    verdict, kind, reason = CHECKS[rule_id]
    return _Match(rule_id, "builtin", verdict, kind, detail or reason)


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


class Policy:
    """The effective policy of one guard home and (optionally) one project.

    Build it with :meth:`load`; it never raises on bad config files, it records
    :attr:`problems` and keeps what is valid. :meth:`classify` is pure apart from
    reading the file system for symlinks and globs.
    """

    def __init__(
        self,
        *,
        loaded: _Loaded,
        layers: tuple[DescribedLayer, ...],
        settings: Settings,
        settings_from: dict[str, LayerName],
        placeholders: dict[str, str],
    ) -> None:
        self._rules = tuple(loaded.rules)
        self._exceptions = tuple(loaded.exceptions)
        self._problems = tuple(loaded.problems)
        self._ignored = tuple(loaded.ignored)
        self._layers = layers
        self._settings = settings
        self._settings_from = settings_from
        self._placeholders = placeholders
        self._resolve = bool(settings.resolve_symlinks)
        self._shell_tools = frozenset(settings.shell_tools or ())
        self._path_rules = tuple(r for r in self._rules if r.rule.family == "paths")
        patterns = [r.paths.regex.pattern for r in self._path_rules if r.paths and r.paths.regex]
        flags = 0 if settings.case_sensitive_paths else re.IGNORECASE
        self._path_union = re.compile("|".join(patterns), flags) if patterns else None
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

    # -- loading -----------------------------------------------------------------------------
    @classmethod
    def load(cls, home: Path, project: Path | None) -> Policy:
        """Built-in < ``<home>/operator-guard.toml`` < ``<project>/.pi/operator-guard.toml``.

        Never raises on a bad config file: :attr:`problems` records it.
        """
        here = os.getcwd()
        guard_home = normalize_path(os.fspath(home), here)
        project_dir = normalize_path(os.fspath(project), here) if project is not None else None
        placeholders = {
            "GUARD_HOME": guard_home,
            "PI_AGENT_DIR": normalize_path(os.fspath(pi_agent_dir()), here),
            "PROJECT": project_dir or normalize_path(here, "/"),
        }
        builtin = builtin_layer()
        user = read_layer(Path(guard_home) / CONFIG_FILE_NAME, "user")
        project_layer = (
            read_layer(Path(project_dir) / ".pi" / CONFIG_FILE_NAME, "project")
            if project_dir is not None
            else None
        )
        files = [f for f in (builtin, user, project_layer) if f is not None]
        loaded = _Loaded()
        for layer_file in files:
            loaded.problems.extend(layer_file.problems)
        settings, settings_from = _merge_settings(files, loaded)
        _accept_rules(files, loaded, settings, placeholders, project_dir)
        layers = tuple(
            DescribedLayer(
                layer=f.layer, file=f.file if f.layer != "builtin" else None, status=f.status
            )
            for f in files
        )
        if project_layer is None:
            layers = (*layers, DescribedLayer(layer="project", file=None, status="absent"))
        return cls(
            loaded=loaded,
            layers=layers,
            settings=settings,
            settings_from=settings_from,
            placeholders=placeholders,
        )

    @property
    def problems(self) -> tuple[ConfigProblem, ...]:
        """Config problems found while loading (invalid files, ignored relaxations)."""
        return self._problems

    # -- classification ------------------------------------------------------------------
    def classify(self, tool_name: str, tool_input: Mapping[str, Any], cwd: Path) -> Verdict:
        """The verdict for one pending tool call (strictest matching rule wins)."""
        if not isinstance(tool_input, Mapping):
            raise BadInputError("tool input", "must be a JSON object", type(tool_input).__name__)
        cwd_text = normalize_path(os.fspath(cwd), os.getcwd())
        home = os.path.expanduser("~")
        matches: list[_Match] = []
        units: list[_Unit] = []
        path_out: str | None = None
        if tool_name in self._shell_tools:
            command = tool_input.get("command")
            if not isinstance(command, str):
                matches.append(_check("invalid-input", "a shell call without a command string"))
            else:
                script = analyze(command, cwd=cwd_text, home=home)
                for cmd in script.commands:
                    units.append(_Unit(cmd, command_mentions(cmd, self._normalize, home)))
                matches.extend(_check(f.check, f.detail) for f in script.findings)
        elif "path" in tool_input:
            raw = tool_input["path"]
            path_out, unit = self._file_unit(tool_name, raw, cwd_text)
            if unit is None:
                matches.append(
                    _check("invalid-input", "the path input is not usable: " + _short(repr(raw)))
                )
            else:
                units.append(unit)
        matches.extend(self._match_units(tool_name, units, home))
        for rule in self._tool_rules:
            if rule.tool_matches(tool_name):
                matches.append(self._rule_match(rule, (), None))
        return self._verdict(tool_name, matches, units, path_out)

    def _normalize(self, text: str, cwd: str) -> str | None:
        try:
            return normalize_path(text, cwd)
        except BadInputError:
            return None

    def _file_unit(self, tool_name: str, raw: object, cwd: str) -> tuple[str | None, _Unit | None]:
        if not isinstance(raw, str) or not raw:
            return None, None
        try:
            path = normalize_path(raw, cwd)
        except BadInputError:
            return None, None
        read = tool_name not in _WRITE_TOOLS
        write = tool_name not in _READ_TOOLS
        recursive = tool_name == "grep"  # searches file contents beneath the path
        mentions = [Mention(path, raw, read, write, target=write, recursive=recursive)]
        # pi strips a leading "@" and normalizes unicode spaces before opening a path.
        variants = {raw[1:] if raw.startswith("@") else raw, _UNICODE_SPACES.sub(" ", raw)}
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
                out[path] = _realpath(path)
        return out

    def _may_hit(self, mention: Mention, resolved: Mapping[str, str]) -> bool:
        """Cheap pre-filter: could any path rule cover this mention?"""
        path = mention.path
        if path is None:
            return False
        if mention.recursive and self._blocked_roots:
            return True
        union = self._path_union
        if union is None:
            return False
        if union.match(path):
            return True
        real = resolved.get(path)
        return real is not None and real != path and union.match(real) is not None

    def _rule_match(
        self,
        rule: CompiledRule,
        targets: Sequence[str],
        unit: int | None,
        paths: Sequence[str] = (),
    ) -> _Match:
        r = rule.rule
        reason = r.reason or f"matches rule {r.id}"
        return _Match(
            r.id,
            rule.layer,
            r.verdict,
            r.effective_kind,
            reason,
            _unique(targets),
            unit,
            tuple(paths),
        )

    def _match_units(self, tool_name: str, units: Sequence[_Unit], home: str) -> list[_Match]:
        matches: list[_Match] = []
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
                matches.extend(self._catastrophic(command, unit, index, home))
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

    def _catastrophic(self, command: Command, unit: _Unit, index: int, home: str) -> list[_Match]:
        program = command.program
        if program not in _CATASTROPHIC_PROGRAMS:
            return []
        flags, _, _ = split_args(command.args)
        if program == "rm" and has_flag(flags, "--no-preserve-root"):
            return [_check("catastrophic-target", "rm --no-preserve-root: recursive deletion of /")]
        hits = [
            m.path
            for m in unit.mentions
            if m.path is not None and m.target and m.recursive and _is_catastrophic(m.path, home)
        ]
        if not hits:
            return []
        verdict, kind, reason = CHECKS["builtin.catastrophic-target"]
        return [
            _Match(
                "builtin.catastrophic-target",
                "builtin",
                verdict,
                kind,
                reason,
                _unique(hits),
                index,
            )
        ]

    def _relaxed_by(self, match: _Match, tool_name: str, units: Sequence[_Unit]) -> str | None:
        if match.layer != "builtin" or match.verdict != "confirm":
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
        self, tool_name: str, matches: Sequence[_Match], units: Sequence[_Unit], path: str | None
    ) -> Verdict:
        active: list[_Match] = []
        relaxed: list[str] = []
        relaxers: list[str] = []
        for match in matches:
            by = self._relaxed_by(match, tool_name, units)
            if by is None:
                active.append(match)
            else:
                relaxers.append(by)
                relaxed.append(f"{match.rule_id} relaxed by the user's rule {by}")
        notes: list[str] = list(relaxed)
        if self._problems:
            notes.append(
                f"policy config has {len(self._problems)} problem(s); running on the built-in "
                "rules plus what is valid in the other layers (see `pi-guard policy show`)"
            )
        targets_file = (path,) if path is not None else ()
        if not active:
            return Verdict(
                verdict="allow",
                action_kind="local-safe",
                rule_ids=_unique(relaxers),
                reasons=_unique(notes),
                targets=targets_file,
                path=path,
            )
        top = max(m.rank for m in active)
        ordered = sorted(active, key=lambda m: -m.rank)
        leading = [m for m in ordered if m.rank == top]
        kind: ActionKind = (
            "destructive" if any(m.kind == "destructive" for m in leading) else "protected"
        )
        targets = _unique([*targets_file, *(t for m in ordered for t in m.targets)])
        return Verdict(
            verdict=leading[0].verdict,
            action_kind=kind,
            rule_ids=_unique([*(m.rule_id for m in ordered), *relaxers]),
            reasons=_unique([*(m.text() for m in ordered), *notes]),
            targets=targets,
            path=path,
        )

    # -- description -------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The effective merged policy with the layer of every rule, for ``policy show``."""
        rules = [
            DescribedRule(
                id=r.rule.id,
                layer=r.layer,
                verdict=r.rule.verdict,
                kind=r.rule.effective_kind,
                reason=r.rule.reason,
                match=_match_fields(r.rule),
            )
            for r in (*self._rules, *self._exceptions)
        ]
        checks = [
            DescribedCheck(id=check_id, verdict=v, kind=k, reason=reason)
            for check_id, (v, k, reason) in CHECKS.items()
        ]
        settings: dict[str, bool | list[str]] = {
            "resolveSymlinks": bool(self._settings.resolve_symlinks),
            "caseSensitivePaths": bool(self._settings.case_sensitive_paths),
            "shellTools": list(self._settings.shell_tools or ()),
        }
        description = PolicyDescription(
            precedence=_PRECEDENCE,
            layers=self._layers,
            placeholders=dict(self._placeholders),
            settings=settings,
            settings_from={to_camel(k): v for k, v in self._settings_from.items()},
            rules=tuple(rules),
            checks=tuple(checks),
            ignored=self._ignored,
            problems=tuple(str(p) for p in self._problems),
        )
        return description.model_dump(mode="json")


def _slow_realpath(path: str) -> str:
    try:
        return unicodedata.normalize("NFC", os.path.realpath(path))
    except (OSError, ValueError):
        return path


_O_PATH: int | None = getattr(os, "O_PATH", None) if os.path.isdir("/proc/self/fd") else None


def _realpath(path: str) -> str:
    """``os.path.realpath`` in a few system calls where the OS can do it (Linux ``O_PATH``).

    For a path that does not exist yet the parent is resolved and the name appended,
    so a new file in a symlinked directory still resolves.
    """
    o_path = _O_PATH
    if o_path is None:
        return _slow_realpath(path)
    suffix: list[str] = []
    current = path
    for _ in range(64):
        try:
            fd = os.open(current, o_path)
        except FileNotFoundError:
            parent, name = os.path.split(current)
            if not name or parent == current:
                break
            suffix.append(name)
            current = parent
            continue
        except (OSError, ValueError):
            return _slow_realpath(path)
        try:
            real = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            return _slow_realpath(path)
        finally:
            os.close(fd)
        joined = "/".join([real.rstrip("/"), *reversed(suffix)]) if suffix else real
        return unicodedata.normalize("NFC", joined or "/")
    return _slow_realpath(path)


def _is_catastrophic(path: str, home: str) -> bool:
    for suffix in ("/*", "/.*", "/.[!.]*", "/..?*"):
        if path.endswith(suffix):
            path = path[: -len(suffix)] or "/"
            break
    return path == "/" or path == home or path in _TOP_LEVEL


def _match_fields(rule: Rule) -> dict[str, list[str] | str]:
    data = rule.model_dump(
        mode="json",
        by_alias=True,
        exclude_defaults=True,
        exclude={"id", "verdict", "kind", "reason"},
    )
    out: dict[str, list[str] | str] = {}
    for key, value in data.items():
        if isinstance(value, list):
            out[key] = [str(v) for v in value]
        elif value is not None:
            out[key] = str(value)
    if rule.family == "paths" and "access" not in out:
        out["access"] = list(rule.access)
    return out


def _merge_settings(
    files: Sequence[LayerFile], loaded: _Loaded
) -> tuple[Settings, dict[str, LayerName]]:
    builtin = files[0].settings
    resolve = bool(builtin.resolve_symlinks)
    case_sensitive = bool(builtin.case_sensitive_paths)
    shell_tools: tuple[str, ...] = tuple(builtin.shell_tools or ())
    source: dict[str, LayerName] = {
        "resolve_symlinks": "builtin",
        "case_sensitive_paths": "builtin",
        "shell_tools": "builtin",
    }
    for layer_file in files[1:]:
        s = layer_file.settings
        layer = layer_file.layer
        may_relax = layer == "user" and not layer_file.problems

        def refuse(key: str, why: str, lf: LayerFile = layer_file) -> None:
            file = lf.file or "<builtin>"
            line = lf.settings_lines.get(key, 1)
            loaded.ignored.append(
                IgnoredRule(id=f"settings.{key}", layer=lf.layer, file=file, line=line, reason=why)
            )
            loaded.problems.append(
                ConfigProblem(file=file, line=line, key=f"settings.{key}", message=why)
            )

        why = (
            PROJECT_RELAX_MESSAGE
            if layer == "project"
            else (
                "ignored: this file has problems, and a file with problems never relaxes the policy"
            )
        )
        if s.resolve_symlinks is not None and s.resolve_symlinks != resolve:
            if s.resolve_symlinks or may_relax:
                resolve = s.resolve_symlinks
                source["resolve_symlinks"] = layer
            else:
                refuse("resolve_symlinks", why)
        if s.case_sensitive_paths is not None and s.case_sensitive_paths != case_sensitive:
            if not s.case_sensitive_paths or may_relax:
                case_sensitive = s.case_sensitive_paths
                source["case_sensitive_paths"] = layer
            else:
                refuse("case_sensitive_paths", why)
        if s.shell_tools is not None:
            # The user may replace the list; anything else can only add shell tools.
            merged = tuple(
                dict.fromkeys(s.shell_tools if may_relax else (*shell_tools, *s.shell_tools))
            )
            if merged != shell_tools:
                shell_tools = merged
                source["shell_tools"] = layer
    return (
        Settings(
            resolve_symlinks=resolve, case_sensitive_paths=case_sensitive, shell_tools=shell_tools
        ),
        source,
    )


def _relaxable_ids(builtin: LayerFile) -> frozenset[str]:
    ids = {r.id for r in builtin.rules if r.verdict == "confirm"}
    ids.update(k for k, (verdict, _, _) in CHECKS.items() if verdict == "confirm")
    return frozenset(ids)


def _accept_rules(
    files: Sequence[LayerFile],
    loaded: _Loaded,
    settings: Settings,
    placeholders: Mapping[str, str],
    project: str | None,
) -> None:
    home = os.path.expanduser("~")
    relaxable = _relaxable_ids(files[0])
    seen: set[str] = set(CHECKS)
    for layer_file in files:
        layer = layer_file.layer
        file = layer_file.file or "<builtin>"

        def problem(
            line: int,
            rule: Rule,
            message: str,
            *,
            ignore: bool = True,
            lf: LayerFile = layer_file,
            where: str = file,
        ) -> None:
            loaded.problems.append(
                ConfigProblem(file=where, line=line, key=f"rule {rule.id}", message=message)
            )
            if ignore:
                loaded.ignored.append(
                    IgnoredRule(id=rule.id, layer=lf.layer, file=where, line=line, reason=message)
                )

        for rule, line in zip(layer_file.rules, layer_file.rule_lines, strict=True):
            if layer != "builtin" and rule.id.startswith("builtin."):
                problem(line, rule, "ignored: ids starting with 'builtin.' are reserved")
                continue
            if rule.id in seen:
                problem(
                    line,
                    rule,
                    "ignored: a rule with this id already exists in a lower layer "
                    "or earlier in this file; rules can be added, never replaced",
                )
                continue
            seen.add(rule.id)
            if rule.verdict == "allow":
                if layer == "project":
                    problem(line, rule, PROJECT_RELAX_MESSAGE)
                    continue
                if layer_file.problems:
                    problem(
                        line,
                        rule,
                        "ignored: this file has problems, and a file with "
                        "problems never relaxes the policy",
                    )
                    continue
                unknown = [i for i in rule.relaxes if i not in relaxable]
                if unknown:
                    problem(
                        line,
                        rule,
                        "cannot relax "
                        + ", ".join(unknown)
                        + " (only built-in confirm rules can be relaxed; block never)",
                        ignore=False,
                    )
                    keep = tuple(i for i in rule.relaxes if i in relaxable)
                    if not keep:
                        loaded.ignored.append(
                            IgnoredRule(
                                id=rule.id,
                                layer=layer,
                                file=file,
                                line=line,
                                reason="relaxes nothing",
                            )
                        )
                        continue
                    rule = rule.model_copy(update={"relaxes": keep})
            try:
                compiled = compile_rule(
                    rule,
                    layer,
                    values=placeholders,
                    home=home,
                    anchor=project,
                    case_sensitive=bool(settings.case_sensitive_paths),
                )
            except (GlobError, re.error) as exc:
                if layer == "builtin":
                    raise RuntimeError(f"built-in rule {rule.id} does not compile: {exc}") from None
                problem(line, rule, f"ignored: {exc}")
                continue
            (loaded.exceptions if rule.verdict == "allow" else loaded.rules).append(compiled)
