"""The OS sandbox around every agent shell command (bubblewrap on Linux).

``model`` (typed input and results), ``argv`` (the pure argv builder and POSIX quoting),
``collect`` (which paths of this machine are writable, protected or hidden), ``probe`` (can
bwrap start here), ``plan`` (one session's state and prefix; the spawn hook's transform),
``explain`` (a failed command's output read for the sandbox's part in it).

The face is eager (its ``plan`` and ``probe`` share their modules' names, which a lazy face
cannot export), so it leaves out what only one caller needs and would cost every other one:
``doctor`` (``pi-guard doctor`` alone) and ``proxy`` (the sidecar's network proxy, on asyncio)
are imported by name, as ``tests/test_layers.py``'s allow-list says.
"""

from __future__ import annotations

from guard._sandbox.argv import build_argv, shell_prefix, shell_quote, wrap_command
from guard._sandbox.collect import collect_input, find_bwrap
from guard._sandbox.explain import explain_network, explain_output
from guard._sandbox.model import (
    MountPath,
    ProbeResult,
    SandboxInput,
    SandboxPlan,
    SandboxState,
    SpawnContext,
)
from guard._sandbox.plan import effective_settings, filter_env, plan, spawn, workspace_stamp
from guard._sandbox.probe import probe

__all__ = [
    "MountPath",
    "ProbeResult",
    "SandboxInput",
    "SandboxPlan",
    "SandboxState",
    "SpawnContext",
    "build_argv",
    "collect_input",
    "effective_settings",
    "explain_network",
    "explain_output",
    "filter_env",
    "find_bwrap",
    "plan",
    "probe",
    "shell_prefix",
    "shell_quote",
    "spawn",
    "workspace_stamp",
    "wrap_command",
]
