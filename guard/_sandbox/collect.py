"""Gathering the sandbox's input from this machine: which paths, resolved and classified.

Every path goes through ``os.path.realpath`` (a symlink is bound at its target, where bwrap
will find it) and is classified as ``dir``, ``file``, ``other`` or ``missing``.

Writable: the workspace and the user's ``writable`` paths; a workspace that is ``/``, the
home or a parent of it is not (:mod:`guard._policy.matching.writable`).

Protected read-only: the guard's import packages (``guard``, ``audit``, ``planning``),
``sys.prefix``/``sys.exec_prefix``/``sys.base_prefix``, every site-packages directory and
every other ``sys.path`` entry of this interpreter (except the workspace itself or a parent
of it), pi's agent directory, both installed extension directories and their
``guard.json``, the project's whole ``.pi`` directory (pi loads extensions and settings from
it; it is kept absent-and-read-only when missing), the git files of the workspace that name
programs the operator's git runs later (``hooks``, ``config``, a ``core.hooksPath`` in the
workspace, submodules' too: githooks(5), git-config(1)), the bwrap binary and the shell.

The home: covered, with only :data:`HOME_TOOLS` (toolchains, package caches, git's
identity), the ``PATH`` directories under it and the user's ``readable`` paths shown
read-only (``home = "read-only"`` shows it all instead).

Hidden: the guard home (keys, keyring, ledger, audit log, the user's policy), pi's
``auth.json`` and ``models.json`` (API keys), the credential files of the built-in
credential rules, the user's runtime directory (``/run/user/<uid>``: the D-Bus session bus
would let ``systemd-run --user`` start a process outside the sandbox; ssh/gpg agents live
there) and the user's ``hidden`` paths.

Removed from the environment: the guard's variables and :data:`CREDENTIAL_ENV` (plus the
user's ``unset_env``, minus ``keep_env``).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import os
import site
import stat
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from guard._hermetic import ProgramNotFound, system_program
from guard._home import (
    CACHES_DIR,
    CONFIG_FILE,
    ENV_PREFIX,
    EXTENSION_DIR_NAME,
    OLD_ENV_PREFIX,
    pi_agent_dir,
)
from guard._policy import (
    CONFIG_FILE_NAME,
    SandboxSettings,
    credential_files,
    git_config_values,
    known_homes,
    pi_settings_resources,
    placeholder_lists,
    too_wide,
    worktree_hook_files,
)
from guard._sandbox.argv import TMP, is_within
from guard._sandbox.model import (
    CacheMount,
    MountPath,
    OverlayInput,
    ProxyInput,
    SandboxInput,
)

__all__ = [
    "BWRAP_CANDIDATES",
    "CREDENTIAL_ENV",
    "HOME_TOOLS",
    "OUR_PACKAGES",
    "PACKAGE_CACHES",
    "collect_input",
    "credential_env_names",
    "find_bwrap",
    "git_protected",
    "guard_env_names",
    "home_view",
    "install_paths",
    "package_caches",
    "resolve",
]

BWRAP_CANDIDATES = ("/usr/bin/bwrap", "/bin/bwrap", "/usr/local/bin/bwrap")
OUR_PACKAGES = ("guard", "audit", "planning")
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
    """The bwrap to use: the user's ``bwrap`` setting, else the first system location.

    Never ``PATH``: a ``bwrap`` the agent could place earlier on it would be the sandbox.
    """
    if configured:
        return os.path.expanduser(configured)
    for candidate in BWRAP_CANDIDATES:
        if os.access(candidate, os.X_OK):
            return candidate
    return BWRAP_CANDIDATES[0]


def guard_env_names(env: Mapping[str, str]) -> tuple[str, ...]:
    """Variables that point at the guard (``PI_OPERATOR_GUARD_*``, old ``PI_GUARD_*``)."""
    return tuple(sorted(n for n in env if n.startswith((ENV_PREFIX, OLD_ENV_PREFIX))))


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


HOME_TOOLS: tuple[str, ...] = (
    # git's identity and settings (git-config(1) FILES); credentials inside stay hidden
    ".gitconfig",
    ".config/git",
    # toolchains and their installations
    ".rustup",
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".nvm",
    ".volta",
    ".fnm",
    ".pyenv",
    ".rbenv",
    ".asdf",
    ".sdkman",
    ".deno",
    ".bun",
    ".npm-global",
    ".yarn",
    "go",
    ".local/bin",
    ".local/lib",
    ".local/share/pipx",
    ".local/pipx",
    ".local/share/uv",
    ".local/share/mise",
    ".local/share/fnm",
    ".local/share/pnpm",
    # package caches (read-only: a cache the agent could write is one the operator reads)
    ".npm",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
    ".cache/pip",
    ".cache/uv",
    ".cache/go-build",
    ".cache/yarn",
    ".cache/pnpm",
    ".cache/node-gyp",
    ".cache/pypoetry",
    ".cache/pre-commit",
    ".cache/ms-playwright",
)
"""What the sandbox shows of the covered home, relative to it (read-only, where it exists)."""

PACKAGE_CACHES: tuple[str, ...] = (
    ".npm",  # npm (npm-config cache)
    ".cache/pip",  # pip
    ".cache/uv",  # uv
    ".cargo",  # cargo: registry, git, and the .package-cache lock at its root
    "go",  # go: pkg/mod (GOMODCACHE), bin
    ".cache/go-build",  # go build cache (GOCACHE)
    ".m2",  # maven: repository
    ".gradle",  # gradle: caches, wrapper
    ".cache/yarn",  # yarn 1
    ".yarn",  # yarn berry's global cache
    ".cache/pnpm",  # pnpm metadata
    ".local/share/pnpm",  # pnpm store
)
"""Package caches under the home that commands may write, privately to the project: each
one inside the sandbox is the user's cache with the project's own writes over it, so an
install reuses what is there and the user's own cache never changes."""

