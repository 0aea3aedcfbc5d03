"""Give a freshly installed shim the compiled form pi's extension loader made of the same
source before, so a test session does not load Babel to make it again.

pi loads an extension's TypeScript through jiti, which keeps the JavaScript it makes in
``<tmpdir>/jiti`` under a name that holds a hash of the file's path, and takes that file in
place of the source when it ends with a hash of the source (jiti 2.x ``getCache``: the name
``<directory>-<stem>.<md5(path)[:8]>.mjs``, the marker ``/* v9-<md5(source)[:16]> */``).
An operator's pi finds its shim there from the second start on; every test world installs
the shim under a new path, so each of its pi sessions loaded Babel and compiled the shim
again: about 0.6 CPU-seconds of a session's 1.1. The compiled text is the same for the same
source wherever it lies, so a copy under the new path's name is what jiti would write.

Only an entry whose marker matches the installed source is copied; with another jiti (a
new cache version, another hash) nothing matches and pi compiles as it always did.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

from guard._policy.settings.surroundings import node_tmpdir

__all__ = ["seed_jiti_cache"]

_VERSION = "9"  # jiti's cache version (``Ti`` in jiti 2.7's dist/jiti.cjs)
_NEWEST = 64  # entries of one module looked at, newest first
_seen: dict[tuple[Path, str, bytes], bytes] = {}


def _md5(data: bytes) -> str:
    return hashlib.md5(data, usedforsecurity=False).hexdigest()


def seed_jiti_cache(extension_dir: Path, env: Mapping[str, str] | None = None) -> int:
    """Copy jiti's compiled form of each ``*.ts`` in ``extension_dir`` to the name jiti will
    look for; returns how many were copied (0 when none of the same source exists yet)."""
    cache = Path(node_tmpdir(os.environ if env is None else env)) / "jiti"
    if not cache.is_dir():
        return 0
    copied = 0
    for source in sorted(extension_dir.glob("*.ts")):
        real = os.path.realpath(source)
        prefix = f"{os.path.basename(os.path.dirname(real))}-{source.stem}."
        target = cache / f"{prefix}{_md5(real.encode())[:8]}.mjs"
        marker = f" /* v{_VERSION}-{_md5(source.read_bytes())[:16]} */\n".encode()
        if target.exists():
            continue
        text = _seen.get((cache, prefix, marker)) or _find(cache, prefix, marker)
        if text is None:
            continue
        _seen[(cache, prefix, marker)] = text
        partial = target.with_name(f".{target.name}.{os.getpid()}")
        try:
            partial.write_bytes(text)
            os.replace(partial, target)  # a pi starting meanwhile never reads half of it
        except OSError:  # not ours to write: pi compiles the shim, as it always did
            with contextlib.suppress(OSError):
                partial.unlink(missing_ok=True)
            continue
        copied += 1
    return copied


def _find(cache: Path, prefix: str, marker: bytes) -> bytes | None:
    entries = []
    for entry in os.scandir(cache):
        if entry.name.startswith(prefix) and entry.name.endswith(".mjs"):
            try:
                entries.append((entry.stat().st_mtime, entry.path))
            except OSError:
                continue
    for _, path in sorted(entries, reverse=True)[:_NEWEST]:
        try:
            text = Path(path).read_bytes()
        except OSError:
            continue
        if text.endswith(marker):
            return text
    return None
