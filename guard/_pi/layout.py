"""Where copies of the guard's pi extension live, and finding every one pi would load.

pi (both the legacy ``@mariozechner`` and the current ``@earendil-works`` package) loads
extensions from, in order:

* ``<cwd>/.pi/extensions/*/`` — the project's own (gated by project trust on pi >= 0.79);
* ``<agentDir>/extensions/*/`` — personal, always loaded (``agentDir`` is
  ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``);
* the ``packages`` of ``<agentDir>/settings.json`` (personal) and of
  ``<cwd>/.pi/settings.json`` (project, gated like the project's extensions);
* ``-e`` paths on pi's command line (not visible to us).

A folder is a copy of ours when it holds our install manifest, or a ``package.json`` named
:data:`PACKAGE_NAME`, or an ``index.ts`` carrying the shim's marker line. Everything here
only reads.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from audit.wire import WIRE_CONFIG
from guard._home import CONFIG_FILE, EXTENSION_DIR_NAME

__all__ = [
    "CONFIG_FILE",
    "EXTENSION_DIR_NAME",
    "MANIFEST_FILE",
    "PACKAGE_FILE",
    "PACKAGE_NAME",
    "SHIM_FILE",
    "SHIM_MODULES",
    "TOOLS_FILE",
    "InstallKind",
    "InstallLocation",
    "find_installs",
    "is_ours",
    "listed_packages",
]

PACKAGE_NAME = "pi-operator-guard"
SHIM_FILE = "index.ts"
# The shim's other modules, beside it: index.ts imports them as `./NAME` (pi loads one
# directory's index.ts; jiti and Node's type stripping both resolve the rest).
SHIM_MODULES = ("ask.ts", "local.ts", "sidecar.ts", "wire.ts")
MANIFEST_FILE = "install-manifest.json"
PACKAGE_FILE = "package.json"
# The guard's own tools (the planner), as the sidecar's `describe` lists them: the shim
# registers them when pi loads it, before the sidecar has started.
TOOLS_FILE = "tools.json"
SHIM_MARKER = b"pi-operator-guard: the pi extension shim"
_SETTINGS_FILE = "settings.json"
_REMOTE_PREFIXES = ("npm:", "git:", "github:", "http:", "https:", "ssh:")
_HEAD_BYTES = 4096

InstallKind = Literal["global", "project", "package"]


class InstallLocation(BaseModel):
    """One copy of the extension that pi would find.

    ``scope`` ``personal`` always loads; ``project`` loads only in a trusted folder (pi >=
    0.79). ``settings`` names the ``settings.json`` listing a package; ``directory`` is
    ``None`` for a package from npm or git (its files are not inspected).
    """

    model_config = WIRE_CONFIG

    kind: InstallKind
    scope: Literal["personal", "project"]
    directory: str | None
    settings: str | None = None
    source: str | None = None


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_HEAD_BYTES)
    except OSError:
        return b""


def _package_name(folder: Path) -> str | None:
    try:
        data = json.loads((folder / PACKAGE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None


def is_ours(folder: Path) -> bool:
    """True when ``folder`` holds a copy of this extension (see the module docstring)."""
    if not folder.is_dir():
        return False
    return (
        (folder / MANIFEST_FILE).is_file()
        or _package_name(folder) == PACKAGE_NAME
        or SHIM_MARKER in _head(folder / SHIM_FILE)
    )


def _scan_extensions(root: Path, kind: InstallKind) -> list[InstallLocation]:
    try:
        children = sorted(root.iterdir())
    except OSError:
        return []
    scope: Literal["personal", "project"] = "project" if kind == "project" else "personal"
    return [
        InstallLocation(kind=kind, scope=scope, directory=str(child))
        for child in children
        if is_ours(child)
    ]


def _package_sources(settings: Path) -> list[str]:
    try:
        data = json.loads(settings.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return []
    packages = data.get("packages") if isinstance(data, dict) else None
    sources: list[str] = []
    for item in packages if isinstance(packages, list) else []:
        source = item.get("source") if isinstance(item, dict) else item
        if isinstance(source, str) and source.strip():
            sources.append(source.strip())
    return sources


def _resolve_local(source: str, settings: Path) -> Path:
    text = source.removeprefix("file://")
    path = Path(os.path.expanduser(text))
    return path if path.is_absolute() else settings.parent / path


def _scan_packages(settings: Path, scope: Literal["personal", "project"]) -> list[InstallLocation]:
    found = []
    for source in _package_sources(settings):
        if source.startswith(_REMOTE_PREFIXES):
            if PACKAGE_NAME in source:
                found.append(
                    InstallLocation(
                        kind="package",
                        scope=scope,
                        directory=None,
                        settings=str(settings),
                        source=source,
                    )
                )
            continue
        path = _resolve_local(source, settings)
        folder = path.parent if path.is_file() else path
        if is_ours(folder):
            found.append(
                InstallLocation(
                    kind="package",
                    scope=scope,
                    directory=os.path.normpath(folder),
                    settings=str(settings),
                    source=source,
                )
            )
    return found


def find_installs(project_dir: Path | None, agent_dir: Path) -> tuple[InstallLocation, ...]:
    """Every copy pi would find for a session in ``project_dir`` (personal ones always).

    Order: personal extensions, personal packages, then the project's extensions and
    packages. ``project_dir`` ``None`` looks at personal places only.
    """
    found = _scan_extensions(agent_dir / "extensions", "global")
    found += _scan_packages(agent_dir / _SETTINGS_FILE, "personal")
    if project_dir is not None:
        found += _scan_extensions(project_dir / ".pi" / "extensions", "project")
        found += _scan_packages(project_dir / ".pi" / _SETTINGS_FILE, "project")
    unique: dict[tuple[str, str | None], InstallLocation] = {}
    for item in found:
        key = (item.directory or item.source or "", item.settings)
        unique.setdefault(key, item)
    return tuple(unique.values())


def _settings_files(agent_dir: Path, project_dir: Path | None) -> list[Path]:
    files = [agent_dir / _SETTINGS_FILE]
    if project_dir is not None:
        files.append(project_dir / ".pi" / _SETTINGS_FILE)
    return files


def listed_packages(
    agent_dir: Path, project_dir: Path | None = None
) -> list[tuple[Path, str, Path | None]]:
    """Every package entry of pi's ``settings.json`` files (personal, and the project's):
    the file, the entry as written, and the local folder it names (``None``: npm or git)."""
    found: list[tuple[Path, str, Path | None]] = []
    for settings in _settings_files(agent_dir, project_dir):
        for source in _package_sources(settings):
            if source.startswith(_REMOTE_PREFIXES):
                found.append((settings, source, None))
                continue
            path = _resolve_local(source, settings)
            found.append((settings, source, Path(os.path.normpath(path))))
    return found