CREDENTIAL_ENV: tuple[str, ...] = (
    "PGPASSWORD",
    "PGPASSFILE",
    "PGSERVICEFILE",
    "MYSQL_PWD",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DATABASE_URL",
    "KRB5CCNAME",
    "DOCKER_AUTH_CONFIG",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "NETRC",
    "AWS_*",
    "AZURE_*",
    "*_TOKEN",
    "*_TOKENS",
    "*_API_KEY",
    "*_APIKEY",
    "*_SECRET",
    "*_SECRETS",
    "*_SECRET_*",
    "*_PASSWORD",
    "*_PASSWD",
    "*_PASSPHRASE",
    "*_CREDENTIALS",
    "*_PRIVATE_KEY",
    "*_ACCESS_KEY",
    "*_ACCESS_KEY_ID",
    "*_DATABASE_URL",
    "*_DSN",
    "NPM_CONFIG__AUTH*",
    "OTEL_EXPORTER_OTLP_*HEADERS",
)
"""Variables removed from the agent's commands (names or globs, any case): passwords,
tokens, API keys, cloud credentials, agent sockets."""

_GENERIC_PARENTS = (".local",)
_MAX_NESTED_SCAN = 4096


def package_caches(
    user_home: str, guard_home: str | os.PathLike[str], workspace: str, layers: str
) -> tuple[CacheMount, ...]:
    """The package caches a command may write, each private to this project.

    :data:`PACKAGE_CACHES` under the user's home; the project's store is
    ``<guard home>/caches/<project>/<n>``, the staging directory is in the session's
    directory (beside ``layers``). A cache the user does not have shows an empty directory.
    """
    if user_home in ("", "/"):
        return ()
    project = hashlib.sha256(os.fsencode(workspace)).hexdigest()[:20]
    stores = os.path.join(os.path.realpath(guard_home), CACHES_DIR)
    staging = os.path.join(os.path.dirname(layers), "stage")
    out: list[CacheMount] = []
    for index, rel in enumerate(PACKAGE_CACHES):
        target = os.path.join(user_home, rel)
        real = os.path.realpath(target)
        lower = real if os.path.isdir(real) and is_within(real, user_home) else ""
        out.append(
            CacheMount(
                target=target,
                lower=lower or os.path.join(stores, "empty"),
                store=os.path.join(stores, project, str(index)),
                staging=os.path.join(staging, str(index)),
            )
        )
    return tuple(out)


def credential_env_names(
    names: Iterable[str], extra: Iterable[str] = (), keep: Iterable[str] = ()
) -> tuple[str, ...]:
    """Which of ``names`` to remove: :data:`CREDENTIAL_ENV` and ``extra``, not ``keep``."""
    patterns = [p.upper() for p in (*CREDENTIAL_ENV, *extra)]
    kept = [p.upper() for p in keep]
    out = []
    for name in names:
        upper = name.upper()
        if any(fnmatch.fnmatchcase(upper, p) for p in kept):
            continue
        if any(fnmatch.fnmatchcase(upper, p) for p in patterns):
            out.append(name)
    return tuple(sorted(set(out)))


