"""Loading and merging the layers: built-in < user < project, strictest wins.

The project layer can only add restrictions (the model can write the project directory);
only the user's layer may relax a built-in confirm rule, and a file with problems never
relaxes anything. What is refused is recorded as a problem and an ignored rule.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from guard._errors import GlobError
from guard._evidence import normalize_path
from guard._home import ANCHOR_ENV, POLICY_FILE, env, pi_agent_dir
from guard._policy.matching.checks import CHECKS
from guard._policy.matching.globs import expand_lists
from guard._policy.matching.rules import CompiledRule, compile_rule
from guard._policy.matching.tools import McpTrust
from guard._policy.settings.config import (
    PROJECT_RELAX_MESSAGE,
    PROJECT_SANDBOX_MESSAGE,
    UNPARSED_SANDBOX_MESSAGE,
    LayerFile,
    builtin_layer,
    read_layer,
)
from guard._policy.settings.homes import known_homes, known_homes_file
from guard._policy.settings.installation import installation_paths
from guard._policy.settings.models import (
    ApprovalSettings,
    ConfigProblem,
    DescribedLayer,
    EvidenceSettings,
    GrantSettings,
    IgnoredRule,
    LayerName,
    Rule,
    SandboxSettings,
    Settings,
)
from guard._policy.settings.pi_mcp import MCP_FILE, read_mcp_servers, server_key
from guard._policy.settings.pi_resources import pi_settings_resources
from guard._policy.settings.surroundings import placeholder_lists
from guard._policy.settings.worktree_hooks import worktree_hook_files

__all__ = ["CONFIG_FILE_NAME", "MergedLayers", "load_layers"]

CONFIG_FILE_NAME = POLICY_FILE


@dataclass(slots=True)
class MergedLayers:
    """The effective policy's parts: accepted rules, merged settings, what was refused."""

    rules: list[CompiledRule] = field(default_factory=list)
    exceptions: list[CompiledRule] = field(default_factory=list)
    problems: list[ConfigProblem] = field(default_factory=list)
    ignored: list[IgnoredRule] = field(default_factory=list)
    layers: tuple[DescribedLayer, ...] = ()
    settings: Settings = field(default_factory=Settings)
    settings_from: dict[str, LayerName] = field(default_factory=dict)
    placeholders: dict[str, str] = field(default_factory=dict)
    placeholder_lists: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    sandbox_from: LayerName = "builtin"
    grants: GrantSettings = field(default_factory=GrantSettings)
    approvals: ApprovalSettings = field(default_factory=ApprovalSettings)
    evidence: EvidenceSettings = field(default_factory=EvidenceSettings)
    mcp: McpTrust = field(default_factory=McpTrust)


def load_layers(home: Path, project: Path | None) -> MergedLayers:
    """Built-in < ``<home>/operator-guard.toml`` < ``<project>/.pi/operator-guard.toml``.

    Never raises on a bad config file: :attr:`MergedLayers.problems` records it.
    """
    here = os.getcwd()
    guard_home = normalize_path(os.fspath(home), here)
    project_dir = normalize_path(os.fspath(project), here) if project is not None else None
    # Without an anchor directory the placeholder names a path inside the home (blocked anyway).
    anchor = env(ANCHOR_ENV) or os.path.join(guard_home, ".no-anchor-directory")
    placeholders = {
        "GUARD_HOME": guard_home,
        "GUARD_ANCHOR_DIR": normalize_path(os.path.expanduser(anchor), here),
        "PI_AGENT_DIR": normalize_path(os.fspath(pi_agent_dir()), here),
        "PROJECT": project_dir or normalize_path(here, "/"),
        **{k: normalize_path(v, here) for k, v in installation_paths().items()},
    }
    builtin = builtin_layer()
    user = read_layer(Path(guard_home) / CONFIG_FILE_NAME, "user")
    project_layer = (
        read_layer(Path(project_dir) / ".pi" / CONFIG_FILE_NAME, "project")
        if project_dir is not None
        else None
    )
    files = [f for f in (builtin, user, project_layer) if f is not None]
    # The work tree's hook files: what the operator's git runs of this project (githooks(5)).
    lists = {**placeholder_lists(), "WORKTREE_HOOKS": worktree_hook_files(project_dir)}
    # Every other guard home this user's guard opened, and where they are noted.
    placeholders["GUARD_HOMES_FILE"] = normalize_path(os.fspath(known_homes_file()), here)
    real_home = os.path.realpath(guard_home)
    lists["GUARD_HOMES"] = tuple(h for h in known_homes() if h not in (guard_home, real_home))
    # What pi's settings files name for it to load, wherever it lies (pi_resources.py).
    code, text = pi_settings_resources(project_dir, placeholders["PI_AGENT_DIR"])
    lists.update(PI_SETTINGS_CODE=code, PI_SETTINGS_TEXT=text)
    loaded = MergedLayers(placeholders=placeholders, placeholder_lists=lists)
    for layer_file in files:
        loaded.problems.extend(layer_file.problems)
    loaded.settings, loaded.settings_from = _merge_settings(files, loaded)
    _sandbox_settings(user, project_layer, loaded)
    _telemetry_secrets(user, loaded)
    loaded.grants = _grant_settings(user, project_layer, loaded)
    if user.approvals is not None and not user.problems:
        loaded.approvals = user.approvals  # a file with problems never relaxes anything
    if user.evidence is not None:
        loaded.evidence = user.evidence  # it can only ask for more (the default asks nothing)
    loaded.mcp = _mcp_trust(user, project_dir)
    _accept_rules(files, loaded, loaded.settings, placeholders, lists, project_dir)
    layers = tuple(
        DescribedLayer(
            layer=f.layer, file=f.file if f.layer != "builtin" else None, status=f.status
        )
        for f in files
    )
    if project_layer is None:
        layers = (*layers, DescribedLayer(layer="project", file=None, status="absent"))
    loaded.layers = layers
    return loaded


