"""Where checkpoints are anchored outside the home, and the latest one that verifies.

The anchor directory is ``PI_OPERATOR_GUARD_ANCHOR_DIR`` (or one named on the command
line). ``audit verify``, ``doctor`` and the sidecar use it; the sandbox hides it from the
agent's commands, so the model can neither read nor rewrite it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import AnchorDir, Anchored, origin_for
from guard._home import env

__all__ = ["ANCHOR_ENV", "anchor_dir", "latest_anchor", "log_origin"]

ANCHOR_ENV = "ANCHOR_DIR"
"""``PI_OPERATOR_GUARD_ANCHOR_DIR``: the anchor directory (a directory or a git work tree)."""


def anchor_dir(value: str | os.PathLike[str] | None = None) -> AnchorDir | None:
    """``value`` if given, else ``PI_OPERATOR_GUARD_ANCHOR_DIR``, else ``None``."""
    chosen = str(value) if value else env(ANCHOR_ENV)
    return AnchorDir(Path(chosen).expanduser()) if chosen else None


def log_origin(log: Path) -> str | None:
    """The checkpoint origin named by the log's first record, if it can be read."""
    try:
        with log.open("rb") as handle:
            first = json.loads(handle.readline(256 * 1024))
        return origin_for(str(first["data"]["logId"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def latest_anchor(
    directory: AnchorDir | None, log: Path, keys: Mapping[str, Ed25519PublicKey]
) -> tuple[Anchored | None, list[str]]:
    """The latest anchored checkpoint of ``log`` that verifies, and the files skipped."""
    origin = log_origin(log)
    if directory is None or origin is None:
        return None, []
    return directory.latest(keys, origin)