def git_protected(workspace: str) -> list[tuple[str, bool]]:
    """The workspace's git files that name programs, each with "keep it absent if missing".

    For the workspace and each directory directly in it that holds a repository (a clone
    the agent made): ``.git`` (a directory, or a ``gitdir:`` file and its common
    directory): ``hooks``, ``config``, ``config.worktree``; every submodule's under
    ``modules``; and a ``core.hooksPath`` that lies in the work tree (githooks(5): relative
    to the work tree). A missing ``hooks`` directory is kept absent (the agent cannot create
    one), a missing file is not (git then reads nothing). Repositories deeper down are the
    effects review's (docs/threat-model.md, "What runs outside the sandbox").
    """
    out: list[tuple[str, bool]] = []
    for worktree in [workspace, *_nested_worktrees(workspace)]:
        out += _worktree_git_files(worktree)
    return list(dict.fromkeys(out))


def _nested_worktrees(workspace: str) -> list[str]:
    found: list[str] = []
    try:
        entries = list(os.scandir(workspace))
    except OSError:
        return found
    for entry in entries[:_MAX_NESTED_SCAN]:
        if entry.name in (".git", "node_modules"):
            continue
        try:
            if entry.is_dir(follow_symlinks=False) and os.path.lexists(
                os.path.join(entry.path, ".git")
            ):
                found.append(entry.path)
        except OSError:
            continue
    return found


def _worktree_git_files(worktree: str) -> list[tuple[str, bool]]:
    dot = os.path.join(worktree, ".git")
    gitdirs: list[str] = []
    out: list[tuple[str, bool]] = []
    if os.path.isdir(dot) and not os.path.islink(dot):
        gitdirs.append(dot)
    elif os.path.isfile(dot):
        out.append((dot, False))  # its "gitdir:" line picks the hooks the operator's git runs
        gitdirs += _gitfile_dirs(dot, worktree)
    elif os.path.islink(dot):
        gitdirs.append(os.path.realpath(dot))
    for gitdir in gitdirs:
        out += _gitdir_files(gitdir)
        for hooks_path in _hooks_paths(os.path.join(gitdir, "config"), worktree):
            out.append((hooks_path, True))
        modules = os.path.join(gitdir, "modules")
        for root, dirs, files in os.walk(modules):
            if root.count("/") - modules.count("/") > 6:
                dirs[:] = []
                continue
            if "config" in files or "HEAD" in files:
                out += _gitdir_files(root)
    return out


def _gitfile_dirs(dot: str, workspace: str) -> list[str]:
    try:
        with open(dot, encoding="utf-8", errors="replace") as handle:
            text = handle.read(4096)
    except OSError:
        return []
    if not text.startswith("gitdir:"):
        return []
    gitdir = os.path.join(workspace, text[len("gitdir:") :].strip())
    found = [os.path.realpath(gitdir)]
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            common = handle.read(4096).strip()
        found.append(os.path.realpath(os.path.join(gitdir, common)))
    except OSError:
        pass
    return found


def _gitdir_files(gitdir: str) -> list[tuple[str, bool]]:
    out = [(os.path.join(gitdir, "hooks"), True), (os.path.join(gitdir, "config"), False)]
    worktree = os.path.join(gitdir, "config.worktree")
    if os.path.lexists(worktree):
        out.append((worktree, False))
    return out


def _hooks_paths(config: str, workspace: str) -> list[str]:
    out = []
    for key, value in git_config_values(Path(config)):
        if key != "core.hookspath" or not value:
            continue
        path = os.path.expanduser(value)
        out.append(os.path.normpath(os.path.join(workspace, path)))
    return out


def _expand(path: str, home: str) -> str:
    """``~`` at the start of ``path`` is ``home`` (the environment's, not this process's)."""
    return home + path[1:] if path == "~" or path.startswith("~/") else path


def _links_to(path: str, home: str) -> tuple[list[tuple[str, str]], str]:
    """The symlinks met on the way from ``home`` to ``path``, and where it really is."""
    links: list[tuple[str, str]] = []
    current = home
    parts = [p for p in os.path.relpath(path, home).split("/") if p not in ("", ".")]
    for index, part in enumerate(parts):
        step = os.path.join(current, part)
        if os.path.islink(step):
            try:
                links.append((step, os.readlink(step)))
            except OSError:
                break
            current = os.path.realpath(step)
            if not is_within(current, home):
                return links, os.path.realpath(os.path.join(current, *parts[index + 1 :]))
        else:
            current = step
    return links, os.path.realpath(current)


