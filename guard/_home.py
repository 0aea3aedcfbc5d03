"""Where the guard keeps its state, and making that place private.

Layout of a home directory (mode 0700)::

    signing.key        Ed25519 private key, PKCS#8 PEM, mode 0600
    keyring.json       public keyring: keyId -> public key, status, retiredAt
    ledger.sqlite3     consumption ledger (single use); unused when the user's ``[ledger]``
                       or ``$PI_OPERATOR_GUARD_LEDGER`` names a shared PostgreSQL ledger
    audit.jsonl        hash-chained audit log, and audit.jsonl.head (signed head)
    operator-guard.toml  the user's policy layer (optional)
    caches/            each project's own package caches (npm, pip, cargo …): what the
                       agent's installs wrote, over the user's caches, which never change
    sessions/<id>/     one sidecar's own: ``layers/`` (each agent command's copy-on-write
                       layer of the workspace, until the guard applied or discarded what it
                       did, guard/_effects) and ``tmp/`` (the sandbox's /tmp of the session)

Every file name of the home and every environment variable of ours is named here.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from guard._errors import BadInputError, HomeError, HomeUnderFileError

if TYPE_CHECKING:
    from guard._checks import Check

__all__ = [
    "AUDIT_LOG_FILE",
    "CACHES_DIR",
    "CONFIG_FILE",
    "ENV_PREFIX",
    "EXTENSION_DIR_NAME",
    "GRANTS_FILE",
    "LAYERS_DIR",
    "OLD_ENV_PREFIX",
    "PI_PACKAGES",
    "SESSIONS_DIR",
    "SESSION_TMP_DIR",
    "check_home",
    "default_home",
    "ensure_private_dir",
    "env",
    "env_flag",
    "pi_agent_dir",
    "resolve_home",
]

ENV_PREFIX = "PI_OPERATOR_GUARD_"
CACHES_DIR = "caches"
"""The home's package caches, one per project (``caches/<project>/<n>``), and ``empty``."""
SESSIONS_DIR = "sessions"
"""Each sidecar's directory in the home (``<home>/sessions/s<pid>-<random>/``)."""
LAYERS_DIR = "layers"
"""In a session's directory: its command layers (``layers/<id>/{upper,work}``)."""
SESSION_TMP_DIR = "tmp"
"""In a session's directory: the sandbox's ``/tmp`` for that session."""
GRANTS_FILE = "grants.jsonl"
AUDIT_LOG_FILE = "audit.jsonl"
"""The guard's audit log (beside it ``audit.jsonl.head`` and the tree cache)."""
# What an install puts in pi's extension directories (guard/_pi/layout.py); the sandbox
# protects both by name, so they live here, below both.
EXTENSION_DIR_NAME = "operator-guard"
"""The guard's directory among pi's extensions."""
CONFIG_FILE = "guard.json"
"""The install's config beside the shim: which Python runs the guard."""
"""The operator's signed scoped grants and their uses (``guard/_grants/store.py``)."""
# Deprecated spelling of the prefix, still read when the new name is not set.
OLD_ENV_PREFIX = "PI_GUARD_"
"""The prefix of the deprecated alias of every variable (still read)."""
_OLD_ENV_PREFIX = OLD_ENV_PREFIX
_AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
PI_PACKAGES = ("@mariozechner/pi-coding-agent", "@earendil-works/pi-coding-agent")
"""pi's npm package names: the legacy one (last release 0.73.1) and the current one."""


def env(name: str) -> str | None:
    """``$PI_OPERATOR_GUARD_<name>``; the deprecated ``$PI_GUARD_<name>`` when that is unset.

    Every variable of ours is read through here, so there is one prefix.
    """
    value = os.environ.get(ENV_PREFIX + name)
    if value is None:
        value = os.environ.get(_OLD_ENV_PREFIX + name)
    return value


def env_flag(name: str) -> bool:
    """True when :func:`env` gives ``1``, ``true``, ``yes`` or ``on`` (any case)."""
    return (env(name) or "").strip().lower() in {"1", "true", "yes", "on"}


def pi_agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get(_AGENT_DIR_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"


def default_home() -> Path:
    """``$PI_OPERATOR_GUARD_HOME``, else ``<pi agent dir>/operator-guard``."""
    configured = env("HOME")
    if configured:
        return Path(configured).expanduser()
    return pi_agent_dir() / "operator-guard"


def resolve_home(home: str | os.PathLike[str] | None) -> Path:
    """The absolute home to use: ``home`` when given, else :func:`default_home`."""
    if home is not None and os.fspath(home) == "":
        # Path("") is ".": an empty --home must never mean "the current directory".
        raise BadInputError("home", "must not be empty")
    chosen = default_home() if home is None else Path(home).expanduser()
    return chosen.absolute()


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if missing and make sure only the owner can use it.

    An existing directory that group or others can read is tightened to 0700,
    since the signing key will live inside it.
    """
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        mode = stat.S_IMODE(path.stat().st_mode)
        if mode & 0o077:
            path.chmod(0o700)
    except NotADirectoryError:
        # A file where a directory of the path should be (/dev/null/x): no home can be there,
        # whatever the state of this machine; the path is the caller's mistake.
        raise HomeUnderFileError(path, "cannot create private directory: Not a directory") from None
    except OSError as exc:
        raise HomeError(path, f"cannot create private directory: {exc.strerror}") from None
    if not path.is_dir():
        raise HomeError(path, "is not a directory")
    return path


def check_home(home: Path) -> Check:
    """The home exists and is usable, or can be created by the sidecar on first use."""
    from guard._checks import Check  # pydantic: only for doctor, not every command

    subject = str(home)
    if not home.exists():
        parent = next((p for p in home.parents if p.exists()), Path("/"))
        if parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
            return Check(
                name="home",
                subject=subject,
                status="ok",
                reason="created-on-first-use",
                detail="does not exist yet; the sidecar creates it (mode 0700) on first use",
            )
        return Check(
            name="home",
            subject=subject,
            status="fail",
            reason="home-cannot-be-created",
            detail=f"does not exist and {parent} is not writable",
            fix="create it (mode 0700) or set home in guard.json",
        )
    if not home.is_dir():
        return Check(
            name="home",
            subject=subject,
            status="fail",
            reason="home-not-a-directory",
            detail="exists but is not a directory",
            fix="move it away or set another home in guard.json",
        )
    info = home.stat()
    if info.st_uid != os.getuid() or not os.access(home, os.W_OK | os.X_OK):
        return Check(
            name="home",
            subject=subject,
            status="fail",
            reason="home-not-writable",
            detail="owned by another user or not writable: the sidecar cannot use it",
            fix="fix its owner and permissions (yours, mode 0700)",
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return Check(
            name="home",
            subject=subject,
            status="warn",
            reason="home-mode-loose",
            detail=f"mode {mode:04o}: the sidecar tightens it to 0700 when it opens it",
            fix=f"chmod 700 {home}",
        )
    return Check(name="home", subject=subject, status="ok", reason="home-usable", detail="usable")
