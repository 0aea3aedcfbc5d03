"""The action fingerprint: what a confirmation is bound to (docs/monitor.md, "The envelope (v1)").

Record and consume call the same functions, so a confirmation and the pending
call it is checked against can only match if they describe the very same action.
Nothing is ever truncated.
"""

from __future__ import annotations

import os
import posixpath
import unicodedata
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from audit import CanonicalizationError
from audit.wire import WIRE_CONFIG, ActionKind, Sha256, canonical_json, sha256_prefixed
from guard._errors import BadInputError

__all__ = [
    "MAX_PATH_CHARS",
    "MAX_TOOL_NAME_CHARS",
    "Fingerprint",
    "compute_fingerprint",
    "fingerprint_path",
    "normalize_path",
    "normalize_tool_name",
    "payload_hash",
]

MAX_PATH_CHARS = 4096
MAX_TOOL_NAME_CHARS = 256


class Fingerprint(BaseModel):
    """The exact action a confirmation is about."""

    model_config = WIRE_CONFIG

    action_kind: ActionKind
    tool_name: str = Field(min_length=1, max_length=MAX_TOOL_NAME_CHARS)
    path: str | None = Field(default=None, max_length=MAX_PATH_CHARS)
    scope: str | None = Field(default=None, max_length=MAX_PATH_CHARS)
    payload_hash: Sha256


def normalize_tool_name(tool_name: str) -> str:
    """NFC form of a tool name; refuses empty, over-long or control-character names."""
    if not isinstance(tool_name, str) or not tool_name:
        raise BadInputError("tool name", "must be a non-empty string", tool_name)
    name = unicodedata.normalize("NFC", tool_name)
    if len(name) > MAX_TOOL_NAME_CHARS:
        raise BadInputError("tool name", f"longer than {MAX_TOOL_NAME_CHARS} characters", name)
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        raise BadInputError("tool name", "contains control characters", name)
    return name


def _clean(path: str, what: str) -> str:
    if not isinstance(path, str) or not path:
        raise BadInputError(what, "must be a non-empty string", path)
    if "\x00" in path:
        raise BadInputError(what, "contains a NUL character", path)
    text = unicodedata.normalize("NFC", path.replace("\\", "/"))
    if text == "~" or text.startswith("~/"):
        # pi's file tools expand a leading "~" to the user's home; so must we, or
        # "~/.ssh/id_ed25519" would look like a harmless path inside the workspace.
        text = os.path.expanduser("~") + text[1:]
    return text


def _collapse(path: str) -> str:
    collapsed = posixpath.normpath(path)
    # POSIX keeps an implementation-defined leading "//"; we treat it as "/".
    while collapsed.startswith("//"):
        collapsed = collapsed[1:]
    return collapsed


def normalize_path(
    path: str, root: str | os.PathLike[str], *, resolve_symlinks: bool = False
) -> str:
    """Normalize ``path`` against the workspace ``root``.

    Backslashes become ``/``, text is NFC, a relative path is resolved against
    ``root``, ``.``/``..``/``//`` collapse lexically, there is no trailing slash.
    A path outside ``root`` stays absolute; it is never clipped. With
    ``resolve_symlinks`` the result is the real path, so a symlink swapped
    between confirmation and execution changes the fingerprint.

    >>> normalize_path("./build/", "/srv/project")
    '/srv/project/build'
    >>> normalize_path("build/../../etc", "/srv/project")
    '/srv/etc'
    """
    root_text = _clean(os.fspath(root), "workspace root")
    if not root_text.startswith("/"):
        root_text = _collapse(posixpath.join(_clean(os.getcwd(), "cwd"), root_text))
    text = _clean(path, "path")
    if not text.startswith("/"):
        text = root_text + "/" + text
    result = _collapse(text)
    if resolve_symlinks:
        result = unicodedata.normalize("NFC", os.path.realpath(result))
    if len(result) > MAX_PATH_CHARS:
        raise BadInputError("path", f"longer than {MAX_PATH_CHARS} characters", result)
    return result


def fingerprint_path(path: str) -> str:
    """The real path a fingerprint binds: ``path`` (absolute, normalized) with symlinks resolved.

    Every existing component is resolved, a dangling symlink included (to the file it
    would create or open); components that do not exist yet are kept as written beneath
    their resolved existing parent. So ``deploy.pem`` that became a link to
    ``~/.ssh/authorized_keys`` after it was confirmed no longer matches, and a file that
    does not exist yet binds to the real directory it will be created in.
    """
    if not path.startswith("/"):
        raise BadInputError("path", "must be absolute and normalized", path)
    resolved = unicodedata.normalize("NFC", os.path.realpath(path))
    if len(resolved) > MAX_PATH_CHARS:
        raise BadInputError("path", f"longer than {MAX_PATH_CHARS} characters", resolved)
    return resolved


def payload_hash(tool_input: Mapping[str, Any]) -> str:
    """``"sha256:" + hex`` over the RFC 8785 canonical JSON of the full tool input."""
    if not isinstance(tool_input, Mapping):
        raise BadInputError("tool input", "must be a JSON object", type(tool_input).__name__)
    try:
        return sha256_prefixed(canonical_json(tool_input))
    except CanonicalizationError as exc:
        raise BadInputError(
            "tool input", f"not representable as canonical JSON ({exc.code})", exc.value
        ) from None


def compute_fingerprint(
    action_kind: ActionKind,
    tool_name: str,
    tool_input: Mapping[str, Any],
    cwd: str | os.PathLike[str],
    *,
    path: str | None = None,
) -> Fingerprint:
    """The fingerprint of a pending call; ``path`` is the already-normalized target, if any.

    Record and consume both come here, so both bind the same real paths: ``path`` and
    ``scope`` (the workspace root, ``cwd``) have their symlinks resolved
    (:func:`fingerprint_path`).
    """
    scope = normalize_path(
        ".", Path(cwd) if not isinstance(cwd, str) else cwd, resolve_symlinks=True
    )
    return Fingerprint(
        action_kind=action_kind,
        tool_name=normalize_tool_name(tool_name),
        path=None if path is None else fingerprint_path(path),
        scope=scope,
        payload_hash=payload_hash(tool_input),
    )
