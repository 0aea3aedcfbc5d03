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
    warm.sock          the warm start's fork server's socket (0600), and warm.lock (its flock)
    sessions/<id>/     one sidecar's own: ``layers/`` (each agent command's copy-on-write
                       layer of the workspace, until the guard applied or discarded what it
                       did, guard/_effects) and ``tmp/`` (the sandbox's /tmp of the session)

Every file name of the home and every environment variable of ours is named here, and
nowhere else in guard (``tests/guard/test_home_names.py``).
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
    "AGENT_DIR_ENV",
    "ANCHOR_ENV",
    "APPROVALS_SOCKET_FILE",
    "AUDIT_LOG_FILE",
    "AUDIT_PREVIEWS_ENV",
    "CACHES_DIR",
    "CONFIG_FILE",
    "DEBUG_ENV",
    "ENV_PREFIX",
    "EXTENSION_DIR_NAME",
    "GRANTS_FILE",
    "HELD_FILE",
    "HOME_ENV",
    "JOURNAL_FILE",
    "KEYRING_FILE",
    "LAYERS_DIR",
    "LAYER_ENV",
    "LEDGER_ENV",
    "LEDGER_FILE",
    "LOG_LEVEL_ENV",
    "OLD_ENV_PREFIX",
    "PAGE_KEY_FILE",
    "PI_PACKAGES",
    "POLICY_FILE",
    "PROXY_SOCKET_FILE",
    "SESSIONS_DIR",
    "SESSION_TMP_DIR",
    "SIGNING_KEY_FILE",
    "STATE_HOME_ENV",
    "TELEMETRY_STATUS_FILE",
    "WARM_IDLE_DEFAULT",
    "WARM_IDLE_ENV",
    "WARM_IDLE_MAX",
    "WARM_LOCK_FILE",
    "WARM_SOCKET_FILE",
    "check_home",
    "default_home",
    "ensure_private_dir",
    "env",
    "env_flag",
    "pi_agent_dir",
    "resolve_home",
    "warm_idle",
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
"""The operator's signed scoped grants and their uses (``guard/_grants/store.py``)."""
AUDIT_LOG_FILE = "audit.jsonl"
"""The guard's audit log (beside it ``audit.jsonl.head`` and the tree cache)."""
# What an install puts in pi's extension directories (guard/_pi/layout.py); the sandbox
# protects both by name, so they live here, below both.
EXTENSION_DIR_NAME = "operator-guard"
"""The guard's directory among pi's extensions."""
CONFIG_FILE = "guard.json"
"""The install's config beside the shim: which Python runs the guard."""
SIGNING_KEY_FILE = "signing.key"
"""The guard's Ed25519 private key (PKCS#8 PEM, 0600)."""
KEYRING_FILE = "keyring.json"
"""The public keyring: each key id's public key, status and retirement."""
LEDGER_FILE = "ledger.sqlite3"
"""The SQLite consumption ledger (unless a shared PostgreSQL ledger is named)."""
POLICY_FILE = "operator-guard.toml"
"""The user's policy layer in the home (a project's is ``.pi/operator-guard.toml``)."""
APPROVALS_SOCKET_FILE = "approvals.sock"
"""In a sidecar's directory: the socket ``pi-guard approvals`` and the page answer on."""
PAGE_KEY_FILE = "page.key"
"""In a sidecar's directory, beside its approval socket: the key an answer relayed by the
page shows (0600, in the home no sandbox sees)."""
PROXY_SOCKET_FILE = "proxy.sock"
"""In a sidecar's directory: the network allowlist proxy's socket."""
TELEMETRY_STATUS_FILE = "telemetry.json"
"""In a sidecar's directory: the OpenTelemetry export's status, for ``pi-guard doctor``."""
WARM_SOCKET_FILE = "warm.sock"
"""The warm start's socket (``guard/_warm``): a launcher hands the fork server its stdio."""
WARM_LOCK_FILE = "warm.lock"
"""Held (``flock``) by the home's one fork server while it lives."""
JOURNAL_FILE = "journal.jsonl"
"""In a command's layer: the journal of applying what the command did."""
HELD_FILE = "held.json"
"""In a command's layer: what the effects review held for the operator."""
# Deprecated spelling of the prefix, still read when the new name is not set.
OLD_ENV_PREFIX = "PI_GUARD_"
"""The prefix of the deprecated alias of every variable (still read)."""
_OLD_ENV_PREFIX = OLD_ENV_PREFIX
# Variables of ours, named as env() takes them (the part after the prefix).
HOME_ENV = "HOME"
"""``$PI_OPERATOR_GUARD_HOME``: the guard's home."""
LEDGER_ENV = "LEDGER"
"""``$PI_OPERATOR_GUARD_LEDGER``: a shared PostgreSQL ledger's URL (wins over ``[ledger]``)."""
ANCHOR_ENV = "ANCHOR_DIR"
"""``$PI_OPERATOR_GUARD_ANCHOR_DIR``: the anchor directory (a directory or a git work tree)."""
AUDIT_PREVIEWS_ENV = "AUDIT_PREVIEWS"
"""``$PI_OPERATOR_GUARD_AUDIT_PREVIEWS``: ``off`` keeps previews out of the audit log."""
LOG_LEVEL_ENV = "LOG_LEVEL"
"""``$PI_OPERATOR_GUARD_LOG_LEVEL``: the guard's own log level."""
DEBUG_ENV = "DEBUG"
"""``$PI_OPERATOR_GUARD_DEBUG``: an internal error of ``pi-guard`` raises (a traceback)."""
WARM_IDLE_ENV = "WARM_IDLE"
"""``$PI_OPERATOR_GUARD_WARM_IDLE``: seconds a fork server waits idle before it ends; ``0``
switches the warm start off (every sidecar starts cold); see :func:`warm_idle`."""
WARM_IDLE_DEFAULT = 600.0
"""Seconds a fork server stays without a connection or a sidecar before it ends."""
WARM_IDLE_MAX = 86_400.0
LAYER_ENV = ENV_PREFIX + "LAYER"
"""The variable that names a command's layer (``[A-Za-z0-9_-]+``); removed inside."""
# Variables of others the guard reads.
AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"
"""pi's agent directory."""
STATE_HOME_ENV = "XDG_STATE_HOME"
"""Where the user's state goes (``~/.local/state`` when unset): the guard notes its homes."""
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


def warm_idle() -> float:
    """``$PI_OPERATOR_GUARD_WARM_IDLE`` (seconds, 0 = off), :data:`WARM_IDLE_DEFAULT` when
    unset; a value that is no number in 0..86400 switches the warm start off."""
    raw = env(WARM_IDLE_ENV)
    if raw is None or not raw.strip():
        return WARM_IDLE_DEFAULT
    try:
        value = float(raw)
    except ValueError:
        return 0.0
    return value if 0 < value <= WARM_IDLE_MAX else 0.0


def env_flag(name: str) -> bool:
    """True when :func:`env` gives ``1``, ``true``, ``yes`` or ``on`` (any case)."""
    return (env(name) or "").strip().lower() in {"1", "true", "yes", "on"}


def pi_agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get(AGENT_DIR_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"


def default_home() -> Path:
    """``$PI_OPERATOR_GUARD_HOME``, else ``<pi agent dir>/operator-guard``."""
    configured = env(HOME_ENV)
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
