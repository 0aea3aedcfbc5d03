"""Gathering the sandbox's input from this machine: which paths, resolved and classified.

Every path goes through ``os.path.realpath`` (a symlink is bound at its target, where bwrap
will find it) and is classified as ``dir``, ``file``, ``other`` or ``missing``.

Protected read-only: the guard's import packages (``guard``, ``audit``, ``planning``),
``sys.prefix``/``sys.exec_prefix``/``sys.base_prefix``, every site-packages directory and
every other ``sys.path`` entry of this interpreter (except the workspace itself or a parent
of it), pi's agent directory, both installed extension directories and their
``guard.json``, the project's whole ``.pi`` directory (pi loads extensions and settings from
it; it is kept absent-and-read-only when missing), the bwrap binary and the shell.

Hidden: the guard home (keys, keyring, ledger, audit log, the user's policy), pi's
``auth.json`` and ``models.json`` (API keys), the user's runtime directory
(``/run/user/<uid>``: the D-Bus session bus would let ``systemd-run --user`` start a process
outside the sandbox; ssh/gpg agents live there) and the user's ``hidden`` paths.
"""

from __future__ import annotations

import os
import shutil
import site
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from guard._home import ENV_PREFIX, pi_agent_dir
from guard._pi.install import CONFIG_FILE, EXTENSION_DIR_NAME
from guard._policy.layering import CONFIG_FILE_NAME
from guard._policy.models import SandboxSettings
from guard._sandbox.argv import is_within
from guard._sandbox.model import MountPath, SandboxInput

__all__ = [
    "BWRAP_CANDIDATES",
    "OUR_PACKAGES",
    "collect_input",
    "find_bwrap",
    "guard_env_names",
    "install_paths",
    "resolve",
]

BWRAP_CANDIDATES = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
OUR_PACKAGES = ("guard", "audit", "planning")
_OLD_ENV_PREFIX = "PI_GUARD_"
_SECRET_AGENT_FILES = ("auth.json", "models.json")


def resolve(path: str | os.PathLike[str]) -> MountPath:
    """The real absolute path (symlinks resolved, ``~`` expanded) and what it is."""
    real = os.path.realpath(os.path.expanduser(os.fspath(path)))
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return MountPath(path=real, kind="missing")
    if stat.S_ISDIR(mode):
        return MountPath(path=real, kind="dir")
    if stat.S_ISREG(mode):
        return MountPath(path=real, kind="file")
    return MountPath(path=real, kind="other")


def find_bwrap(configured: str | None = None) -> str:
    """The bwrap to use: the user's ``bwrap`` setting, else a system location, else PATH."""
    if configured:
        return os.path.expanduser(configured)
    for candidate in BWRAP_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("bwrap") or BWRAP_CANDIDATES[0]


def guard_env_names(env: Mapping[str, str]) -> tuple[str, ...]:
    """Variables that point at the guard (``PI_OPERATOR_GUARD_*``, old ``PI_GUARD_*``)."""
    return tuple(sorted(n for n in env if n.startswith((ENV_PREFIX, _OLD_ENV_PREFIX))))


def install_paths() -> list[str]:
    """Where this interpreter and the guard live: packages, prefixes, every import path."""
    found: list[str] = []
    for name in OUR_PACKAGES:
        module = sys.modules.get(name) or __import__(name)
        found.extend(os.path.dirname(p) for p in [getattr(module, "__file__", None)] if p)
    found += [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    found += site.getsitepackages()
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    found += [entry for entry in sys.path if entry]
    return found


def _resolved(paths: Iterable[str | os.PathLike[str]]) -> list[MountPath]:
    out: dict[str, MountPath] = {}
    for path in paths:
        entry = resolve(path)
        out.setdefault(entry.path, entry)
    return list(out.values())


def collect_input(
    workspace: str | os.PathLike[str],
    home: str | os.PathLike[str],
    settings: SandboxSettings,
    *,
    env: Mapping[str, str] | None = None,
    bwrap: str | None = None,
    shell: str = "/bin/bash",
    extra_read_only: Iterable[str] = (),
    agent_dir: str | os.PathLike[str] | None = None,
) -> SandboxInput:
    """The sandbox's input for an agent working in ``workspace`` with guard home ``home``."""
    environ = os.environ if env is None else env
    ws = resolve(workspace)
    agent = Path(agent_dir) if agent_dir is not None else pi_agent_dir()
    project_pi = Path(ws.path) / ".pi"

    read_only = [
        entry
        for entry in _resolved(install_paths())
        # The sidecar's own working directory may be on sys.path; never the workspace itself.
        if entry.path != "/" and not is_within(ws.path, entry.path) and entry.kind != "missing"
    ]
    protected: list[str | os.PathLike[str]] = [
        agent,
        agent / "extensions" / EXTENSION_DIR_NAME,
        agent / "extensions" / EXTENSION_DIR_NAME / CONFIG_FILE,
        project_pi,
        project_pi / "extensions" / EXTENSION_DIR_NAME,
        project_pi / "extensions" / EXTENSION_DIR_NAME / CONFIG_FILE,
        Path(home) / CONFIG_FILE_NAME,
        find_bwrap(bwrap or settings.bwrap),
        shell,
        *extra_read_only,
    ]
    for entry in _resolved(protected):
        # The project's .pi stays read-only even when missing (pi would load code from it).
        # (bwrap creates its mount point, so only where the workspace can be written at all.)
        missing_pi = entry.path == os.path.realpath(project_pi) and os.access(ws.path, os.W_OK)
        if entry.kind != "missing" or missing_pi:
            read_only.append(entry)

    uid = os.getuid()
    hidden_paths: list[str | os.PathLike[str]] = [home, f"/run/user/{uid}"]
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and runtime.startswith("/"):
        hidden_paths.append(runtime)
    hidden_paths += [agent / name for name in _SECRET_AGENT_FILES]
    hidden_paths += list(settings.hidden)
    hidden = _resolved(hidden_paths)

    return SandboxInput(
        bwrap=os.path.realpath(find_bwrap(bwrap or settings.bwrap)),
        shell=shell,
        workspace=ws,
        writable=tuple(_resolved(settings.writable)),
        read_only=tuple(read_only),
        hidden=tuple(hidden),
        tmp=settings.tmp,
        network=settings.network,
        unset_env=guard_env_names(environ),
    )