def _telemetry_secrets(user: LayerFile, loaded: MergedLayers) -> None:
    """The variables ``[telemetry] headers`` names hold the collector's secrets: removed from
    every agent command, whatever ``keep_env`` says."""
    if user.telemetry is None or not user.telemetry.headers:
        return
    names = tuple(sorted(set(user.telemetry.headers.values())))
    secret = {n.upper() for n in names}
    sandbox = loaded.sandbox
    loaded.sandbox = sandbox.model_copy(
        update={
            "unset_env": (*sandbox.unset_env, *names),
            "keep_env": tuple(k for k in sandbox.keep_env if k.upper() not in secret),
        }
    )


def _mcp_trust(user: LayerFile, project_dir: str | None) -> McpTrust:
    """Whose MCP hints count: the user's ``[mcp]`` (never from a file with problems) and the
    servers pi's own ``mcp.json`` files define."""
    hints = user.mcp.trust_hints if user.mcp is not None and not user.problems else ()
    mine = read_mcp_servers(pi_agent_dir() / MCP_FILE)
    theirs = (
        read_mcp_servers(Path(project_dir) / ".pi" / MCP_FILE) if project_dir is not None else None
    )
    return McpTrust(
        hints=frozenset(server_key(h) for h in hints),
        user=mine.replacing,
        project=theirs.replacing if theirs is not None else frozenset(),
    )


