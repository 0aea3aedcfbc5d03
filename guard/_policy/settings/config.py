"""Reading TOML policy layers: validation with file/line/key problems, never an exception.

A layer file that is unreadable or not TOML contributes nothing. In a file with
problems every valid restricting rule is still used (so a typo never removes the
other restrictions), but nothing in it may relax the policy: its ``allow`` rules and
relaxing settings are dropped and reported.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import ValidationError
from pydantic.alias_generators import to_snake

from guard._policy.settings.models import (
    ApprovalSettings,
    ConfigProblem,
    EvidenceSettings,
    GrantSettings,
    LayerName,
    LedgerSettings,
    McpSettings,
    NetworkSettings,
    Rule,
    SandboxSettings,
    Settings,
    TelemetrySettings,
)

__all__ = [
    "LIST_FIELDS",
    "PROJECT_LEDGER_MESSAGE",
    "PROJECT_RELAX_MESSAGE",
    "PROJECT_SANDBOX_MESSAGE",
    "PROJECT_TELEMETRY_MESSAGE",
    "UNPARSED_SANDBOX_MESSAGE",
    "LayerFile",
    "builtin_layer",
    "check_config_file",
    "parse_layer",
    "read_layer",
]

MAX_CONFIG_BYTES = 1 << 20
LIST_FIELDS = frozenset(
    {
        "tools",
        "paths",
        "exclude",
        "access",
        "program",
        "subcommand",
        "flags",
        "all_flags",
        "unless_flags",
        "args",
        "target_paths",
        "relaxes",
        "shell_tools",
        "writable",
        "hidden",
    }
)
_TOP_KEYS = (
    "version",
    "settings",
    "sandbox",
    "ledger",
    "grants",
    "approvals",
    "evidence",
    "mcp",
    "telemetry",
    "rule",
)
_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.\"'-]+)\s*\]\]?")
_KEY = re.compile(r"^\s*(?:\"([^\"]+)\"|'([^']+)'|([A-Za-z0-9_-]+))\s*=")
_TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


@dataclass(frozen=True, slots=True)
class LayerFile:
    """What one layer file contributed."""

    layer: LayerName
    file: str | None
    status: Literal["loaded", "absent", "partial", "invalid"]
    rules: tuple[Rule, ...]
    rule_lines: tuple[int, ...]
    settings: Settings
    problems: tuple[ConfigProblem, ...]
    settings_lines: Mapping[str, int] = field(default_factory=dict)
    # ``[sandbox]`` (user layer only; ``None`` when absent, invalid or refused) and its line.
    sandbox: SandboxSettings | None = None
    sandbox_line: int = 1
    # ``[ledger]`` (user layer only; ``None`` when absent, invalid or refused).
    ledger: LedgerSettings | None = None
    # ``[grants]`` (user and project layer; ``None`` when absent; an invalid table is
    # ``enabled = false``), the line of the table and of each of its keys.
    grants: GrantSettings | None = None
    grants_line: int = 1
    grants_lines: Mapping[str, int] = field(default_factory=dict)
    # ``[approvals]`` (user layer only; ``None`` when absent, invalid or refused).
    approvals: ApprovalSettings | None = None
    # ``[evidence]`` (user layer only; ``None`` when absent, invalid or refused).
    evidence: EvidenceSettings | None = None
    # ``[mcp]`` (user layer only; ``None`` when absent, invalid or refused).
    mcp: McpSettings | None = None
    # ``[telemetry]`` (user layer only; ``None`` when absent, invalid or refused).
    telemetry: TelemetrySettings | None = None


class _Lines:
    """Line numbers of tables and keys in TOML text (tomllib does not report them)."""

    def __init__(self, text: str) -> None:
        self.headers: dict[tuple[str, int], int] = {}
        self.keys: dict[tuple[str, int, str], int] = {}
        counts: dict[str, int] = {}
        current = ("", 0)
        for number, line in enumerate(text.splitlines(), start=1):
            header = _HEADER.match(line)
            if header and not _KEY.match(line):
                name = header.group(2).strip("\"'")
                if header.group(1) == "[[":
                    index = counts.get(name, 0)
                    counts[name] = index + 1
                else:
                    index = 0
                current = (name, index)
                self.headers.setdefault(current, number)
                continue
            key = _KEY.match(line)
            if key:
                name = key.group(1) or key.group(2) or key.group(3) or ""
                self.keys.setdefault((current[0], current[1], name), number)

    def of(self, table: str, index: int, key: str | None = None) -> int:
        if key is not None:
            found = self.keys.get((table, index, key))
            if found is not None:
                return found
        return self.headers.get((table, index), 1)


def _listify(data: Mapping[str, Any]) -> dict[str, Any]:
    """TOML arrays become tuples (strict models), in sub-tables too (``[sandbox.network]``);
    a lone string where a list goes is a list."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, list):
            out[key] = tuple(value)
        elif isinstance(value, dict):
            out[key] = _listify(value)
        elif key in LIST_FIELDS and isinstance(value, str):
            out[key] = (value,)
        else:
            out[key] = value
    return out


