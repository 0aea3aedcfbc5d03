"""Where the guard keeps its state, and making that place private.

Layout of a home directory (mode 0700)::

    signing.key        Ed25519 private key, PKCS#8 PEM, mode 0600
    keyring.json       public keyring: keyId -> public key, status, retiredAt
    ledger.sqlite3     consumption ledger (single use)
    audit.jsonl        hash-chained audit log, and audit.jsonl.head (signed head)
    operator-guard.toml  the user's policy layer (optional)
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from guard._errors import BadInputError

__all__ = ["default_home", "ensure_private_dir", "pi_agent_dir", "resolve_home"]

_HOME_ENV = "PI_OPERATOR_GUARD_HOME"
_AGENT_DIR_ENV = "PI_CODING_AGENT_DIR"


def pi_agent_dir() -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    configured = os.environ.get(_AGENT_DIR_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".pi" / "agent"


def default_home() -> Path:
    """``$PI_OPERATOR_GUARD_HOME``, else ``<pi agent dir>/operator-guard``."""
    configured = os.environ.get(_HOME_ENV)
    if configured:
        return Path(configured).expanduser()
    return pi_agent_dir() / "operator-guard"


def resolve_home(home: str | os.PathLike[str] | None) -> Path:
    """The absolute home to use: ``home`` when given, else :func:`default_home`."""
    chosen = default_home() if home is None else Path(home).expanduser()
    if str(chosen) == "":
        raise BadInputError("home", "must not be empty")
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
    except OSError as exc:
        raise BadInputError(
            "home", f"cannot create private directory: {exc.strerror}", path
        ) from None
    if not path.is_dir():
        raise BadInputError("home", "is not a directory", path)
    return path
