"""``pi-guard install``: put the pi extension shim where pi discovers it.

Project: ``DIR/.pi/extensions/operator-guard/``; global:
``${PI_CODING_AGENT_DIR:-~/.pi/agent}/extensions/operator-guard/``. Next to the shim goes
``guard.json``, the only configuration the shim reads: the absolute Python that installed it
(so the sidecar runs with this very environment), the sidecar arguments, the guard home and
the timeouts. A manifest records the hash of every file as written, so a copy someone edited
is never overwritten (or removed) without ``force``. Installing twice changes nothing.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from audit import WIRE_CONFIG, sha256_prefixed
from guard._errors import BadInputError, InstallTargetError, ModifiedInstallError
from guard._home import pi_agent_dir

__all__ = [
    "CONFIG_FILE",
    "EXTENSION_DIR_NAME",
    "MANIFEST_FILE",
    "ExtensionConfig",
    "InstallResult",
    "extension_dir",
    "install",
    "shim_source",
]

EXTENSION_DIR_NAME = "operator-guard"
SHIM_FILE = "index.ts"
CONFIG_FILE = "guard.json"
MANIFEST_FILE = "install-manifest.json"
_MANIFEST_SCHEMA: Literal["pi-operator-guard/install/v1"] = "pi-operator-guard/install/v1"

Target = Literal["project", "global"]


SIDECAR_ARGS: tuple[str, ...] = ("-I", "-m", "guard", "serve")


class ExtensionConfig(BaseModel):
    """``guard.json``: what the shim needs to start the sidecar, and its timeouts."""

    model_config = WIRE_CONFIG

    python: str = Field(min_length=1)
    # -I: pi starts the sidecar in the workspace, and without it Python would import a
    # `guard/` (or `pydantic.py`) the agent wrote there before the real one.
    args: tuple[str, ...] = SIDECAR_ARGS
    home: str | None = None
    confirm_timeout_ms: int = Field(default=60_000, ge=1_000, le=3_600_000)
    request_timeout_ms: int = Field(default=10_000, ge=100, le=600_000)
    start_timeout_ms: int = Field(default=30_000, ge=1_000, le=600_000)
    ttl_seconds: int = Field(default=30, ge=1, le=600)


class _Manifest(BaseModel):
    model_config = WIRE_CONFIG

    schema_: Literal["pi-operator-guard/install/v1"] = Field(
        default=_MANIFEST_SCHEMA, alias="schema"
    )
    files: dict[str, str]


class InstallResult(BaseModel):
    """What ``install`` did; ``render()`` is what the CLI prints."""

    model_config = WIRE_CONFIG

    action: Literal["installed", "updated", "unchanged", "uninstalled", "not-installed"]
    target: Target
    directory: str
    files: tuple[str, ...] = ()
    left_in_place: tuple[str, ...] = ()
    config: ExtensionConfig | None = None
    check: tuple[str, ...] = ()

    def render(self) -> str:
        verb = {
            "installed": "installed the pi extension into",
            "updated": "updated the pi extension in",
            "unchanged": "the pi extension is already up to date in",
            "uninstalled": "removed the pi extension from",
            "not-installed": "nothing to remove: no pi extension in",
        }[self.action]
        lines = [f"pi-operator-guard: {verb} {self.directory} ({self.target})"]
        if self.files:
            lines.append("  files:  " + ", ".join(self.files))
        if self.left_in_place:
            lines.append("  left in place (not ours): " + ", ".join(self.left_in_place))
        if self.config is not None:
            lines.append(f"  python: {self.config.python} {' '.join(self.config.args)}")
            home = (
                self.config.home
                or "default ($PI_OPERATOR_GUARD_HOME or <pi agent dir>/operator-guard)"
            )
            lines.append(f"  home:   {home}")
            lines.append(
                f"  confirm timeout: {self.config.confirm_timeout_ms} ms;"
                f" evidence TTL: {self.config.ttl_seconds} s (edit {CONFIG_FILE} to change)"
            )
        if self.check:
            lines.append("Check it:")
            lines.extend(f"  {step}" for step in self.check)
        return "\n".join(lines)


def shim_source() -> bytes:
    """The extension shim shipped inside the ``guard`` package."""
    return resources.files("guard._pi").joinpath("extension", SHIM_FILE).read_bytes()


def extension_dir(target: Target, project_dir: Path | None) -> Path:
    """Where the shim goes for ``target``."""
    if target == "global":
        return pi_agent_dir().absolute() / "extensions" / EXTENSION_DIR_NAME
    if target != "project":
        raise InstallTargetError("must be project or global", target)
    root = (project_dir if project_dir is not None else Path.cwd()).absolute()
    if not root.is_dir():
        raise InstallTargetError("project directory does not exist", root)
    return root / ".pi" / "extensions" / EXTENSION_DIR_NAME


def _dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=False) + "\n").encode()


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_manifest(directory: Path) -> _Manifest | None:
    try:
        return _Manifest.model_validate_json((directory / MANIFEST_FILE).read_bytes())
    except (OSError, ValidationError):
        return None


def _check_unmodified(
    directory: Path, manifest: _Manifest | None, wanted: dict[str, bytes]
) -> None:
    """Refuse when a file we would replace or remove is not what we wrote."""
    for name in (SHIM_FILE, CONFIG_FILE):
        path = directory / name
        if not path.exists():
            continue
        current = sha256_prefixed(path.read_bytes())
        recorded = manifest.files.get(name) if manifest is not None else None
        if current == recorded or current == sha256_prefixed(wanted.get(name, b"\0")):
            continue
        if name == CONFIG_FILE and recorded is not None and _load_config(path) is not None:
            continue  # guard.json is meant to be edited; its settings are carried over
        raise ModifiedInstallError(path)


def _load_config(path: Path) -> ExtensionConfig | None:
    try:
        return ExtensionConfig.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


def _check_steps(directory: Path, config: ExtensionConfig, target: Target) -> tuple[str, ...]:
    where = "in the project directory" if target == "project" else "anywhere"
    return (
        f"start pi {where}: the footer shows 'operator-guard on (sidecar pid N)'",
        "in pi, run /guard: key id, home, counts and audit verify",
        f'without pi: echo \'{{"jsonrpc":"2.0","id":1,"method":"health"}}\''
        f" | {config.python} {' '.join(config.args)}",
        f"remove: pi-guard install {'--global' if target == 'global' else '--project DIR'}"
        " --uninstall",
    )


def _uninstall(directory: Path, target: Target, force: bool) -> InstallResult:
    if not directory.exists():
        return InstallResult(action="not-installed", target=target, directory=str(directory))
    manifest = _read_manifest(directory)
    if not force:
        _check_unmodified(directory, manifest, {})
    removed = []
    for name in (SHIM_FILE, CONFIG_FILE, MANIFEST_FILE):
        path = directory / name
        if path.exists():
            path.unlink()
            removed.append(name)
    left = tuple(sorted(p.name for p in directory.iterdir()))
    if not left:
        directory.rmdir()
    action: Literal["uninstalled", "not-installed"] = "uninstalled" if removed else "not-installed"
    return InstallResult(
        action=action,
        target=target,
        directory=str(directory),
        files=tuple(removed),
        left_in_place=left,
    )


def install(
    target: Target,
    project_dir: Path | None,
    *,
    force: bool,
    uninstall: bool,
    home: Path | None = None,
    confirm_timeout_ms: int | None = None,
    python: str | None = None,
) -> InstallResult:
    """Install (or with ``uninstall`` remove) the shim for ``target``; idempotent.

    ``python`` defaults to this interpreter (``sys.executable``, absolute, symlinks kept so
    a virtualenv stays a virtualenv). ``home`` and ``confirm_timeout_ms`` are written to
    ``guard.json``; when omitted, values a user set there earlier are kept.
    """
    directory = extension_dir(target, project_dir)
    if uninstall:
        return _uninstall(directory, target, force)

    previous = _load_config(directory / CONFIG_FILE)
    base = previous.model_dump(by_alias=False) if previous is not None else {}
    settings: dict[str, Any] = {
        **base,
        "python": python or str(Path(sys.executable).absolute()),
        "args": SIDECAR_ARGS,
    }
    if home is not None:
        settings["home"] = str(home.expanduser().absolute())
    if confirm_timeout_ms is not None:
        settings["confirm_timeout_ms"] = confirm_timeout_ms
    try:
        config = ExtensionConfig.model_validate(settings)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise BadInputError(
            "install option", str(first["msg"]), ".".join(map(str, first["loc"]))
        ) from None

    wanted = {
        SHIM_FILE: shim_source(),
        CONFIG_FILE: _dump(config.model_dump(mode="json")),
    }
    manifest = _Manifest(files={name: sha256_prefixed(data) for name, data in wanted.items()})
    wanted_all = {**wanted, MANIFEST_FILE: _dump(manifest.model_dump(mode="json"))}

    existed = (directory / SHIM_FILE).exists()
    if directory.exists() and not force:
        _check_unmodified(directory, _read_manifest(directory), wanted)
    changed = False
    directory.mkdir(parents=True, exist_ok=True)
    for name, data in wanted_all.items():
        path = directory / name
        try:
            same = path.read_bytes() == data
        except FileNotFoundError:
            same = False
        if not same:
            _write_atomic(path, data)
            changed = True
    action: Literal["installed", "updated", "unchanged"] = (
        "installed" if not existed else "updated" if changed else "unchanged"
    )
    return InstallResult(
        action=action,
        target=target,
        directory=str(directory),
        files=(SHIM_FILE, CONFIG_FILE),
        config=config,
        check=_check_steps(directory, config, target),
    )