def home_view(
    home: str, env: Mapping[str, str], settings: SandboxSettings
) -> tuple[list[MountPath], list[tuple[str, str]]]:
    """What the covered ``home`` shows: the paths bound read-only, and the links among them.

    :data:`HOME_TOOLS`, the ``PATH`` directories under the home (with the prefix a ``bin``
    or ``shims`` directory belongs to, ``~/.cargo`` for ``~/.cargo/bin``), the files the
    user's git config includes and the user's ``readable`` paths.
    """
    lists = placeholder_lists(env)
    wanted = [os.path.join(home, p) for p in HOME_TOOLS]
    wanted += [os.path.join(c, "git") for c in lists["CONFIG_HOME"]]
    for entry in lists["PATH_DIRS"]:
        if not is_within(entry, home) or entry == home:
            continue
        wanted.append(entry)
        parent = os.path.dirname(entry)
        generic = parent == home or os.path.relpath(parent, home) in _GENERIC_PARENTS
        if os.path.basename(entry) in ("bin", "shims") and not generic:
            wanted.append(parent)
    wanted += lists["GIT_USER_FILES"]
    wanted += [_expand(p, home) for p in settings.readable]
    exposed: dict[str, MountPath] = {}
    links: dict[str, str] = {}
    for path in wanted:
        path = os.path.normpath(path)
        if not is_within(path, home) or not os.path.lexists(path):
            continue
        met, real = _links_to(path, home)
        links.update(met)
        if is_within(real, home):
            shown = resolve(real)
            if shown.kind != "missing":
                exposed.setdefault(shown.path, shown)
    return list(exposed.values()), sorted(links.items())


def _ancestors_within(paths: Iterable[str], roots: Iterable[str]) -> list[MountPath]:
    """The existing directories strictly between a root and each path inside it."""
    found: dict[str, MountPath] = {}
    for path in paths:
        for root in roots:
            if path == root or not is_within(path, root):
                continue
            parent = os.path.dirname(path)
            while parent != root and is_within(parent, root):
                if parent not in found and os.path.isdir(parent) and not os.path.islink(parent):
                    found[parent] = MountPath(path=parent, kind="dir")
                parent = os.path.dirname(parent)
    return list(found.values())


