"""The sandbox's typed shapes: what goes into the bwrap argv, and what a probe or a plan says.

Everything that reaches :func:`guard._sandbox.argv.build_argv` is already resolved (real
paths, and what each path is on disk), so building the argv touches nothing and is a pure
function of a :class:`SandboxInput`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from audit.wire import WIRE_CONFIG
from guard._home import LAYER_ENV

__all__ = [
    "LAYER_ENV",
    "CacheMount",
    "MountPath",
    "OverlayInput",
    "PathKind",
    "ProbeResult",
    "ProbeStatus",
    "ProxyInput",
    "SandboxInput",
    "SandboxPlan",
    "SandboxState",
    "SpawnContext",
]

PathKind = Literal["dir", "file", "other", "missing"]
"""What a resolved path is on disk: only existing paths can be mounted or covered."""

ProbeStatus = Literal[
    "ok",
    "missing-binary",
    "not-executable",
    "unsupported-platform",
    "userns-unavailable",
    "start-failed",
    "timeout",
    "bwrap-writable",
]
"""Reason codes of :class:`ProbeResult` (``ok`` when the sandbox can start)."""

SandboxState = Literal["sandboxed", "unsandboxed", "unavailable"]
"""``sandboxed``: every agent command runs in bwrap. ``unsandboxed``: the user's policy
opted out (``[sandbox] mode = "off"``). ``unavailable``: the sandbox cannot start and the
policy requires it, so the agent's bash is blocked (fail closed)."""


class MountPath(BaseModel):
    """One real (symlink-resolved, absolute) path and what it is."""

    model_config = WIRE_CONFIG

    path: str = Field(min_length=1)
    kind: PathKind


class CacheMount(BaseModel):
    """One package cache a command may write, privately to the project.

    Inside the sandbox ``target`` (``~/.npm``) shows ``store`` (the project's own cache,
    kept across sessions) over ``lower`` (the user's cache, or an empty directory), with the
    command's writes on top; the sidecar moves them into ``store`` when the command ends.
    ``staging``: where the command's namespace mounts that view for bwrap to bind.
    """

    model_config = WIRE_CONFIG

    target: str = Field(min_length=1)
    lower: str = Field(min_length=1)
    store: str = Field(min_length=1)
    staging: str = Field(min_length=1)


class OverlayInput(BaseModel):
    """The copy-on-write layer every command writes the workspace through.

    ``layers``: the directory each command's layer is made in (``<layers>/<id>``, the id
    from :data:`LAYER_ENV`, set per command by the shim); ``unshare`` and ``mount``: the
    system programs that make the user and mount namespace and mount the overlay;
    ``uid``/``gid``: who the command runs as inside (the user's own ids).
    """

    model_config = WIRE_CONFIG

    layers: str = Field(min_length=1)
    unshare: str = Field(min_length=1)
    mount: str = Field(min_length=1)
    uid: int
    gid: int
    caches: tuple[CacheMount, ...] = ()


class ProxyInput(BaseModel):
    """The way out of an ``allowlist`` sandbox: the guard's proxy socket (bound read-only
    inside) and the interpreter that runs the bridge to it (the system's Perl, else a
    Python; see ``argv.bridge_argv``)."""

    model_config = WIRE_CONFIG

    socket: str = Field(min_length=1)
    bridge: str = Field(min_length=1)