def _merge_settings(
    files: Sequence[LayerFile], loaded: MergedLayers
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


def _sandbox_settings(user: LayerFile, project: LayerFile | None, loaded: MergedLayers) -> None:
    """``[sandbox]`` comes from the user's file only; a file with problems only restricts.

    The project layer's table was already reported when it was parsed; here it is listed
    as ignored. From a user file with problems only ``hidden`` and ``network`` count (they
    can only take away); ``mode``, ``writable``, ``tmp`` and ``bwrap`` fall back to defaults.
    """
    if project is not None and any(p.key == "sandbox" for p in project.problems):
        loaded.ignored.append(
            IgnoredRule(
                id="sandbox",
                layer="project",
                file=project.file or "<project>",
                line=project.sandbox_line,
                reason=PROJECT_SANDBOX_MESSAGE,
            )
        )
    if user.sandbox is None:
        return
    loaded.sandbox_from = "user"
    if user.status == "invalid":
        # Neither read nor parsed: the strictest it may have asked for, and why.
        loaded.sandbox = user.sandbox
        file = user.file or "<user>"
        first = user.problems[0] if user.problems else None
        why = f" ({first.message}, line {first.line})" if first is not None else ""
        loaded.problems.append(
            ConfigProblem(file=file, line=1, key="sandbox", message=UNPARSED_SANDBOX_MESSAGE + why)
        )
        return
    if not user.problems:
        loaded.sandbox = user.sandbox
        return
    # Only what restricts: its hidden paths, its network, and every destructive call asks.
    loaded.sandbox = SandboxSettings(
        hidden=user.sandbox.hidden, network=user.sandbox.network, ask="every"
    )
    relaxing = user.sandbox.model_fields_set & {"mode", "writable", "tmp", "bwrap"}
    if relaxing:
        why = (
            "ignored: this file has problems, and a file with problems never relaxes the "
            "policy (" + ", ".join(f"sandbox.{k}" for k in sorted(relaxing)) + ")"
        )
        file = user.file or "<user>"
        loaded.ignored.append(
            IgnoredRule(id="sandbox", layer="user", file=file, line=user.sandbox_line, reason=why)
        )
        loaded.problems.append(
            ConfigProblem(file=file, line=user.sandbox_line, key="sandbox", message=why)
        )


_NEVER_RELAXES = (
    "ignored: this file has problems, and a file with problems never relaxes the policy"
)


def _grant_settings(
    user: LayerFile, project: LayerFile | None, loaded: MergedLayers
) -> GrantSettings:
    """``[grants]``: the defaults, then the user's table, then the project's, which only restricts.

    The user's table replaces the defaults (it may raise the maxima up to the model's limits,
    or switch grants off). A project table, and the table of a user file with problems, can
    only restrict: ``enabled = false`` switches grants off, a lower maximum lowers it; what
    would raise a maximum or switch grants on is reported and ignored. A table that does not
    validate arrives as ``enabled = false`` (see ``config``); a file that cannot be read or
    is not TOML switches grants off too, since what it says about them is unknown.
    """
    grants = GrantSettings()
    for layer_file in (user, project):
        if layer_file is None:
            continue
        file = layer_file.file or f"<{layer_file.layer}>"
        if layer_file.status == "invalid":
            if grants.enabled:
                grants = GrantSettings(
                    enabled=False, max_minutes=grants.max_minutes, max_uses=grants.max_uses
                )
                loaded.problems.append(
                    ConfigProblem(
                        file=file,
                        line=1,
                        key="grants",
                        message="grants are off: this file could not be read, so what it "
                        "says about [grants] is unknown",
                    )
                )
            continue
        asked = layer_file.grants
        if asked is None:
            continue
        if layer_file.layer == "user" and not layer_file.problems:
            grants = asked
            continue
        why = PROJECT_RELAX_MESSAGE if layer_file.layer == "project" else _NEVER_RELAXES
        grants = _restrict_grants(grants, asked, layer_file, why, loaded)
    return grants


def _restrict_grants(
    current: GrantSettings,
    asked: GrantSettings,
    layer_file: LayerFile,
    why: str,
    loaded: MergedLayers,
) -> GrantSettings:
    """``current`` restricted by what ``asked`` sets; what would widen it is recorded."""
    file = layer_file.file or f"<{layer_file.layer}>"

    def refuse(key: str, asks: str, effect: str) -> None:
        line = layer_file.grants_lines.get(key, layer_file.grants_line)
        reason = f"{why}; grants.{key} = {asks} would {effect}"
        loaded.ignored.append(
            IgnoredRule(
                id=f"grants.{key}", layer=layer_file.layer, file=file, line=line, reason=reason
            )
        )
        loaded.problems.append(
            ConfigProblem(file=file, line=line, key=f"grants.{key}", message=reason)
        )

    given = asked.model_fields_set
    enabled = current.enabled
    if "enabled" in given:
        if not asked.enabled:
            enabled = False
        elif not current.enabled:
            refuse("enabled", "true", "switch grants back on")
    maxima = {"max_minutes": current.max_minutes, "max_uses": current.max_uses}
    for key, have in maxima.items():
        if key not in given:
            continue
        want: int = getattr(asked, key)
        if want < have:
            maxima[key] = want
        elif want > have:
            refuse(key, str(want), f"raise it above {have}")
    return GrantSettings(
        enabled=enabled, max_minutes=maxima["max_minutes"], max_uses=maxima["max_uses"]
    )


def _relaxable_ids(builtin: LayerFile) -> frozenset[str]:
    ids = {r.id for r in builtin.rules if r.verdict == "confirm"}
    ids.update(k for k, (verdict, _, _) in CHECKS.items() if verdict == "confirm")
    return frozenset(ids)


def _accept_rules(
    files: Sequence[LayerFile],
    loaded: MergedLayers,
    settings: Settings,
    placeholders: Mapping[str, str],
    lists: Mapping[str, tuple[str, ...]],
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
            expanded, values = _with_lists(rule, placeholders, lists)
            if expanded is None:
                continue  # its only paths name an empty list: nothing to match here
            rule = expanded
            try:
                compiled = compile_rule(
                    rule,
                    layer,
                    values=values,
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


def _with_lists(
    rule: Rule, placeholders: Mapping[str, str], lists: Mapping[str, tuple[str, ...]]
) -> tuple[Rule | None, dict[str, str]]:
    """``rule`` with its list placeholders expanded, and the placeholder values to use;
    ``None`` when every path it names is an empty list."""
    values = dict(placeholders)
    update: dict[str, tuple[str, ...]] = {}
    for name in ("paths", "exclude", "target_paths"):
        patterns: tuple[str, ...] = getattr(rule, name)
        expanded, more = expand_lists(patterns, lists)
        if more or tuple(expanded) != patterns:
            update[name] = tuple(expanded)
            values.update(more)
    if rule.paths and not update.get("paths", rule.paths):
        return None, values
    return (rule.model_copy(update=update) if update else rule), values
