"""One session's sandbox: the user's settings, the probe, and the prefix every command gets.

:func:`plan` is what the sidecar answers when the shim asks at session start; pi's bash
spawn hook is synchronous, so it cannot ask per call: it applies :func:`spawn` (in the shim:
the same string concatenation) to every command. ``pi-guard sandbox run/argv/check`` use
the same two functions.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from guard._errors import BadInputError, SandboxUnavailableError
from guard._hermetic import minimal_env, run
from guard._home import ANCHOR_ENV, ENV_PREFIX, OLD_ENV_PREFIX
from guard._policy import (
    CONFIG_FILE_NAME,
    TOO_WIDE_HINT,
    ConfigProblem,
    LayerName,
    SandboxSettings,
    load_layers,
    too_wide,
)
from guard._sandbox.argv import (
    TMP,
    build_argv,
    is_within,
    layer_tail,
    overlay_tail,
    overlay_wrapper,
    shell_prefix,
    wrap_command,
)
from guard._sandbox.collect import (
    CREDENTIAL_ENV,
    collect_input,
    credential_env_names,
    git_protected,
    guard_env_names,
)
from guard._sandbox.model import (
    LAYER_ENV,
    MountPath,
    ProbeResult,
    SandboxInput,
    SandboxPlan,
    SpawnContext,
)
from guard._sandbox.probe import probe

__all__ = ["effective_settings", "filter_env", "overlay_probe", "plan", "spawn", "workspace_stamp"]

Prober = Callable[[str], ProbeResult]


def effective_settings(
    home: Path, workspace: Path | None
) -> tuple[SandboxSettings, LayerName, tuple[ConfigProblem, ...]]:
    """``[sandbox]`` from the user's policy file (a project file's table is refused)."""
    merged = load_layers(home, workspace)
    problems = tuple(p for p in merged.problems if p.key.startswith("sandbox"))
    return merged.sandbox, merged.sandbox_from, problems


def filter_env(
    env: Mapping[str, str],
    unset: Iterable[str] = (),
    *,
    globs: Iterable[str] = CREDENTIAL_ENV,
    keep: Iterable[str] = (),
) -> dict[str, str]:
    """``env`` without the guard's variables, ``unset`` and the credentials ``globs`` name
    (unless ``keep`` names them)."""
    drop = set(unset) | set(guard_env_names(env))
    drop |= set(credential_env_names(env, tuple(globs), tuple(keep)))
    drop.discard(LAYER_ENV)  # read by the prefix's shell, removed by bwrap inside
    return {k: v for k, v in env.items() if k not in drop}


def _notes(inp: SandboxInput, settings: SandboxSettings) -> tuple[str, ...]:
    notes = [
        f"writable path {w.path} does not exist: not mounted"
        for w in inp.writable
        if w.kind == "missing"
    ]
    covering = [
        r.path
        for r in inp.read_only
        if r.kind != "missing" and is_within(inp.workspace.path, r.path)
    ]
    if covering:
        notes.append(
            f"the workspace lies inside {covering[0]}, which the sandbox keeps read-only: "
            "the agent's commands cannot write it"
        )
    if sys.path and sys.path[0] and not sys.flags.safe_path:
        first = os.path.realpath(sys.path[0])
        if is_within(first, inp.workspace.path):
            notes.append(
                "this Python imports from the workspace first (sys.path[0]); start the "
                "sidecar with python -P (or -I) so files the agent writes cannot shadow it"
            )
    if os.path.islink(os.path.join(inp.workspace.path, ".pi")):
        notes.append(
            "the project's .pi is a symlink: its target is read-only, but the link itself lies "
            "in the writable workspace and could be replaced; make .pi a real directory"
        )
    network = settings.network
    if network.mode == "open":
        notes.append(
            'the network is the host\'s ([sandbox.network] mode = "off" or "allowlist" limits it)'
        )
    elif network.mode == "allowlist" and inp.proxy is None:
        notes.append("network allowlist: no proxy runs for this session, so nothing is reachable")
    elif network.mode == "allowlist":
        shown = ", ".join(network.allow[:8]) + (" …" if len(network.allow) > 8 else "")
        notes.append(f"network: only through the guard's proxy, to {shown or 'no host'}")
    else:
        notes.append("network: off (the command has a network of its own, empty)")
    return tuple(notes)


def plan(
    cwd: str | os.PathLike[str],
    home: Path,
    *,
    settings: SandboxSettings | None = None,
    settings_from: LayerName = "builtin",
    env: Mapping[str, str] | None = None,
    bwrap: str | None = None,
    shell: str = "/bin/bash",
    extra_read_only: Iterable[str] = (),
    agent_dir: str | os.PathLike[str] | None = None,
    prober: Prober = probe,
    env_names: Iterable[str] = (),
    layers: str | None = None,
    session_tmp: str | None = None,
    proxy_socket: str | None = None,
) -> SandboxPlan:
    """The sandbox for an agent working in ``cwd``: sandboxed, opted out, or unavailable.

    ``settings`` default to the user's policy file in ``home``. Never raises for an
    environment that cannot sandbox: that is ``state="unavailable"`` with the probe's
    reason. A ``cwd`` that is not a directory is the caller's error (:class:`BadInputError`).
    """
    environ = dict(os.environ if env is None else env)
    workspace = os.path.realpath(os.fspath(cwd))
    if not os.path.isdir(workspace):
        raise BadInputError("cwd", "is not a directory", os.fspath(cwd))
    if settings is None:
        settings, settings_from, _ = effective_settings(home, Path(workspace))
    anchor = environ.get(ENV_PREFIX + ANCHOR_ENV) or environ.get(OLD_ENV_PREFIX + ANCHOR_ENV)
    if anchor:
        # Checkpoints kept outside the home are the evidence of a rollback: the agent
        # must neither read nor rewrite them.
        hidden = os.path.abspath(os.path.expanduser(anchor))
        settings = settings.model_copy(update={"hidden": (*settings.hidden, hidden)})
    names = set(environ) | set(env_names)
    unset = tuple(
        sorted(
            set(guard_env_names(dict.fromkeys(names, "")))
            | set(credential_env_names(names, settings.unset_env, settings.keep_env))
        )
    )
    globs = (*CREDENTIAL_ENV, *settings.unset_env)
    user_file = home / CONFIG_FILE_NAME
    if settings.mode == "off":
        return SandboxPlan(
            state="unsandboxed",
            reason="opted-out",
            message=f'sandbox off: [sandbox] mode = "off" in {user_file}; '
            "the agent's commands run unsandboxed",
            cwd=workspace,
            unset_env=unset,
            unset_globs=globs,
            keep_env=settings.keep_env,
            settings_from=settings_from,
        )
    # The model reads the message (every blocked bash call's result); only the operator is
    # told how to opt out (``fix``): the model is never told how to switch the guard off.
    blocked = "; the agent's bash is blocked until this is fixed"
    fix = f'or set [sandbox] mode = "off" in {user_file} to run the agent\'s bash unsandboxed'
    if session_tmp and settings.tmp == "session":
        try:
            os.makedirs(session_tmp, mode=0o700, exist_ok=True)
        except OSError:
            session_tmp = None  # the per-command /tmp then
    inp = collect_input(
        workspace,
        home,
        settings,
        env=environ,
        bwrap=bwrap,
        shell=shell,
        extra_read_only=extra_read_only,
        agent_dir=agent_dir,
        env_names=env_names,
        layers=layers,
        session_tmp=session_tmp,
        proxy_socket=proxy_socket,
    )
    writable_roots = [w.path for w in inp.writable if w.kind != "missing"]
    if inp.workspace_writable:
        writable_roots.append(inp.workspace.path)
    if settings.tmp == "host":
        writable_roots.append(TMP)
    if any(is_within(inp.bwrap, root) for root in writable_roots):
        return SandboxPlan(
            state="unavailable",
            fix=fix,
            reason="bwrap-writable",
            message=f"{inp.bwrap} lies in a path the agent can write, so it could be "
            "replaced" + blocked,
            cwd=workspace,
            unset_env=unset,
            unset_globs=globs,
            keep_env=settings.keep_env,
            settings_from=settings_from,
        )
    probed = prober(inp.bwrap)
    if not probed.ok:
        return SandboxPlan(
            state="unavailable",
            fix=fix,
            reason=probed.status,
            message=probed.message + blocked,
            cwd=workspace,
            unset_env=unset,
            unset_globs=globs,
            keep_env=settings.keep_env,
            settings_from=settings_from,
        )
    effects_note = None
    if inp.overlay is not None:
        try:
            for cache in inp.overlay.caches:
                for path in (cache.store, cache.staging, cache.lower):
                    os.makedirs(path, mode=0o700, exist_ok=True)
        except OSError:  # the caches stay read-only then; the workspace's layer still works
            inp = inp.model_copy(update={"overlay": inp.overlay.model_copy(update={"caches": ()})})
        effects_note = overlay_probe(inp)
        if effects_note is not None:
            inp = inp.model_copy(update={"overlay": None})
    elif settings.effects == "review" and inp.workspace_writable and layers is not None:
        effects_note = "unshare or mount not found in the system directories"
    try:
        argv = build_argv(inp)
        wrapper = overlay_wrapper(inp)
    except BadInputError as exc:
        return SandboxPlan(
            state="unavailable",
            fix=fix,
            reason="workspace-hidden",
            message=f"{exc}: the guard home or another hidden path contains it" + blocked,
            cwd=workspace,
            unset_env=unset,
            unset_globs=globs,
            keep_env=settings.keep_env,
            settings_from=settings_from,
        )
    message = f"agent commands run in bubblewrap ({probed.version or inp.bwrap})"
    if not inp.workspace_writable:
        narrowed = too_wide(inp.workspace.path, environ.get("HOME")) or "the workspace is too wide"
        message += f"; {narrowed}, so it is read-only: {TOO_WIDE_HINT}"
    notes = _notes(inp, settings)
    if effects_note is not None:
        notes += (
            f"the effects review is off: {effects_note}; commands write the workspace "
            "directly and only the analysis before a call asks",
        )
    overlay = inp.overlay
    return SandboxPlan(
        state="sandboxed",
        message=message,
        cwd=workspace,
        workspace_writable=inp.workspace_writable,
        prefix=shell_prefix(argv, wrapper, overlay_tail(inp)),
        argv=(*wrapper, f"${{{LAYER_ENV}-}}", *overlay_tail(inp), *argv) if wrapper else argv,
        cache_stores=tuple(c.store for c in overlay.caches) if overlay else (),
        network=settings.network.mode,
        network_allow=settings.network.allow if inp.proxy else (),
        proxy_socket=inp.proxy.socket if inp.proxy else None,
        unset_env=unset,
        effects="review" if overlay else "off",
        layers=overlay.layers if overlay else None,
        mount_points=tuple(e.path for e in inp.read_only if e.kind == "missing"),
        unset_globs=globs,
        keep_env=settings.keep_env,
        settings_from=settings_from,
        notes=notes,
    )


def overlay_probe(inp: SandboxInput) -> str | None:
    """Why a copy-on-write layer cannot be mounted here (``None``: it can).

    Makes the layers directory (private to the user) and mounts one overlay over a scratch
    directory in it, as every command will: a user namespace, a mount namespace, overlayfs
    with ``userxattr`` (Linux >= 5.11).
    """
    overlay = inp.overlay
    if overlay is None:
        return "no overlay planned"
    try:
        os.makedirs(overlay.layers, mode=0o700, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix="probe-", dir=overlay.layers)
    except OSError as exc:
        return f"cannot make {overlay.layers}: {exc.strerror or exc}"
    try:
        lower = os.path.join(scratch, "lower")
        os.mkdir(lower)
        probe_input = inp.model_copy(update={"workspace": MountPath(path=lower, kind="dir")})
        wrapper = overlay_wrapper(probe_input)
        script = 'test -e "$1/.probe" || exit 3'
        tail = layer_tail(overlay.mount, lower)
        argv = [*wrapper, "probe", *tail, "/bin/sh", "-c", script, "sh", lower]
        with open(os.path.join(lower, ".probe"), "w"):
            pass
        done = run(argv, env=minimal_env(), timeout=10)
        if done.returncode != 0:
            detail = done.stderr.decode(errors="replace").strip().splitlines()
            return f"an overlay cannot be mounted here ({(detail or ['no output'])[-1][:200]})"
        return None
    except (OSError, subprocess.SubprocessError, BadInputError) as exc:
        return f"an overlay cannot be mounted here ({exc})"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def workspace_stamp(cwd: str | os.PathLike[str]) -> tuple[tuple[str, bool, bool], ...]:
    """What of the workspace the plan depends on and may change under it: its git files.

    A repository the agent creates (``git init``) or re-points (a ``.git`` file) changes
    this; the sidecar then plans again, so the next command gets its hooks read-only.
    """
    workspace = os.path.realpath(os.fspath(cwd))
    return tuple(
        (path, keep_absent, os.path.lexists(path)) for path, keep_absent in git_protected(workspace)
    )


def spawn(session: SandboxPlan, context: SpawnContext) -> SpawnContext:
    """What pi's bash spawn hook returns for ``context`` under ``session``.

    Sandboxed: the command wrapped in the session's prefix. Unsandboxed: the command as
    it is. Both drop the guard's variables from the environment. Unavailable: raises
    :class:`SandboxUnavailableError` (the command must not run). A ``cwd`` other than the
    session's is refused: the prefix binds the session's workspace only.
    """
    env = filter_env(
        context.env, session.unset_env, globs=session.unset_globs, keep=session.keep_env
    )
    if session.state == "unavailable":
        raise SandboxUnavailableError(session.reason or "start-failed", session.message)
    if session.state == "unsandboxed" or session.prefix is None:
        return SpawnContext(command=context.command, cwd=context.cwd, env=env)
    if os.path.realpath(context.cwd) != session.cwd:
        raise BadInputError(
            "cwd", f"differs from the sandboxed workspace {session.cwd}", context.cwd
        )
    return SpawnContext(
        command=wrap_command(session.prefix, context.command), cwd=context.cwd, env=env
    )