def _message(error: Mapping[str, Any]) -> str:
    text = str(error.get("msg", "invalid"))
    loc = tuple(error.get("loc", ()))
    if error.get("type") == "extra_forbidden" and loc:
        text += _did_you_mean(str(loc[-1]))
    return text.removeprefix("Value error, ")


@functools.cache
def _known_keys() -> tuple[str, ...]:
    models = (
        Settings, SandboxSettings, NetworkSettings, LedgerSettings, GrantSettings,
        ApprovalSettings, EvidenceSettings, McpSettings, TelemetrySettings, Rule,
    )  # fmt: skip
    return tuple(sorted({name for m in models for name in m.model_fields} | set(_TOP_KEYS)))


def _did_you_mean(key: str) -> str:
    """``" (did you mean 'x'?)"`` for a near miss of a key the policy knows, else ``""``."""
    close = difflib.get_close_matches(key, _known_keys(), n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""


def _key_name(table: str, index: int | None, loc: tuple[Any, ...]) -> str:
    base = f"{table}[{index}]" if index is not None else table
    for part in loc:
        base += f"[{part}]" if isinstance(part, int) else f".{part}"
    return base


class _Reader:
    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.lines = _Lines(text)
        self.problems: list[ConfigProblem] = []

    def problem(self, line: int, key: str, message: str) -> None:
        self.problems.append(
            ConfigProblem(file=self.file, line=max(line, 1), key=key, message=message)
        )

    def validation(self, table: str, index: int | None, exc: ValidationError) -> None:
        for error in exc.errors():
            loc = tuple(error.get("loc", ()))
            first = str(loc[0]) if loc else None
            line = self.lines.of(table, index or 0, first)
            self.problem(line, _key_name(table, index, loc), _message(error))


def _read_text(path: Path, reader_file: str) -> tuple[str | None, ConfigProblem | None]:
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, ConfigProblem(
            file=reader_file, line=1, key="(file)", message=f"cannot read: {exc.strerror or exc}"
        )
    if len(data) > MAX_CONFIG_BYTES:
        return None, ConfigProblem(
            file=reader_file, line=1, key="(file)", message=f"larger than {MAX_CONFIG_BYTES} bytes"
        )
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, ConfigProblem(
            file=reader_file,
            line=line,
            key="(file)",
            message=f"not valid UTF-8 at byte {exc.start}",
        )


def parse_layer(text: str, file: str, layer: LayerName) -> LayerFile:
    """Validate TOML ``text`` of one layer; problems are collected, never raised."""
    reader = _Reader(file, text)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _TOML_POSITION.search(str(exc))
        line = int(found.group(1)) if found else 1
        message = _TOML_POSITION.sub("", str(exc)).strip() or "invalid TOML"
        reader.problem(line, "(syntax)", f"not valid TOML: {message}")
        # "at end of document": every line before the end may still parse
        upto = line if found else text.count("\n") + 1
        sandbox = _unparsed_sandbox(text, upto) if layer == "user" else None
        return LayerFile(
            layer, file, "invalid", (), (), Settings(), tuple(reader.problems), sandbox=sandbox
        )

    for key in data:
        if key not in _TOP_KEYS:
            reader.problem(
                reader.lines.of("", 0, key),
                key,
                "unknown key (expected version, [settings], [sandbox], [ledger], [grants], "
                "[approvals], [evidence], [mcp], [telemetry] or [[rule]])" + _did_you_mean(key),
            )
    version = data.get("version", 1)
    if version != 1 or isinstance(version, bool):
        reader.problem(
            reader.lines.of("", 0, "version"),
            "version",
            f"unsupported version {version!r} (expected 1)",
        )

    settings = Settings()
    raw_settings = data.get("settings", {})
    if not isinstance(raw_settings, dict):
        reader.problem(reader.lines.of("", 0, "settings"), "settings", "must be a table")
    else:
        try:
            settings = Settings.model_validate(_listify(raw_settings))
        except ValidationError as exc:
            reader.validation("settings", None, exc)

    sandbox, sandbox_line = _parse_sandbox(data, reader, layer)
    ledger = _parse_ledger(data, reader, layer)
    grants, grants_line, grants_lines = _parse_grants(data, reader)
    approvals = _parse_user_table(data, reader, layer, "approvals", ApprovalSettings)
    evidence = _parse_evidence(data, reader, layer)
    mcp = _parse_user_table(data, reader, layer, "mcp", McpSettings)
    telemetry = _parse_user_table(data, reader, layer, "telemetry", TelemetrySettings)

    rules: list[Rule] = []
    lines: list[int] = []
    raw_rules = data.get("rule", [])
    if not isinstance(raw_rules, list):
        reader.problem(
            reader.lines.of("", 0, "rule"), "rule", "must be an array of tables ([[rule]])"
        )
        raw_rules = []
    for index, item in enumerate(raw_rules):
        if not isinstance(item, dict):
            reader.problem(reader.lines.of("rule", index), f"rule[{index}]", "must be a table")
            continue
        try:
            rules.append(Rule.model_validate(_listify(item)))
            lines.append(reader.lines.of("rule", index))
        except ValidationError as exc:
            reader.validation("rule", index, exc)
    status: Literal["loaded", "partial"] = "partial" if reader.problems else "loaded"
    settings_lines = (
        {key: reader.lines.of("settings", 0, key) for key in raw_settings}
        if isinstance(raw_settings, dict)
        else {}
    )
    return LayerFile(
        layer,
        file,
        status,
        tuple(rules),
        tuple(lines),
        settings,
        tuple(reader.problems),
        settings_lines,
        sandbox,
        sandbox_line,
        ledger,
        grants,
        grants_line,
        grants_lines,
        approvals,
        evidence,
        mcp,
        telemetry,
    )


PROJECT_SANDBOX_MESSAGE = (
    "ignored: [sandbox] is read from the user's file only; a project file can never "
    "change the sandbox (the project directory is writable by the model)"
)


def _parse_sandbox(
    data: Mapping[str, Any], reader: _Reader, layer: LayerName
) -> tuple[SandboxSettings | None, int]:
    """``[sandbox]`` of the user's layer; in any other layer it is a problem and ignored."""
    if "sandbox" not in data:
        return None, 1
    line = reader.lines.of("sandbox", 0)
    raw = data["sandbox"]
    if layer != "user":
        reader.problem(line, "sandbox", PROJECT_SANDBOX_MESSAGE)
        return None, line
    if not isinstance(raw, dict):
        reader.problem(reader.lines.of("", 0, "sandbox"), "sandbox", "must be a table")
        return None, line
    try:
        return SandboxSettings.model_validate(_listify(raw)), line
    except ValidationError as exc:
        reader.validation("sandbox", None, exc)
        return _restrictions_of(raw), line


UNPARSED_SANDBOX_MESSAGE = (
    "the sandbox keeps the network off (and hides what the file's [sandbox] still says "
    "before the error) until this file can be read as TOML"
)


def _unparsed_sandbox(text: str | None, line: int = 1) -> SandboxSettings:
    """The sandbox of a user file that cannot be read or parsed: the strictest it may have
    asked for. The network is ``off`` (the file may have said so below the error), and the
    ``hidden`` paths of a ``[sandbox]`` table that parses before the error still count."""
    hidden: tuple[str, ...] = ()
    lines = (text or "").splitlines()[: max(line - 1, 0)]
    while lines:
        try:
            head = tomllib.loads("\n".join(lines))
        except tomllib.TOMLDecodeError:
            lines.pop()  # a table cut in the middle: try one line less
            continue
        raw = head.get("sandbox")
        kept = _restrictions_of(raw) if isinstance(raw, dict) else None
        hidden = kept.hidden if kept is not None else ()
        break
    return SandboxSettings(network=NetworkSettings(mode="off"), hidden=hidden, ask="every")


def _restrictions_of(raw: Mapping[str, Any]) -> SandboxSettings | None:
    """What an invalid ``[sandbox]`` table still says that can only take away: its valid
    ``hidden`` paths, and its network as asked, or ``off`` when the network setting itself
    is what is invalid (a typo never leaves the agent more network than the operator meant),
    and every destructive call asks (``ask = "every"``: the table may have said so).
    The file has problems, so nothing else of it counts (see ``layering``)."""
    kept: dict[str, Any] = {"ask": "every"}
    if "hidden" in raw:
        with contextlib.suppress(ValidationError):
            hidden = _listify({"hidden": raw["hidden"]})["hidden"]
            kept["hidden"] = SandboxSettings.model_validate({"hidden": hidden}).hidden
    if "network" in raw:
        network = raw["network"]
        try:
            value = _listify(network) if isinstance(network, dict) else network
            kept["network"] = NetworkSettings.model_validate(value)
        except ValidationError:
            kept["network"] = NetworkSettings(mode="off")
    return SandboxSettings.model_validate(kept)


PROJECT_LEDGER_MESSAGE = (
    "ignored: [ledger] is read from the user's file only; a project file can never "
    "choose the consumption ledger (the project directory is writable by the model)"
)


def _parse_ledger(
    data: Mapping[str, Any], reader: _Reader, layer: LayerName
) -> LedgerSettings | None:
    """``[ledger]`` of the user's layer; in any other layer it is a problem and ignored."""
    if "ledger" not in data:
        return None
    line = reader.lines.of("ledger", 0)
    raw = data["ledger"]
    if layer != "user":
        reader.problem(line, "ledger", PROJECT_LEDGER_MESSAGE)
        return None
    if not isinstance(raw, dict):
        reader.problem(reader.lines.of("", 0, "ledger"), "ledger", "must be a table")
        return None
    try:
        return LedgerSettings.model_validate(raw)
    except ValidationError as exc:
        reader.validation("ledger", None, exc)
        return None


_UserTable = TypeVar(
    "_UserTable", ApprovalSettings, EvidenceSettings, McpSettings, TelemetrySettings
)
PROJECT_TELEMETRY_MESSAGE = (
    "ignored: [telemetry] is read from the user's file only; a project file can never turn "
    "export on, point it elsewhere or add headers (the project directory is writable by the "
    "model)"
)


def _parse_user_table(
    data: Mapping[str, Any], reader: _Reader, layer: LayerName, name: str, model: type[_UserTable]
) -> _UserTable | None:
    """Table ``[name]`` of the user's layer (``[approvals]``, ``[evidence]``); in any other
    layer it is a problem and ignored."""
    if name not in data:
        return None
    raw = data[name]
    if layer != "user":
        message = (
            PROJECT_TELEMETRY_MESSAGE
            if name == "telemetry"
            else f"ignored: [{name}] is read from the user's file only"
        )
        reader.problem(reader.lines.of(name, 0), name, message)
        return None
    if not isinstance(raw, dict):
        reader.problem(reader.lines.of("", 0, name), name, "must be a table")
        return None
    try:
        return model.model_validate(_listify(raw))
    except ValidationError as exc:
        reader.validation(name, None, exc)
        return None


def _parse_evidence(
    data: Mapping[str, Any], reader: _Reader, layer: LayerName
) -> EvidenceSettings | None:
    """``[evidence]`` of the user's layer. A table that is there but does not validate
    requires the operator's signature: what it says is unknown, and it can only have meant
    to ask for more (fail closed)."""
    before = len(reader.problems)
    settings = _parse_user_table(data, reader, layer, "evidence", EvidenceSettings)
    if (
        settings is None
        and layer == "user"
        and "evidence" in data
        and len(reader.problems) > before
    ):
        reader.problem(
            reader.lines.of("evidence", 0),
            "evidence",
            "this table does not validate, so evidence must carry the operator's signature",
        )
        return EvidenceSettings(require_operator_signature=True)
    return settings


def _parse_grants(
    data: Mapping[str, Any], reader: _Reader
) -> tuple[GrantSettings | None, int, dict[str, int]]:
    """``[grants]`` of any layer, its line and the line of each key; whether a layer may raise
    or only lower what it says is decided when the layers are merged (see ``layering``).

    Fail closed: a table that does not validate (a wrong type, a value out of range, an
    unknown key, not a table at all) is reported and counts as ``enabled = false``, never as
    the defaults.
    """
    if "grants" not in data:
        return None, 1, {}
    raw = data["grants"]
    has_header = ("grants", 0) in reader.lines.headers
    line = reader.lines.of("grants", 0) if has_header else reader.lines.of("", 0, "grants")
    if not isinstance(raw, dict):
        reader.problem(line, "grants", "must be a table; grants are off")
        return GrantSettings(enabled=False), line, {}
    # keyed by field name (the table may spell a key camelCase too, as every wire model)
    lines = {
        to_snake(key): reader.lines.of("grants", 0, key) if has_header else line for key in raw
    }
    try:
        return GrantSettings.model_validate(raw), line, lines
    except ValidationError as exc:
        reader.validation("grants", None, exc)
        reader.problem(line, "grants", "this table does not validate, so grants are off")
        return GrantSettings(enabled=False), line, lines


def read_layer(path: Path, layer: LayerName) -> LayerFile:
    """Read and validate one layer file; a missing file is an empty, ``absent`` layer."""
    file = str(path)
    text, problem = _read_text(path, file)
    if problem is not None:
        sandbox = _unparsed_sandbox(None) if layer == "user" else None
        return LayerFile(layer, file, "invalid", (), (), Settings(), (problem,), sandbox=sandbox)
    if text is None:
        return LayerFile(layer, file, "absent", (), (), Settings(), ())
    return parse_layer(text, file, layer)


PROJECT_RELAX_MESSAGE = (
    "ignored: a project file can add restrictions but never relax the policy "
    "(the project directory is writable by the model)"
)


def check_config_file(
    path: Path, *, layer: Literal["user", "project"] | None = None
) -> tuple[ConfigProblem, ...]:
    """Validate a policy file on its own; a missing file is a problem here.

    ``layer`` defaults to ``project`` for a file in a ``.pi`` directory, else ``user``;
    in the project layer an ``allow`` rule is reported, since it would be ignored.
    """
    chosen = layer or ("project" if path.parent.name == ".pi" else "user")
    parsed = read_layer(path, chosen)
    if parsed.status == "absent":
        return (ConfigProblem(file=str(path), line=1, key="(file)", message="no such file"),)
    problems = list(parsed.problems)
    for rule, line in zip(parsed.rules, parsed.rule_lines, strict=True):
        if rule.id.startswith("builtin."):
            problems.append(
                ConfigProblem(
                    file=str(path),
                    line=line,
                    key=f"rule {rule.id}",
                    message="ids starting with 'builtin.' are reserved",
                )
            )
        elif chosen == "project" and rule.verdict == "allow":
            problems.append(
                ConfigProblem(
                    file=str(path), line=line, key=f"rule {rule.id}", message=PROJECT_RELAX_MESSAGE
                )
            )
    return tuple(problems)


_BUILTIN: LayerFile | None = None


def builtin_layer() -> LayerFile:
    """The built-in layer (package data), parsed once per process; must be valid."""
    global _BUILTIN
    if _BUILTIN is None:
        text = resources.files("guard._policy").joinpath("_builtin.toml").read_text("utf-8")
        parsed = parse_layer(text, "<builtin>", "builtin")
        if parsed.problems:
            raise RuntimeError(
                "built-in policy is invalid: " + "; ".join(map(str, parsed.problems))
            )
        _BUILTIN = parsed
    return _BUILTIN
