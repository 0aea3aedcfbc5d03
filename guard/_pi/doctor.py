"""``pi-guard doctor [DIR]``: will the guard load, and guard, for a pi session in DIR?

Each wing checks its own part and returns a :class:`~guard._checks.Check` (a ``status``:
``ok``, ``warn``, ``fail`` or ``n/a``; a kebab-case ``reason``; a ``detail`` in words and,
when something can be done, the ``fix``): pi and the installs in :mod:`guard._pi.checks`, the
home in :mod:`guard._home`, the signing key in :mod:`guard._evidence.doctor`, the audit log in
:mod:`guard._evidence.anchors`, the sandbox in :mod:`guard._sandbox.doctor` (given by the
caller: the sandbox stands above pi's layer). :func:`diagnose` assembles them; the report's
``decision`` is ``ready`` only when no check failed (warnings do not fail it).

Checks, in order: ``pi`` (the versions found), ``node`` (does it satisfy each pi's
``engines.node``), ``installs`` (global, project, package; which of them load; duplicates),
``trust`` (pi's project-trust decision for DIR; it only matters when the guard is installed
for the project alone), then per install ``config`` (``guard.json``) and ``python`` (runs
and imports the guard), then per home ``home``, ``key``, ``audit`` (the log verifies
against the home's keyring) and ``sandbox`` (can the agent's commands in DIR be sandboxed;
an opted-out session is a warning that names it ``unsandboxed``).

Read-only: nothing is created, not even a home (``Guard.open`` would create one and a key);
the only processes started are ``pi --version``/``npm root -g``/``node --version`` when
needed and ``<python> -I -c "import guard"`` (isolated, as the sidecar runs), each with a
short timeout.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from audit.wire import WIRE_CONFIG
from guard._checks import Check, CheckName, CheckStatus
from guard._evidence import check_audit, check_key
from guard._home import check_home, resolve_home
from guard._pi.checks import (
    check_config,
    check_installs,
    check_mcp,
    check_node,
    check_packages,
    check_pi,
    check_policy,
    check_python,
    check_shim,
    check_trust,
    loads,
)
from guard._pi.install import ExtensionConfig
from guard._pi.layout import InstallLocation, find_installs
from guard._pi.probe import NodeFound, PiFound, find_node, find_pis
from guard._pi.trust import TrustDecision
from guard._telemetry import check_telemetry

__all__ = ["Check", "CheckName", "CheckStatus", "DoctorReport", "SandboxCheck", "diagnose"]


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class DoctorReport(_Wire):
    """Everything ``doctor`` found for ``directory``; ``decision`` is ``ready`` only when
    no check failed."""

    directory: str
    agent_dir: str
    decision: Literal["ready", "not-ready"]
    pis: tuple[PiFound, ...]
    node: NodeFound
    installs: tuple[InstallLocation, ...]
    loading: tuple[InstallLocation, ...]
    trust: TrustDecision | None
    checks: tuple[Check, ...]

    def render(self) -> str:
        failed = sum(1 for c in self.checks if c.status == "fail")
        verdict = (
            "the guard will load and guard here"
            if self.decision == "ready"
            else f"the guard will NOT guard here ({failed} problem{'s' if failed != 1 else ''})"
        )
        lines = [f"pi-guard doctor: {self.directory}: {verdict}"]
        for check in self.checks:
            label = {"ok": "ok", "warn": "WARN", "fail": "FAIL", "n/a": "n/a"}[check.status]
            about = f" [{check.subject}]" if check.subject else ""
            lines.append(f"  {label:<4}  {check.name:<8} {check.detail}{about} ({check.reason})")
            if check.fix and check.status in ("warn", "fail"):
                lines.append(f"        fix: {check.fix}")
        return "\n".join(lines)


# -- all together --------------------------------------------------------------------------


SandboxCheck = Callable[[Path, Path, Path], Check]
"""``(directory, home, agent_dir) -> Check``: will the agent's bash there be sandboxed?"""


def _home_of(config: ExtensionConfig | None, home: Path | None) -> Path:
    if config is not None and config.home is not None:
        return resolve_home(config.home)
    return resolve_home(home)


def diagnose(
    directory: Path,
    *,
    agent_dir: Path,
    home: Path | None = None,
    pi: Path | None = None,
    search_npm: bool = True,
    sandbox_check: SandboxCheck | None = None,
    warm_check: Callable[[Path], Check] | None = None,
) -> DoctorReport:
    """Run every check for a pi session in ``directory`` (see the module docstring).

    ``home`` stands in for the default home of installs whose ``guard.json`` names none;
    ``pi`` checks that pi only instead of searching ``PATH`` and the npm-global packages.
    ``sandbox_check(directory, home, agent_dir)`` is the sandbox's own check, given by the
    caller (the sandbox stands above pi's layer, so it is not imported here);
    ``warm_check(home)`` the warm start's (``guard._warm``, above this layer too).
    """
    folder = directory.absolute()
    pis = find_pis(pi, search_npm=search_npm)
    node = find_node()
    installs = find_installs(folder, agent_dir)
    trust_check, trust = check_trust(folder, agent_dir, installs, pis)
    loading = tuple(i for i in installs if loads(i, trust, pis))
    checks = [check_pi(pis), check_node(node, pis), check_installs(installs, loading), trust_check]
    checks.append(check_packages(folder if folder.is_dir() else None, agent_dir))
    homes: list[Path] = []
    for location in installs:
        if location.directory is None:
            continue
        config_check, config = check_config(location)
        checks.extend((check_shim(location), config_check))
        if config is not None:
            checks.append(check_python(location, config))
        chosen = _home_of(config, home)
        if chosen not in homes:
            homes.append(chosen)
    if not homes:
        homes.append(_home_of(None, home))
    for chosen in homes:
        home_check = check_home(chosen)
        checks.append(home_check)
        if home_check.status != "fail":
            checks.append(check_policy(chosen))
            checks.append(check_telemetry(chosen))
        if home_check.status != "fail" and home_check.reason != "created-on-first-use":
            key_check, keyring = check_key(chosen)
            checks.append(key_check)
            checks.append(check_audit(chosen, keyring))
        if sandbox_check is not None and folder.is_dir() and home_check.status != "fail":
            # From the very first run: a fresh install's home does not exist yet, but the
            # agent's bash would still be blocked where the sandbox cannot start.
            checks.append(sandbox_check(folder, chosen, agent_dir))
        if warm_check is not None and home_check.status != "fail":
            checks.append(warm_check(chosen))
    if folder.is_dir():
        checks.append(check_mcp(folder, homes[0], agent_dir))
    failed = any(c.status == "fail" for c in checks)
    return DoctorReport(
        directory=str(folder),
        agent_dir=str(agent_dir),
        decision="not-ready" if failed else "ready",
        pis=pis,
        node=node,
        installs=installs,
        loading=loading,
        trust=trust,
        checks=tuple(checks),
    )
