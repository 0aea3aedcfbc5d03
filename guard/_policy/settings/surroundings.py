"""What runs outside the sandbox: the places of this machine that later run code, or decide
trust, with the user's rights; derived from this process and its environment.

These are the values of the built-in rules' *list* placeholders (a pattern naming one is
repeated for each value; an empty list drops it). Where each comes from:

* ``PATH_DIRS``: every absolute ``PATH`` entry, plus ``~/.local/bin`` and ``~/bin``, which
  Debian's ``/etc/skel/.profile`` (and systemd's file-hierarchy(7) for ``~/.local/bin``)
  put on ``PATH`` at the next login as soon as they exist;
* ``PI_INSTALLATION``: pi's package directory and the ``node_modules`` it lies in (its
  dependencies), as the pi extension reports it (:func:`note_pi_runtime`), found from the
  process that started this one where its script can be read, and from the ``pi`` on
  ``PATH``, plus ``$PI_PACKAGE_DIR``;
* ``NODE_INSTALLATION``: the Node.js that runs pi and the ``node`` on ``PATH``: the whole
  installation prefix, or for a system prefix (``/usr``) the binary and its global
  ``lib/node_modules``;
* ``GIT_USER_FILES``: ``$GIT_CONFIG_GLOBAL``, every file the user's global git config
  includes, and every path it names for a program or hooks (``core.hooksPath``,
  ``init.templateDir``, ``core.fsmonitor``, ``core.editor``, ``core.sshCommand``, …);
  git-config(1) FILES and ``includeIf``;
* ``CONFIG_HOME``, ``DATA_HOME``: ``~/.config`` and ``~/.local/share``, and
  ``$XDG_CONFIG_HOME``/``$XDG_DATA_HOME`` where set elsewhere (XDG Base Directory spec);
* ``ZDOTDIR``: ``~`` and ``$ZDOTDIR`` (zsh(1) STARTUP/SHUTDOWN FILES);
* ``CODE_CACHES``: the caches of compiled code pi loads at its next start in place of the
  source: jiti's (``<tmpdir>/jiti``: the TypeScript of every extension, the guard's shim too,
  as JavaScript, found by the file's path and taken when it ends with the source's hash)
  and Node's compile cache (``$NODE_COMPILE_CACHE``, else ``<tmpdir>/node-compile-cache``:
  pi calls ``module.enableCompileCache()``), where ``<tmpdir>`` is Node's ``os.tmpdir()``
  (``$TMPDIR``, ``$TMP``, ``$TEMP``, else ``/tmp``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from pathlib import Path

from guard._home import PI_PACKAGES
from guard._policy.settings.config import builtin_layer
from guard._policy.settings.lineage import pi_pid

__all__ = [
    "CREDENTIAL_RULES",
    "code_caches",
    "credential_files",
    "git_config_names_programs",
    "git_config_values",
    "git_program_key",
    "git_user_files",
    "node_tmpdir",
    "note_pi_runtime",
    "path_dirs",
    "pi_installation",
    "placeholder_lists",
    "runtime_stamp",
]

_SYSTEM_PREFIXES = frozenset({"/", "/usr", "/usr/local", "/opt/homebrew"})
# git keys whose value is, or starts with, a program or a directory of programs.
_GIT_PROGRAM_KEYS = re.compile(
    r"^(core\.(hookspath|fsmonitor|editor|pager|sshcommand|askpass)|init\.templatedir"
    r"|sequence\.editor|gpg(\.[a-z0-9]+)?\.program|diff\.external|credential\..*helper"
    r"|(filter|diff|merge)\..+\.(clean|smudge|process|textconv|command|driver)"
    r"|alias\..+|include(if\..+)?\.path)$"
)
_ENV_KEYS = (
    "HOME",
    "PATH",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "ZDOTDIR",
    "GIT_CONFIG_GLOBAL",
    "PI_PACKAGE_DIR",
    "TMPDIR",
    "TMP",
    "TEMP",
    "NODE_COMPILE_CACHE",
)
_MAX_INCLUDES = 16
_MAX_CONFIG_BYTES = 1 << 20


def _absolute(entries: Iterable[str]) -> list[str]:
    out: list[str] = []
    for entry in entries:
        if entry.startswith("/") and "\0" not in entry:
            out.append(os.path.normpath(entry))
    return out


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def path_dirs(env: Mapping[str, str]) -> tuple[str, ...]:
    """Every absolute ``PATH`` entry of ``env``, then ``~/.local/bin`` and ``~/bin``."""
    home = _home(env)
    found = _absolute(env.get("PATH", "").split(os.pathsep))
    found += [os.path.join(home, ".local", "bin"), os.path.join(home, "bin")]
    return _unique(found)


def _home(env: Mapping[str, str]) -> str:
    return os.path.normpath(env.get("HOME") or os.path.expanduser("~"))


def _package_root(start: str) -> str | None:
    """The pi package directory ``start`` lies in (a ``package.json`` naming pi), if any."""
    for folder in Path(start).parents:
        try:
            data = json.loads((folder / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        return str(folder) if isinstance(data, dict) and data.get("name") in PI_PACKAGES else None
    return None


def _node_modules_of(package: str) -> str | None:
    for folder in Path(package).parents:
        if folder.name == "node_modules":
            return str(folder)
    return None


def _parent_argv(pid: int) -> tuple[str | None, list[str]]:
    """The real executable and argv of process ``pid`` (Linux ``/proc``), if readable."""
    try:
        exe = os.path.realpath(f"/proc/{pid}/exe")
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None, []
    return exe, [a.decode(errors="replace") for a in argv if a]


def _is_node(exe: str, argv: list[str]) -> bool:
    names = [os.path.basename(exe), *(os.path.basename(a) for a in argv[:1])]
    return any(name.startswith("node") for name in names)


def pi_installation(env: Mapping[str, str], parent: int | None = None) -> tuple[str, ...]:
    """pi's package directories and their ``node_modules`` (see the module docstring)."""
    scripts: list[str] = []
    exe, argv = _parent_argv(pi_pid() if parent is None else parent)
    if exe is not None and _is_node(exe, argv) and len(argv) > 1:
        scripts.append(os.path.realpath(argv[1]))
    on_path = shutil.which("pi", path=env.get("PATH", ""))
    if on_path is not None:
        scripts.append(os.path.realpath(on_path))
    found: list[str] = []
    for script in scripts:
        package = _package_root(script)
        if package is None:
            continue
        found.append(package)
        modules = _node_modules_of(package)
        if modules is not None:
            found.append(modules)
    found += _absolute([env.get("PI_PACKAGE_DIR", "")])
    return _unique(found)


