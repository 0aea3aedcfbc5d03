"""``pi-guard install``: put the pi extension shim where pi discovers it.

Three targets:

* ``global`` (the default): ``${PI_CODING_AGENT_DIR:-~/.pi/agent}/extensions/operator-guard/``,
  a personal extension, which pi loads in every folder whatever the project trust;
* ``project``: ``DIR/.pi/extensions/operator-guard/``, which pi >= 0.79 loads only when DIR
  is trusted (print, JSON and RPC modes skip it silently otherwise);
* ``package``: a pi package folder (``package.json`` with the ``pi`` manifest and the
  ``pi-package`` keyword) for ``pi install DIR``.

The shim is ``index.ts`` and the few modules it imports (``ask.ts``, ``local.ts``,
``sidecar.ts``, ``wire.ts``), all in that one directory. Next to them goes ``guard.json``, the
only configuration the shim reads: the absolute Python that installed it (so the sidecar runs
with this very environment), the sidecar arguments, the guard home and the timeouts. A manifest
records the hash of every file as written and the directories the install created, so a copy
someone edited is never overwritten (or removed) without ``force``, and uninstall removes those
directories again once they are empty. Installing twice changes nothing. A ``guard.json`` that
is not a valid configuration is rewritten by a plain reinstall (the broken copy is kept as
``guard.json.corrupt``). ``tools.json`` holds the guard's own tool definitions (the planner),
which the shim registers as soon as pi loads it. The result warns when another copy already
exists: pi would load both.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tempfile
from importlib import metadata, resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from audit.wire import WIRE_CONFIG, sha256_prefixed
from guard._errors import BadInputError, InstallTargetError, ModifiedInstallError, PiFileError
from guard._home import pi_agent_dir
from guard._pi.layout import (
    CONFIG_FILE,
    EXTENSION_DIR_NAME,
    MANIFEST_FILE,
    PACKAGE_FILE,
    PACKAGE_NAME,
    SHIM_FILE,
    SHIM_MODULES,
    TOOLS_FILE,
    InstallLocation,
    find_installs,
    listed_packages,
)
from guard._pi.tools import planner_tools
from guard._pi.trust import project_trust

__all__ = [
    "CONFIG_FILE",
    "CORRUPT_SUFFIX",
    "EXTENSION_DIR_NAME",
    "MANIFEST_FILE",
    "TOOLS_FILE",
    "ExtensionConfig",
    "InstallResult",
    "Target",
    "extension_dir",
    "install",
    "install_command",
    "package_json",
    "shim_source",
    "shim_sources",
    "tools_json",
]

CORRUPT_SUFFIX = ".corrupt"
_MANIFEST_SCHEMA: Literal["pi-operator-guard/install/v1"] = "pi-operator-guard/install/v1"
_PI_IMPORT = re.compile(rb"""from\s+["'](@[\w.-]+/pi-[\w.-]+)["']""")

Target = Literal["project", "global", "package"]


SIDECAR_ARGS: tuple[str, ...] = ("-I", "-m", "guard._warm", "serve")


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
    # Directories this install created above its own, relative to it ("..", "../.."),
    # deepest first: uninstall removes each one that is empty by then.
    created_dirs: tuple[str, ...] = ()


class InstallResult(BaseModel):
    """What ``install`` did; ``render()`` is what the CLI prints on stdout.

    ``warnings`` (not in ``render()``: the CLI prints them on stderr) name problems the
    install did not cause but made matter, such as a second copy pi would load too.
    ``notes`` are what the operator must know for this target to work (project trust).
    """

    model_config = WIRE_CONFIG

    action: Literal["installed", "updated", "unchanged", "uninstalled", "not-installed"]
    target: Target
    directory: str
    files: tuple[str, ...] = ()
    left_in_place: tuple[str, ...] = ()
    removed_dirs: tuple[str, ...] = ()
    repaired: str | None = None
    config: ExtensionConfig | None = None
    other_installs: tuple[InstallLocation, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
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
        if self.removed_dirs:
            lines.append(
                "  removed empty directories it had created: " + ", ".join(self.removed_dirs)
            )
        if self.left_in_place:
            lines.append("  left in place (not ours): " + ", ".join(self.left_in_place))
        if self.repaired is not None:
            lines.append(
                f"  {CONFIG_FILE} was not valid: rewritten, the old one kept as {self.repaired}"
            )
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
        lines.extend(f"Note: {note}" for note in self.notes)
        if self.check:
            lines.append("Check it:")
            lines.extend(f"  {step}" for step in self.check)
        return "\n".join(lines)


def shim_source() -> bytes:
    """The extension shim's entry (``index.ts``) shipped inside the ``guard`` package."""
    return resources.files("guard._pi").joinpath("extension", SHIM_FILE).read_bytes()


def shim_sources() -> dict[str, bytes]:
    """Every file of the shim, by name: ``index.ts`` and the modules it imports."""
    extension = resources.files("guard._pi").joinpath("extension")
    modules = {name: extension.joinpath(name).read_bytes() for name in SHIM_MODULES}
    return {SHIM_FILE: shim_source(), **modules}


def _version() -> str:
    try:
        return metadata.version(PACKAGE_NAME)
    except metadata.PackageNotFoundError:
        return "0.0.0"


def tools_json() -> bytes:
    """``tools.json``: the guard's own tools as the sidecar's ``describe`` lists them, so the
    shim registers them when pi loads it (the model's first request lists them) without
    waiting for the sidecar to start."""
    tools = [tool.model_dump(mode="json") for tool in planner_tools()]
    return (json.dumps(tools, indent=2) + "\n").encode()


def package_json(shim: bytes) -> dict[str, Any]:
    """The pi package manifest: the ``pi-package`` keyword, ``pi.extensions`` naming the
    shim, and every pi package the shim (all its modules: ``shim``) imports as a ``"*"``
    peer dependency."""
    peers = sorted({m.decode() for m in _PI_IMPORT.findall(shim)})
    return {
        "name": PACKAGE_NAME,
        "version": _version(),
        "description": "Asks the operator before destructive or protected tool calls; "
        "signed, report-only evidence and a tamper-evident audit log",
        "keywords": ["pi-package"],
        "license": "MIT",
        "pi": {"extensions": [f"./{SHIM_FILE}"]},
        "peerDependencies": dict.fromkeys(peers, "*"),
    }


def extension_dir(target: Target, directory: Path | None) -> Path:
    """Where the shim goes for ``target``: ``directory`` is the project (``project``,
    default the current directory) or the package folder itself (``package``, required)."""
    if target == "global":
        return pi_agent_dir().absolute() / "extensions" / EXTENSION_DIR_NAME
    if target == "package":
        if directory is None:
            raise InstallTargetError("a package needs its directory", "--package")
        return directory.absolute()
    if target != "project":
        raise InstallTargetError("must be global, project or package", target)
    root = (directory if directory is not None else Path.cwd()).absolute()
    if not root.is_dir():
        raise InstallTargetError("project directory does not exist", root)
    return root / ".pi" / "extensions" / EXTENSION_DIR_NAME


def install_command(target: Target, directory: Path, *extra: str) -> str:
    """The ``pi-guard install`` command line that addresses the install in ``directory``
    (the extension directory): what our messages tell people to run."""
    if target == "global":
        words = ["pi-guard", "install"]
    elif target == "project":
        words = ["pi-guard", "install", "--project", str(directory.parents[2])]
    else:
        words = ["pi-guard", "install", "--package", str(directory)]
    return shlex.join([*words, *extra])


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


def _load_config(path: Path) -> ExtensionConfig | None:
    try:
        return ExtensionConfig.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None


def _check_unmodified(
    directory: Path,
    manifest: _Manifest | None,
    wanted: dict[str, bytes],
    fix: str,
) -> None:
    """Refuse when a file we would replace or remove is not what we wrote.

    ``guard.json`` of an install of ours (its manifest lists it) is meant to be edited: a
    valid one is carried over, an invalid one is repaired (kept aside first).
    """
    for name in _our_files(manifest, wanted):
        path = directory / name
        if not path.exists():
            continue
        current = sha256_prefixed(path.read_bytes())
        recorded = manifest.files.get(name) if manifest is not None else None
        if current == recorded or current == sha256_prefixed(wanted.get(name, b"\0")):
            continue
        if name == CONFIG_FILE and recorded is not None:
            continue
        raise ModifiedInstallError(path, fix)


def _our_files(manifest: _Manifest | None, wanted: dict[str, bytes]) -> tuple[str, ...]:
    """The files of ours in an install directory: what we write now and what we wrote."""
    listed = set(wanted) | (set(manifest.files) if manifest is not None else set())
    return tuple(
        n
        for n in (SHIM_FILE, *SHIM_MODULES, CONFIG_FILE, TOOLS_FILE, PACKAGE_FILE)
        if n in listed or n != PACKAGE_FILE
    )


def _missing_parents(directory: Path) -> tuple[str, ...]:
    """The ancestors of ``directory`` that do not exist yet, relative to it, deepest first."""
    missing = []
    parent = directory.parent
    while not parent.exists() and parent != parent.parent:
        missing.append(os.path.relpath(parent, directory))
        parent = parent.parent
    return tuple(missing)


def _remove_created(directory: Path, created: tuple[str, ...]) -> tuple[str, ...]:
    """Remove the recorded ancestors that are empty now, deepest first; stop at one that is not."""
    removed = []
    for rel in created:
        path = Path(os.path.normpath(directory / rel))
        if not rel.startswith("..") or not path.is_dir():
            break
        try:
            path.rmdir()
        except OSError:
            break
        removed.append(str(path))
    return tuple(removed)


def _check_steps(directory: Path, config: ExtensionConfig, target: Target) -> tuple[str, ...]:
    health = (
        f'without pi: echo \'{{"jsonrpc":"2.0","id":1,"method":"health"}}\''
        f" | {config.python} {' '.join(config.args)}"
    )
    footer = "the footer shows 'operator-guard on (sidecar pid N)'"
    if target == "package":
        quoted = shlex.quote(str(directory))
        return (
            f"add it to pi: pi install {quoted}  (personal: loads in every folder;"
            f" `pi install -l {quoted}` adds it to one project, which must then be trusted)",
            f"start pi: {footer}",
            "in pi, run /guard: key id, home, counts and audit verify",
            "pi-guard doctor [DIR]: will the guard load and guard in DIR?",
            health,
            f"remove: pi remove {quoted}; then {install_command(target, directory, '--uninstall')}",
        )
    where = (
        f"in {directory.parents[2]} (trusted, or with --approve)"
        if target == "project"
        else "in any folder"
    )
    return (
        f"start pi {where}: {footer}",
        "in pi, run /guard: key id, home, counts and audit verify",
        "pi-guard doctor [DIR]: will the guard load and guard in DIR?",
        health,
        f"remove: {install_command(target, directory, '--uninstall')}",
    )


def _trust_note(project: Path) -> str:
    head = (
        f"pi 0.79 and later load {project}/.pi/extensions only when that folder is trusted:"
        " trust it when pi's TUI asks, or run pi there with --approve. Untrusted, pi's print,"
        " JSON and RPC modes (pi -p, --mode json|rpc) skip the guard without a word, and the"
        " TUI skips it after 'Do not trust'. A global install (pi-guard install) always loads."
    )
    try:
        decision = project_trust(project, pi_agent_dir())
    except PiFileError as exc:
        return f"{head} Now: cannot tell ({exc})."
    return f"{head} Now: {decision.decision} ({decision.source}); pi-guard doctor {project} checks."


def _duplicate_warnings(
    target: Target, directory: Path, others: tuple[InstallLocation, ...]
) -> tuple[str, ...]:
    if not others:
        return ()
    where = "; ".join(
        f"{o.kind} {o.directory or o.source}"
        + (f" listed in {o.settings}" if o.settings else "")
        + (" (when that folder is trusted)" if o.scope == "project" else "")
        for o in others
    )
    when = "after `pi install`, pi would load" if target == "package" else "pi loads"
    return (
        f"this is a second copy of the guard: {when} every copy ({where}); the first to"
        " load guards and the others stand down, in pi's load order, not yours."
        " Keep one: remove the others (pi-guard install --uninstall with their target).",
    )


def _uninstall(directory: Path, target: Target, force: bool) -> InstallResult:
    if not directory.exists():
        return InstallResult(action="not-installed", target=target, directory=str(directory))
    manifest = _read_manifest(directory)
    if not force:
        _check_unmodified(
            directory,
            manifest,
            {},
            f"run {install_command(target, directory, '--uninstall', '--force')}",
        )
    removed = []
    for name in (*_our_files(manifest, {}), MANIFEST_FILE):
        path = directory / name
        if path.exists():
            path.unlink()
            removed.append(name)
    left = tuple(sorted(p.name for p in directory.iterdir()))
    removed_dirs: tuple[str, ...] = ()
    if not left:
        directory.rmdir()
        if manifest is not None:
            removed_dirs = _remove_created(directory, manifest.created_dirs)
    action: Literal["uninstalled", "not-installed"] = "uninstalled" if removed else "not-installed"
    return InstallResult(
        action=action,
        target=target,
        directory=str(directory),
        files=tuple(removed),
        left_in_place=left,
        removed_dirs=removed_dirs,
        warnings=_still_listed(directory) if target == "package" else (),
    )


def _still_listed(directory: Path) -> tuple[str, ...]:
    """pi's ``settings.json`` entries (personal, and the current folder's project) that still
    name the package folder just removed: pi would try to load it at every start."""
    folder = Path(os.path.normpath(directory.absolute()))
    return tuple(
        f"{settings} still lists {source}, whose folder this removed: pi cannot load it;"
        f" run pi remove {shlex.quote(source)}" + (" -l" if settings.parent.name == ".pi" else "")
        for settings, source, path in listed_packages(pi_agent_dir(), Path.cwd())
        if path == folder
    )


def _config_for(
    previous: ExtensionConfig | None,
    home: Path | None,
    confirm_timeout_ms: int | None,
    python: str | None,
) -> ExtensionConfig:
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
        return ExtensionConfig.model_validate(settings)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise BadInputError(
            "install option", str(first["msg"]), ".".join(map(str, first["loc"]))
        ) from None


def _write_files(directory: Path, wanted: dict[str, bytes]) -> tuple[bool, str | None]:
    """Write what differs; keep an invalid ``guard.json`` aside first. (changed, kept-as)."""
    repaired = None
    config_path = directory / CONFIG_FILE
    if config_path.exists() and _load_config(config_path) is None:
        aside = config_path.with_name(CONFIG_FILE + CORRUPT_SUFFIX)
        os.replace(config_path, aside)
        repaired = aside.name
    changed = False
    for name, data in wanted.items():
        path = directory / name
        try:
            same = path.read_bytes() == data
        except FileNotFoundError:
            same = False
        if not same:
            _write_atomic(path, data)
            changed = True
    return changed, repaired


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

    ``project_dir`` is the project (``project``) or the package folder (``package``); it is
    ignored for ``global``. ``python`` defaults to this interpreter (``sys.executable``,
    absolute, symlinks kept so a virtualenv stays a virtualenv). ``home`` and
    ``confirm_timeout_ms`` are written to ``guard.json``; when omitted, values a user set
    there earlier are kept. OS errors become :class:`InstallTargetError` naming the path.
    """
    directory = extension_dir(target, project_dir)
    try:
        if uninstall:
            return _uninstall(directory, target, force)
        return _install(target, directory, force, home, confirm_timeout_ms, python)
    except OSError as exc:
        where = exc.filename if exc.filename is not None else directory
        raise InstallTargetError(f"cannot write: {exc.strerror or exc}", where) from None


def _install(
    target: Target,
    directory: Path,
    force: bool,
    home: Path | None,
    confirm_timeout_ms: int | None,
    python: str | None,
) -> InstallResult:
    previous_manifest = _read_manifest(directory)
    config = _config_for(_load_config(directory / CONFIG_FILE), home, confirm_timeout_ms, python)
    shim = shim_sources()
    wanted = {
        **shim,
        CONFIG_FILE: _dump(config.model_dump(mode="json")),
        TOOLS_FILE: tools_json(),
    }
    if target == "package":
        wanted[PACKAGE_FILE] = _dump(package_json(b"".join(shim.values())))
    created = _missing_parents(directory)
    if previous_manifest is not None and directory.exists():
        created = previous_manifest.created_dirs
    manifest = _Manifest(
        files={name: sha256_prefixed(data) for name, data in wanted.items()},
        created_dirs=created,
    )
    wanted_all = {**wanted, MANIFEST_FILE: _dump(manifest.model_dump(mode="json"))}

    existed = (directory / SHIM_FILE).exists()
    if directory.exists() and not force:
        _check_unmodified(
            directory,
            previous_manifest,
            wanted,
            f"run {install_command(target, directory, '--force')}",
        )
    directory.mkdir(parents=True, exist_ok=True)
    changed, repaired = _write_files(directory, wanted_all)
    action: Literal["installed", "updated", "unchanged"] = (
        "installed" if not existed else "updated" if changed else "unchanged"
    )
    project = directory.parents[2] if target == "project" else Path.cwd().absolute()
    others = tuple(
        o
        for o in find_installs(project, pi_agent_dir().absolute())
        if o.directory is None or Path(o.directory) != directory
    )
    return InstallResult(
        action=action,
        target=target,
        directory=str(directory),
        files=tuple(wanted),
        repaired=repaired,
        config=config,
        other_installs=others,
        warnings=_duplicate_warnings(target, directory, others),
        notes=(_trust_note(project),) if target == "project" else (),
        check=_check_steps(directory, config, target),
    )
