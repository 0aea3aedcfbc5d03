"""Which pi and which Node.js this machine has: read-only probes with short timeouts.

A pi is found as a ``pi`` executable (on ``PATH``, or named by the caller) and as the
globally installed npm packages (``npm root -g``). Its version and the Node.js it needs
(``engines.node``) come from the package's ``package.json``; when no ``package.json`` can be
found next to the executable, ``pi --version`` is asked. Nothing here fails when pi, Node or
npm are missing: the results say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from pydantic import BaseModel

from audit.wire import WIRE_CONFIG
from guard._hermetic import SYSTEM_PATH, minimal_env
from guard._home import PI_PACKAGES
from guard._pi.trust import TRUST_INTRODUCED

NEWEST_TESTED = (1, 6, 0)
"""The newest pi the guard is tested with end to end (tools/pi/current pins it; a test keeps
them equal). A newer pi may bring tools the guard does not know: those ask by default."""


NEWEST_TESTED_NODE = ">=22.19.0"
"""What :data:`NEWEST_TESTED` asks of Node.js (its ``engines.node``): the pi ``doctor`` assumes
when it finds none (a test keeps it equal to the pinned package's)."""


def newer_than_tested(version: str | None) -> bool:
    """Whether ``version`` is a pi newer than :data:`NEWEST_TESTED` (unknown: not said)."""
    parsed = parse_version(version)
    return parsed is not None and tuple(parsed) > NEWEST_TESTED


__all__ = [
    "NEWEST_TESTED",
    "NEWEST_TESTED_NODE",
    "PI_PACKAGES",
    "NodeFound",
    "PiFound",
    "find_node",
    "find_pis",
    "newer_than_tested",
    "node_satisfies",
    "parse_version",
]

PROBE_TIMEOUT_SECONDS = 15.0
_VERSION = re.compile(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?")

Version = tuple[int, int, int]


class PiFound(BaseModel):
    """One pi: where, which package and version, and what Node.js it asks for.

    ``project_trust`` is whether this version gates project resources behind trust
    (``None`` when the version is unknown).
    """

    model_config = WIRE_CONFIG

    path: str
    package: str | None
    version: str | None
    node_requirement: str | None
    project_trust: bool | None


class NodeFound(BaseModel):
    """The ``node`` on ``PATH`` (the one pi's ``#!/usr/bin/env node`` runs with)."""

    model_config = WIRE_CONFIG

    path: str | None
    version: str | None


def parse_version(text: str | None) -> Version | None:
    """The first ``X.Y.Z`` in ``text`` (``X`` or ``X.Y`` count as ``X.0.0``, ``X.Y.0``)."""
    match = _VERSION.search(text or "")
    if match is None:
        return None
    return (int(match[1]), int(match[2] or 0), int(match[3] or 0))


def node_satisfies(node_version: str, requirement: str) -> bool | None:
    """Whether ``node_version`` meets an ``engines.node`` range; ``None`` if not understood.

    Understood: ``>=X.Y.Z`` (what pi has always declared), optionally with more
    space-separated ``>=`` / ``<`` bounds.
    """
    have = parse_version(node_version)
    if have is None:
        return None
    bounds = requirement.split()
    if not bounds:
        return None
    for bound in bounds:
        op = ">=" if bound.startswith(">=") else "<" if bound.startswith("<") else None
        want = parse_version(bound)
        if op is None or want is None:
            return None
        if (op == ">=" and have < want) or (op == "<" and have >= want):
            return False
    return True


def _run(argv: list[str], *, keep_home: bool = False) -> str | None:
    """Run a program of the user's (``pi``, ``node``, ``npm``: the ones pi would use) to read
    its version: by absolute path, with a minimal environment (guard/_hermetic.py), so
    ``NODE_OPTIONS`` and the like set for it cannot run anything; its own directory first on
    ``PATH`` (``#!/usr/bin/env node``). ``keep_home``: ``npm`` reads its prefix from
    ``~/.npmrc``."""
    extra = {"PATH": os.pathsep.join([os.path.dirname(argv[0]), SYSTEM_PATH])}
    if keep_home:
        extra["HOME"] = os.path.expanduser("~")
    try:
        done = subprocess.run(
            [os.path.abspath(argv[0]), *argv[1:]],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env=minimal_env(extra),
            cwd=os.path.expanduser("~") if keep_home else None,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return (done.stdout.strip() or done.stderr.strip()) or None


def _package_of(executable: Path) -> Path | None:
    """The ``package.json`` of the pi package an executable belongs to, if any."""
    try:
        real = executable.resolve(strict=True)
    except OSError:
        return None
    for folder in real.parents:
        candidate = folder / "package.json"
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("name") in PI_PACKAGES:
            return candidate
    return None


def _from_package(path: str, package_json: Path) -> PiFound:
    data = json.loads(package_json.read_text(encoding="utf-8"))
    version = data.get("version") if isinstance(data.get("version"), str) else None
    engines = data.get("engines")
    node = engines.get("node") if isinstance(engines, dict) else None
    return _found(path, data.get("name"), version, node if isinstance(node, str) else None)


def _found(path: str, package: str | None, version: str | None, node: str | None) -> PiFound:
    parsed = parse_version(version)
    return PiFound(
        path=path,
        package=package,
        version=version,
        node_requirement=node,
        project_trust=None if parsed is None else parsed >= TRUST_INTRODUCED,
    )


def _probe_executable(executable: Path) -> PiFound:
    package_json = _package_of(executable)
    if package_json is not None:
        try:
            return _from_package(str(executable), package_json)
        except (OSError, ValueError):
            pass
    version = parse_version(_run([str(executable), "--version"]))
    text = None if version is None else ".".join(map(str, version))
    return _found(str(executable), None, text, None)


def _global_packages() -> list[Path]:
    npm = shutil.which("npm")
    root = _run([npm, "root", "-g"], keep_home=True) if npm is not None else None
    if root is None:
        return []
    found = []
    for name in PI_PACKAGES:
        candidate = Path(root.splitlines()[-1]) / name / "package.json"
        if candidate.is_file():
            found.append(candidate)
    return found


def find_pis(explicit: Path | None = None, *, search_npm: bool = True) -> tuple[PiFound, ...]:
    """The pi named by ``explicit``, else the ``pi`` on ``PATH`` and the npm-global packages.

    Each package is listed once (an executable that belongs to a package found as a global
    package is the same pi).
    """
    if explicit is not None:
        return (_probe_executable(explicit),)
    found: list[PiFound] = []
    seen: set[str] = set()
    on_path = shutil.which("pi")
    if on_path is not None:
        package_json = _package_of(Path(on_path))
        if package_json is not None:
            seen.add(os.path.realpath(package_json))
        found.append(_probe_executable(Path(on_path)))
    for package_json in _global_packages() if search_npm else []:
        if os.path.realpath(package_json) in seen:
            continue
        seen.add(os.path.realpath(package_json))
        try:
            found.append(_from_package(str(package_json.parent), package_json))
        except (OSError, ValueError):
            continue
    return tuple(found)


def find_node() -> NodeFound:
    """The ``node`` on ``PATH`` and its version (``node --version``)."""
    node = shutil.which("node")
    if node is None:
        return NodeFound(path=None, version=None)
    version = parse_version(_run([node, "--version"]))
    return NodeFound(path=node, version=None if version is None else ".".join(map(str, version)))