def _code_caches(environ: Mapping[str, str], settings: SandboxSettings) -> list[str]:
    """jiti's and Node's caches of compiled code, which pi runs at its next start in place of
    the source (the guard's shim too), wherever a command could reach them: under the host's
    ``/tmp`` when the sandbox shows it (``tmp = "host"``), or a ``$TMPDIR`` or
    ``$NODE_COMPILE_CACHE`` elsewhere. Read-only there; one not made yet is made first (mode
    0700, as pi would make it for itself), since a read-only mount needs something to bind
    and one the agent made would be taken by pi as its own."""
    caches: list[str] = []
    for cache in placeholder_lists(environ)["CODE_CACHES"]:
        if settings.tmp != "host" and is_within(cache, TMP):
            continue  # the sandbox's own /tmp hides the host's
        with contextlib.suppress(OSError):  # not ours to make: bound if it exists
            os.makedirs(cache, mode=0o700, exist_ok=True)
        caches.append(cache)
    return caches


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
    env_names: Iterable[str] = (),
    layers: str | None = None,
    session_tmp: str | None = None,
    proxy_socket: str | None = None,
) -> SandboxInput:
    """The sandbox's input for an agent working in ``workspace`` with guard home ``home``.

    ``env`` is the environment the agent's commands start from (default: this process's);
    its ``HOME`` is the user's home. ``env_names`` are more variable names that environment
    may hold (pi's own, as the shim saw them). ``layers``: where each command's layer goes
    (the effects review); without it commands write the workspace directly.
    ``proxy_socket``: the allowlist proxy's socket (``allowlist`` mode; without it the
    commands' network is empty, as in ``off``).
    """
    environ = dict(os.environ if env is None else env)
    ws = resolve(workspace)
    user_home = resolve(environ.get("HOME") or os.path.expanduser("~"))
    ws_writable = too_wide(ws.path, user_home.path) is None
    agent = Path(agent_dir) if agent_dir is not None else pi_agent_dir()
    project_pi = Path(ws.path) / ".pi"

    read_only = [
        entry
        for entry in _resolved(install_paths())
        # The sidecar's own working directory may be on sys.path; never the workspace itself.
        if entry.path != "/" and not is_within(ws.path, entry.path) and entry.kind != "missing"
    ]
    keep_absent = {os.path.realpath(project_pi)}
    git_files = git_protected(ws.path)
    keep_absent.update(os.path.realpath(p) for p, absent in git_files if absent)
    # Hooks that live in the work tree (husky, lefthook, pre-commit): read-only where they are.
    # One still missing is not kept absent (bwrap would leave an empty directory of that name
    # in the workspace, which breaks the operator's git): the effects review holds it.
    hook_files = worktree_hook_files(ws.path)
    # What pi's settings name for it to load (extensions, local packages, skills …), outside
    # .pi too: read-only where it is; one still missing is held by the effects review.
    code, text = pi_settings_resources(ws.path, agent, user_home.path)
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
        *(path for path, _ in git_files),
        *hook_files,
        *code,
        *text,
        *_code_caches(environ, settings),
        *extra_read_only,
    ]
    can_write = os.access(ws.path, os.W_OK) and ws_writable
    for entry in _resolved(protected):
        # A protected directory that is missing stays absent: an empty read-only directory
        # (bwrap creates its mount point, so only where the workspace can be written at all).
        missing_kept = entry.path in keep_absent and can_write and is_within(entry.path, ws.path)
        if entry.kind != "missing" or missing_kept:
            read_only.append(entry)

    uid = os.getuid()
    hidden_paths: list[str | os.PathLike[str]] = [home, f"/run/user/{uid}"]
    runtime = environ.get("XDG_RUNTIME_DIR")
    if runtime and runtime.startswith("/"):
        hidden_paths.append(runtime)
    hidden_paths += [agent / name for name in _SECRET_AGENT_FILES]
    hidden_paths += list(settings.hidden)
    # Every other guard home this user's guard opened (never one that holds the workspace;
    # one under /tmp only where the host's /tmp is shown: the sandbox's own hides it, and a
    # temporary home that is gone before a command ran would make bwrap refuse to start).
    hidden_paths += [
        h
        for h in known_homes()
        if not is_within(ws.path, h) and (settings.tmp == "host" or not is_within(h, TMP))
    ]
    hidden_paths += list(credential_files(environ))
    hidden = [h for h in _resolved(hidden_paths) if h.kind != "missing"]

    covered: MountPath | None = None
    exposed: list[MountPath] = []
    links: list[tuple[str, str]] = []
    if settings.home == "read-only" and user_home.kind == "dir":
        covered = user_home
    elif user_home.kind == "dir" and user_home.path != "/":
        covered = user_home
        exposed, links = home_view(user_home.path, environ, settings)
        # Inside the covered home only what is shown again needs hiding.
        shown = (
            [e.path for e in exposed] + [ws.path] + [w.path for w in _resolved(settings.writable)]
        )
        hidden = [
            h
            for h in hidden
            if not is_within(h.path, user_home.path) or any(is_within(h.path, p) for p in shown)
        ]

    names = set(environ) | set(env_names)
    unset = set(guard_env_names(dict.fromkeys(names, "")))
    unset |= set(credential_env_names(names, settings.unset_env, settings.keep_env))

    writable = _resolved(settings.writable)
    roots = [w.path for w in writable if w.kind == "dir"] + ([ws.path] if ws_writable else [])
    pinned = _ancestors_within([e.path for e in (*read_only, *hidden)], roots)

    overlay = None
    if settings.effects == "review" and ws_writable and layers is not None:
        try:
            overlay = OverlayInput(
                caches=package_caches(user_home.path, home, ws.path, layers),
                layers=layers,
                unshare=system_program("unshare"),
                mount=system_program("mount"),
                uid=os.getuid(),
                gid=os.getgid(),
            )
        except ProgramNotFound:
            overlay = None  # plan() says why the effects review is off

    return SandboxInput(
        bwrap=os.path.realpath(find_bwrap(bwrap or settings.bwrap)),
        shell=shell,
        workspace=ws,
        workspace_writable=ws_writable,
        writable=tuple(writable),
        read_only=tuple(read_only),
        pinned=tuple(pinned),
        home=covered,
        home_mode=settings.home,
        exposed=tuple(exposed),
        links=tuple(links),
        hidden=tuple(hidden),
        tmp=settings.tmp if settings.tmp != "session" or session_tmp else "private",
        tmp_source=session_tmp if settings.tmp == "session" else None,
        network=settings.network.mode,
        proxy=_proxy(settings, proxy_socket),
        unset_env=tuple(sorted(unset)),
        overlay=overlay,
    )


def _proxy(settings: SandboxSettings, socket: str | None) -> ProxyInput | None:
    """The bridge to the allowlist proxy: the system's Perl (it starts fastest), else its
    Python, else the guard's own (which may live under the hidden home)."""
    if settings.network.mode != "allowlist" or socket is None:
        return None
    for name in ("perl", "python3"):
        try:
            return ProxyInput(socket=socket, bridge=system_program(name))
        except ProgramNotFound:
            continue
    return ProxyInput(socket=socket, bridge=os.path.realpath(sys.executable))