def _node_installation(env: Mapping[str, str], parent: int | None) -> tuple[str, ...]:
    binaries: list[str] = []
    exe, argv = _parent_argv(pi_pid() if parent is None else parent)
    if exe is not None and _is_node(exe, argv):
        binaries.append(exe)
    on_path = shutil.which("node", path=env.get("PATH", ""))
    if on_path is not None:
        binaries += [os.path.normpath(os.path.abspath(on_path)), os.path.realpath(on_path)]
    return _node_prefixes(binaries)


def _node_prefixes(binaries: Iterable[str]) -> tuple[str, ...]:
    """Each node binary, and its installation prefix (for a system prefix: its global
    ``lib/node_modules``)."""
    found: list[str] = []
    for binary in binaries:
        found.append(binary)
        folder = os.path.dirname(os.path.realpath(binary))
        if os.path.basename(folder) != "bin":
            continue
        prefix = os.path.dirname(folder)
        found.append(
            os.path.join(prefix, "lib", "node_modules") if prefix in _SYSTEM_PREFIXES else prefix
        )
    return _unique(found)


def git_config_values(path: Path) -> Iterator[tuple[str, str]]:
    """``(section.key, value)`` of a git config file, keys lower-cased (git-config(1) SYNTAX).

    Good enough to find paths: subsections keep their case, values lose their quotes,
    continuation lines are joined. Never raises for a file it cannot read.
    """
    try:
        with path.open("rb") as handle:
            text = handle.read(_MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return
    section = ""
    text = re.sub(r"\\\r?\n", "", text)
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        header = re.match(r'^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$', line)
        if header:
            name, sub, rest = header.groups()
            section = name.lower() + (f".{sub}" if sub is not None else "")
            if "." in name and sub is None:
                head, _, tail = name.partition(".")
                section = f"{head.lower()}.{tail}"
            line = rest.strip()
            if not line:
                continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        value = value.strip()
        value = re.split(r"\s[#;]", value, maxsplit=1)[0] if not value.startswith('"') else value
        yield f"{section}.{key.strip().lower()}", value.strip().strip('"')


def _path_in(value: str, home: str) -> str | None:
    word = value.strip().lstrip("!").strip().split(" ", 1)[0]
    if word.startswith("~/"):
        return os.path.normpath(home + word[1:])
    if word.startswith("/"):
        return os.path.normpath(word)
    return None


def git_program_key(key: str) -> bool:
    """Whether a git config key (``section.key``, lower-cased) names a program, hooks or
    another config file git reads (``core.fsmonitor``, a filter driver, an include …)."""
    return _GIT_PROGRAM_KEYS.match(key) is not None


def git_config_names_programs(path: Path) -> bool:
    """Whether a git config file names a program or hooks (``core.hooksPath``,
    ``core.fsmonitor``, an ``!`` alias, a filter driver, an include …)."""
    return any(git_program_key(key) for key, _ in git_config_values(path))


def git_user_files(env: Mapping[str, str]) -> tuple[str, ...]:
    """``$GIT_CONFIG_GLOBAL``, files the user's global git config includes, and the paths
    it names for programs or hooks."""
    home = _home(env)
    config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    queue = [Path(home) / ".gitconfig", Path(config_home) / "git" / "config"]
    queue += [Path(p) for p in _absolute([env.get("GIT_CONFIG_GLOBAL", "")])]
    found: list[str] = [str(p) for p in queue[2:]]
    seen: set[str] = set()
    while queue and len(seen) < _MAX_INCLUDES:
        config = queue.pop(0)
        if str(config) in seen:
            continue
        seen.add(str(config))
        for key, value in git_config_values(config):
            if not _GIT_PROGRAM_KEYS.match(key):
                continue
            if key.endswith(".path") and key.startswith("include"):
                target = value if not value.startswith("~/") else home + value[1:]
                included = Path(target) if target.startswith("/") else config.parent / target
                found.append(os.path.normpath(included))
                queue.append(included)
                continue
            named = _path_in(value, home)
            if named is not None:
                found.append(named)
    return _unique(found)


_RUNTIME: dict[str, tuple[str, ...]] = {"PI_INSTALLATION": (), "NODE_INSTALLATION": ()}


def note_pi_runtime(pi_dir: str | None, node: str | None) -> bool:
    """Record where the pi this process serves is installed, and its Node.js.

    pi renames its process (``process.title``), so its script cannot be read from
    ``/proc``: the pi extension tells the sidecar at session start. Returns whether this
    changed anything (policies loaded before must then be loaded again).
    """
    installation: list[str] = []
    if pi_dir and pi_dir.startswith("/"):
        installation.append(os.path.normpath(pi_dir))
        modules = _node_modules_of(pi_dir)
        if modules is not None:
            installation.append(modules)
    nodes = _node_prefixes([node]) if node and node.startswith("/") else ()
    before = dict(_RUNTIME)
    _RUNTIME["PI_INSTALLATION"] = _unique(installation)
    _RUNTIME["NODE_INSTALLATION"] = nodes
    return before != _RUNTIME


def runtime_stamp() -> tuple[tuple[str, ...], ...]:
    """What :func:`note_pi_runtime` recorded (a policy cache keys on it)."""
    return tuple(_RUNTIME.values())


def placeholder_lists(env: Mapping[str, str] | None = None) -> dict[str, tuple[str, ...]]:
    """The list placeholders for ``env`` (default: this process's environment)."""
    environ = dict(os.environ if env is None else env)
    key = tuple(environ.get(name, "") for name in _ENV_KEYS)
    lists = dict(_cached(key, pi_pid()))
    for name, noted in _RUNTIME.items():
        lists[name] = _unique([*noted, *lists[name]])
    return lists


@lru_cache(maxsize=8)
def _cached(key: tuple[str, ...], parent: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    env = {k: v for k, v in zip(_ENV_KEYS, key, strict=True) if v}
    home = _home(env)
    config_home = _absolute([env.get("XDG_CONFIG_HOME", "")])
    data_home = _absolute([env.get("XDG_DATA_HOME", "")])
    zdotdir = _absolute([env.get("ZDOTDIR", "")])
    lists = {
        "PATH_DIRS": path_dirs(env),
        "PI_INSTALLATION": pi_installation(env, parent),
        "NODE_INSTALLATION": _node_installation(env, parent),
        "GIT_USER_FILES": git_user_files(env),
        "CONFIG_HOME": _unique([os.path.join(home, ".config"), *config_home]),
        "DATA_HOME": _unique([os.path.join(home, ".local", "share"), *data_home]),
        "ZDOTDIR": _unique([home, *zdotdir]),
        "CODE_CACHES": code_caches(env),
    }
    return tuple(sorted(lists.items()))


def node_tmpdir(env: Mapping[str, str]) -> str:
    """Node's ``os.tmpdir()`` on POSIX for ``env``: ``$TMPDIR``, ``$TMP``, ``$TEMP``, else
    ``/tmp``, a trailing ``/`` removed."""
    tmp = next((env[k] for k in ("TMPDIR", "TMP", "TEMP") if env.get(k)), "/tmp")  # noqa: S108
    return tmp.rstrip("/") or "/"


def code_caches(env: Mapping[str, str]) -> tuple[str, ...]:
    """Where pi's Node keeps compiled code it runs at the next start instead of the source
    (see the module docstring)."""
    tmp = node_tmpdir(env)
    caches = [os.path.join(tmp, "jiti"), os.path.join(tmp, "node-compile-cache")]
    return _unique(_absolute([*caches, env.get("NODE_COMPILE_CACHE", "")]))


CREDENTIAL_RULES = (
    "builtin.ssh",
    "builtin.cloud-credentials",
    "builtin.credentials",
    "builtin.pi-auth",
)
"""The built-in rules whose paths are credentials: reading one, or a directory holding one
recursively, asks; the sandbox hides each one even where the rest of its directory is
shown."""


def credential_files(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The literal paths of :data:`CREDENTIAL_RULES` under the home, for this environment."""
    environ = dict(os.environ if env is None else env)
    home = _home(environ)
    lists = placeholder_lists(environ)
    found: list[str] = []
    for rule in builtin_layer().rules:
        if rule.id not in CREDENTIAL_RULES:
            continue
        for pattern in rule.paths:
            if any(ch in pattern for ch in "*?["):
                continue
            if pattern.startswith("~/"):
                found.append(os.path.normpath(home + pattern[1:]))
                continue
            for name in ("CONFIG_HOME", "DATA_HOME"):
                token = "${" + name + "}"
                if pattern.startswith(token):
                    found += [os.path.normpath(v + pattern[len(token) :]) for v in lists[name]]
    return _unique(found)
