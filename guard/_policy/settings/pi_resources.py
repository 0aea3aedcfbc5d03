"""What pi's settings files name for it to load, wherever it lies.

pi's ``settings.json`` (the user's in pi's agent directory, the project's in ``<cwd>/.pi``)
lists resources by path (pi's docs/settings.md "Resources", docs/packages.md "Choose a
source", docs/extensions.md "Extension Locations"): ``extensions`` (TypeScript pi runs in its
own process, outside the sandbox), ``packages`` whose source is a local path (a directory of
extensions, skills, prompts and themes, or one extension file), and ``skills``, ``prompts``,
``themes`` (text that steers the model). Paths in the project's file resolve from its
``.pi`` directory, in the user's from the agent directory; absolute paths, ``~`` and
``file://`` URLs work too. Entries that start with ``!``, ``+`` or ``-`` or hold a glob only
filter what the plain entries load, and ``builtin:``, ``npm:`` and git sources are not paths.

A directory's ``package.json`` may name its resources elsewhere (its ``pi`` manifest, paths
relative to the directory, ``..`` allowed): those are named too. A directory that holds the
workspace (``extensions: [".."]`` makes the project itself a package) is named by the parts
pi loads from it (the manifest, ``index.ts``, ``extensions/``, ``skills/``, ``prompts/``,
``themes/``), never whole: the workspace stays the agent's to work in.

Each path comes as written, with its symlinks resolved when that differs, and with every
symlink among its parents (the link itself: re-pointed, pi would load another folder's
code). Read-only; never raises (a file that is missing or not JSON names nothing, as pi then
loads nothing from it).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = ["SETTINGS_FILE", "pi_settings_resources"]

SETTINGS_FILE = "settings.json"
_CODE_KEYS = ("extensions",)
_TEXT_KEYS = ("skills", "prompts", "themes")
_NOT_PATHS = ("npm:", "git:", "github:", "http:", "https:", "ssh:", "builtin:")
_PACKAGE_PARTS = ("package.json", "index.ts", "index.js", "extensions", "skills", "prompts",
                  "themes")  # fmt: skip
_MAX_BYTES = 1 << 20
_MAX_ENTRIES = 256


def _load(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            data = json.loads(handle.read(_MAX_BYTES))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _plain(entries: object) -> Iterator[str]:
    """The entries that add a path (not a filter, not a glob, not a built-in)."""
    if not isinstance(entries, list):
        return
    for entry in entries[:_MAX_ENTRIES]:
        if not isinstance(entry, str):
            continue
        text = entry.strip()
        if not text or text[0] in "!+-" or "*" in text or "?" in text:
            continue
        if text.startswith(_NOT_PATHS):
            continue
        yield text


def _resolve(text: str, base: str, home: str) -> str:
    """pi's ``resolvePath``: ``~``, ``file://`` and relative paths from ``base``."""
    if text == "~":
        text = home
    elif text.startswith("~/"):
        text = os.path.join(home, text[2:])
    elif text.startswith("file://"):
        text = unquote(urlsplit(text).path)
    return os.path.normpath(os.path.join(base, text))


def _package_sources(entries: object) -> Iterator[str]:
    """``packages``: the local sources (a string, or an object's ``source``)."""
    if not isinstance(entries, list):
        return
    for entry in entries[:_MAX_ENTRIES]:
        source = entry.get("source") if isinstance(entry, dict) else entry
        yield from _plain([source])


def _manifest_paths(directory: str) -> Iterator[str]:
    """What a directory's ``package.json`` ``pi`` manifest names, from that directory; a
    glob's literal head stands for what it may match."""
    manifest = _load(Path(directory) / "package.json").get("pi")
    if not isinstance(manifest, dict):
        return
    for key in (*_CODE_KEYS, *_TEXT_KEYS):
        entries = manifest.get(key)
        if not isinstance(entries, list):
            continue
        for entry in entries[:_MAX_ENTRIES]:
            if not isinstance(entry, str) or not entry.strip() or entry.strip()[0] in "!+-":
                continue
            head = []
            for part in entry.strip().split("/"):
                if any(ch in part for ch in "*?[{"):
                    break
                head.append(part)
            yield os.path.normpath(os.path.join(directory, "/".join(head) or "."))


def _holds(path: str, workspace: tuple[str, ...]) -> bool:
    return any(
        place == form or place.startswith(form.rstrip("/") + "/")
        for place in workspace
        for form in (path, os.path.realpath(path))
    )


def _named(path: str, workspace: tuple[str, ...]) -> Iterator[str]:
    """``path`` and what loading it reaches: a directory holding the workspace by its parts."""
    holds_workspace = _holds(path, workspace)
    if holds_workspace:
        yield from (os.path.join(path, part) for part in _PACKAGE_PARTS)
    else:
        yield path
    if os.path.isdir(path):
        for inner in _manifest_paths(path):
            if inner != path:
                yield from _named(inner, workspace)


def _with_real(paths: Iterable[str]) -> tuple[str, ...]:
    """Each path, its symlinks resolved, and every link among its parents (re-pointing
    ``tools -> real`` at another folder would make pi load that one)."""
    out: list[str] = []
    for path in paths:
        out.append(path)
        real = os.path.realpath(path)
        if real != path:
            out.append(real)
        parent = os.path.dirname(path)
        while parent not in ("/", ""):
            if os.path.islink(parent):
                out.append(parent)
            parent = os.path.dirname(parent)
    return tuple(dict.fromkeys(out))


def pi_settings_resources(
    project_dir: str | os.PathLike[str] | None,
    agent_dir: str | os.PathLike[str],
    home: str | None = None,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(code, text): the paths the project's and the user's ``settings.json`` name for pi to
    load (see the module); ``home``: what ``~`` means (default: the user's)."""
    user_home = home or os.path.expanduser("~")
    agent = os.path.abspath(os.fspath(agent_dir))
    project = os.path.abspath(os.fspath(project_dir)) if project_dir is not None else None
    workspace = (project, os.path.realpath(project)) if project is not None else ()
    files = [(Path(agent) / SETTINGS_FILE, agent)]
    if project is not None:
        files.append((Path(project) / ".pi" / SETTINGS_FILE, os.path.join(project, ".pi")))
    code: list[str] = []
    text: list[str] = []
    for file, base in files:
        settings = _load(file)
        for key in _CODE_KEYS:
            for entry in _plain(settings.get(key)):
                code += _named(_resolve(entry, base, user_home), workspace)
        for entry in _package_sources(settings.get("packages")):
            code += _named(_resolve(entry, base, user_home), workspace)
        for key in _TEXT_KEYS:
            for entry in _plain(settings.get(key)):
                text += _named(_resolve(entry, base, user_home), workspace)
    return _with_real(code), _with_real(text)