class SandboxInput(BaseModel):
    """Everything the argv depends on, resolved.

    * ``workspace``: the agent's working directory, read-write (also ``--chdir``);
    * ``writable``: extra read-write paths, from the user's policy only;
    * ``read_only``: the guard's installation (packages, venv, site-packages), the installed
      extension directories and ``guard.json`` files, the project's ``.pi`` directory, the
      workspace's git hooks and config, pi's agent directory and the bwrap binary: re-bound
      read-only after every writable bind (a missing one is kept absent);
    * ``home``: the user's home; ``home_mode`` ``hidden`` covers it by an empty tmpfs
      (read-only once every mount in it is made), ``exposed`` are shown in it read-only,
      and ``links`` are the symlinks among them, made again (``(path, target)``) so they
      resolve as on the host; ``read-only`` binds it whole, read-only;
    * ``workspace_writable``: false for a workspace that is ``/``, the home or a parent of
      it (it is then only what the rest of the plan shows, read-only);
    * ``hidden``: covered by an empty read-only tmpfs (a directory) or ``/dev/null`` (a
      file) after everything else: the guard home, pi's credentials, the user's runtime dir,
      credential files inside what is shown;
    * ``pinned``: the directories between a writable root and a protected or hidden path in
      it, bound onto themselves so they cannot be renamed away (``.git`` above its hooks);
    * ``tmp``: ``private`` mounts an empty tmpfs on ``/tmp``; ``host`` binds the host's;
      ``session`` binds ``tmp_source``, the session's own directory (hidden from the agent
      under its real name), which lasts from command to command;
    * ``network``: ``open`` keeps the host network; ``off`` gives the command an empty
      network namespace and covers ``/run`` (the host's Unix sockets: docker, D-Bus,
      PostgreSQL); ``allowlist`` does the same and adds ``proxy``, the one way out;
    * ``unshare_user``: use a user namespace (and forbid nested ones inside);
    * ``unset_env``: variables bwrap removes (the ones that point at the guard).
    """

    model_config = WIRE_CONFIG

    bwrap: str = Field(min_length=1)
    shell: str = Field(default="/bin/bash", min_length=1)
    workspace: MountPath
    workspace_writable: bool = True
    writable: tuple[MountPath, ...] = ()
    read_only: tuple[MountPath, ...] = ()
    home: MountPath | None = None
    home_mode: Literal["hidden", "read-only"] = "hidden"
    exposed: tuple[MountPath, ...] = ()
    links: tuple[tuple[str, str], ...] = ()
    hidden: tuple[MountPath, ...] = ()
    pinned: tuple[MountPath, ...] = ()
    tmp: Literal["private", "host", "session"] = "private"
    tmp_source: str | None = None
    network: Literal["open", "off", "allowlist"] = "open"
    proxy: ProxyInput | None = None
    unshare_user: bool = True
    unset_env: tuple[str, ...] = ()
    overlay: OverlayInput | None = None


class ProbeResult(BaseModel):
    """Whether bwrap exists and can start a sandbox here; ``message`` is one line."""

    model_config = WIRE_CONFIG

    ok: bool
    status: ProbeStatus
    bwrap: str | None
    version: str | None = None
    message: str


class SandboxPlan(BaseModel):
    """What the shim needs for one session: the state and, when sandboxed, the prefix.

    ``fix``: for the operator only (never in what the model reads): how to opt out when the
    sandbox cannot start.

    The spawn hook builds every command as ``prefix + " " + shell_quote(command)`` (see
    :func:`guard._sandbox.argv.wrap_command`) and removes ``unset_env`` from the
    environment. ``argv`` is the same prefix as a list (without the command).
    ``unset_globs`` and ``keep_env`` are the rule those names came from (the credential
    list plus the user's additions, and the user's exceptions), for an environment whose
    names were not known when planning. ``effects``: ``review`` when every command writes
    the workspace through a layer in ``layers`` (the environment must then name one in
    :data:`LAYER_ENV`), ``off`` when it writes the workspace directly. ``mount_points``:
    directories the plan itself makes (to keep a protected path absent), which are no
    effect of a command. ``network``: the commands' network mode, and ``network_allow``
    the hosts an ``allowlist`` lets through the proxy at ``proxy_socket``.
    """

    model_config = WIRE_CONFIG

    state: SandboxState
    reason: ProbeStatus | Literal["opted-out", "workspace-hidden"] | None = None
    workspace_writable: bool = True
    message: str
    fix: str | None = None
    cwd: str
    prefix: str | None = None
    argv: tuple[str, ...] | None = None
    unset_env: tuple[str, ...] = ()
    effects: Literal["review", "off"] = "off"
    layers: str | None = None
    mount_points: tuple[str, ...] = ()
    cache_stores: tuple[str, ...] = ()
    network: Literal["open", "off", "allowlist"] = "open"
    network_allow: tuple[str, ...] = ()
    proxy_socket: str | None = None
    unset_globs: tuple[str, ...] = ()
    keep_env: tuple[str, ...] = ()
    settings_from: Literal["builtin", "user", "project"] = "builtin"
    notes: tuple[str, ...] = ()


class SpawnContext(BaseModel):
    """pi's bash spawn context: ``{command, cwd, env}``, in and out of the spawn hook."""

    model_config = WIRE_CONFIG

    command: str
    cwd: str
    env: dict[str, str]
