"""pi's project-trust decision for a folder, read the way pi (>= 0.79) reads it, never written.

pi loads a project's own resources (``.pi/extensions``, ``.pi/settings.json``, …) only when
the folder is trusted. It decides, in this order:

1. ``--approve`` / ``--no-approve`` on its command line (not visible here);
2. no trust-gated resources in the folder → trusted;
3. ``project_trust`` handlers of personal extensions (not visible here);
4. the saved decision in ``<agentDir>/trust.json``: a flat object mapping canonical absolute
   paths to ``true``/``false``; the nearest entry at or above the folder applies;
5. ``defaultProjectTrust`` in ``<agentDir>/settings.json`` (``always``/``never``/``ask``,
   anything else is ``ask``);
6. ``ask``: the TUI asks; print, JSON and RPC modes treat the folder as untrusted, silently.

:func:`project_trust` reproduces 2, 4, 5 and 6. Personal extensions (``<agentDir>/extensions``)
load whatever the decision.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from audit.wire import WIRE_CONFIG
from guard._errors import PiFileError

__all__ = [
    "TRUST_FILE",
    "TRUST_INTRODUCED",
    "TrustDecision",
    "has_trust_gated_resources",
    "project_trust",
]

TRUST_FILE = "trust.json"
SETTINGS_FILE = "settings.json"
# The first pi release with project trust.
TRUST_INTRODUCED = (0, 79, 0)
# What pi gates behind trust inside <folder>/.pi (pi's TRUST_REQUIRING_PROJECT_CONFIG_RESOURCES).
_GATED = (
    "settings.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
)

Decision = Literal["trusted", "untrusted", "ask"]


class TrustDecision(BaseModel):
    """What pi (>= 0.79) decides for a folder before any command-line flag or handler.

    ``decision`` ``ask`` means: the TUI asks; print/JSON/RPC modes skip the project's
    resources without a word. ``source`` says which rule decided, in words.
    """

    model_config = WIRE_CONFIG

    directory: str
    decision: Decision
    source: str
    gated: bool
    saved_entry: str | None = None


def _canonical(path: Path) -> str:
    """pi's ``canonicalizePath(resolvePath(p))``: the real path, or the absolute one."""
    absolute = os.path.abspath(os.path.expanduser(os.fspath(path)))
    try:
        return os.path.realpath(absolute, strict=True)
    except OSError:
        return absolute


def has_trust_gated_resources(directory: Path) -> bool:
    """True when pi would need a trust decision to load ``directory``'s own resources.

    That is: one of pi's gated entries exists in ``directory/.pi``, or a ``.agents/skills``
    exists in ``directory`` or an ancestor (the user's own ``~/.agents/skills`` excepted).
    """
    current = Path(_canonical(directory))
    if any((current / ".pi" / name).exists() for name in _GATED):
        return True
    user_skills = Path(_canonical(Path.home())) / ".agents" / "skills"
    for folder in (current, *current.parents):
        skills = folder / ".agents" / "skills"
        if skills != user_skills and skills.exists():
            return True
    return False


def _read_trust_store(path: Path) -> dict[str, bool]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise PiFileError(path, f"cannot read: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise PiFileError(path, f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PiFileError(path, "must hold a JSON object")
    saved: dict[str, bool] = {}
    for key, value in data.items():
        if value is None:
            continue
        if not isinstance(value, bool):
            raise PiFileError(path, f"the value for {key} must be true, false or null")
        saved[key] = value
    return saved


def _default_trust(agent_dir: Path) -> Literal["always", "never", "ask"]:
    try:
        settings = json.loads((agent_dir / SETTINGS_FILE).read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return "ask"
    value = settings.get("defaultProjectTrust") if isinstance(settings, dict) else None
    return value if value in ("always", "never") else "ask"


def project_trust(directory: Path, agent_dir: Path) -> TrustDecision:
    """pi's trust decision for ``directory`` with the agent dir ``agent_dir`` (read-only).

    Raises :class:`~guard._errors.PiFileError` when ``trust.json`` is unreadable or malformed
    (pi itself refuses to start then).
    """
    folder = _canonical(directory)
    if not has_trust_gated_resources(directory):
        return TrustDecision(
            directory=folder,
            decision="trusted",
            source="no trust-gated project resources: nothing to decide",
            gated=False,
        )
    saved = _read_trust_store(agent_dir / TRUST_FILE)
    current = Path(folder)
    for candidate in (current, *current.parents):
        value = saved.get(os.fspath(candidate))
        if value is not None:
            return TrustDecision(
                directory=folder,
                decision="trusted" if value else "untrusted",
                source=f"saved decision for {candidate} in {agent_dir / TRUST_FILE}",
                gated=True,
                saved_entry=os.fspath(candidate),
            )
    default = _default_trust(agent_dir)
    where = f"defaultProjectTrust in {agent_dir / SETTINGS_FILE}"
    if default == "always":
        return TrustDecision(directory=folder, decision="trusted", source=where, gated=True)
    if default == "never":
        return TrustDecision(directory=folder, decision="untrusted", source=where, gated=True)
    return TrustDecision(
        directory=folder,
        decision="ask",
        source=f"no saved decision and {where} is ask (the default)",
        gated=True,
    )
