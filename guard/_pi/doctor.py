"""``pi-guard doctor [DIR]``: will the guard load, and guard, for a pi session in DIR?

Each check is a small function returning a :class:`Check`: a ``status`` (``ok``, ``warn``,
``fail`` or ``n/a``), a kebab-case ``reason``, a ``detail`` in words and, when something
can be done, the ``fix``. :func:`diagnose` runs them all; the report's ``decision`` is
``ready`` only when no check failed (warnings do not fail it).

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

import os
import stat
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from audit import WIRE_CONFIG, AuditError, verify_log
from guard._anchors import anchor_dir, latest_anchor
from guard._errors import KeyFileError, KeyringError, PiFileError
from guard._evidence.keys import KeyStore, PublicKeyring
from guard._guard import AUDIT_LOG_FILE
from guard._hermetic import minimal_env
from guard._home import resolve_home
from guard._pi.install import ExtensionConfig, Target, install_command
from guard._pi.layout import CONFIG_FILE, InstallLocation, find_installs
from guard._pi.probe import NodeFound, PiFound, find_node, find_pis, node_satisfies
from guard._pi.trust import TrustDecision, project_trust

__all__ = ["Check", "CheckName", "CheckStatus", "DoctorReport", "SandboxCheck", "diagnose"]

CheckStatus = Literal["ok", "warn", "fail", "n/a"]
CheckName = Literal[
    "pi", "node", "installs", "trust", "config", "python", "home", "key", "audit", "sandbox"
]
PYTHON_TIMEOUT_SECONDS = 20.0


class _Wire(BaseModel):
    model_config = WIRE_CONFIG


class Check(_Wire):
    """One check: what it looked at (``subject``), how it came out and why."""

    name: CheckName
    subject: str | None = None
    status: CheckStatus
    reason: str
    detail: str
    fix: str | None = None


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


# -- pi and node ---------------------------------------------------------------------------


def _describe(pi: PiFound) -> str:
    name = pi.package or "pi"
    return f"{name} {pi.version or '(version unknown)'} at {pi.path}"


def check_pi(pis: Sequence[PiFound]) -> Check:
    """Which pi versions exist; none found is a warning (it may be run some other way)."""
    if not pis:
        return Check(
            name="pi",
            status="warn",
            reason="pi-not-found",
            detail="no pi on PATH and no npm-global pi package; the checks below assume the"
            " current pi (with project trust)",
            fix="install pi (npm install -g @earendil-works/pi-coding-agent) or pass --pi PATH",
        )
    found = "; ".join(_describe(pi) for pi in pis)
    if any(pi.version is None for pi in pis):
        return Check(name="pi", status="warn", reason="pi-version-unknown", detail=found)
    return Check(name="pi", status="ok", reason="pi-found", detail=found)


def check_node(node: NodeFound, pis: Sequence[PiFound]) -> Check:
    """Whether the ``node`` on PATH satisfies every pi found."""
    if node.path is None or node.version is None:
        return Check(
            name="node",
            status="fail" if pis else "warn",
            reason="node-not-found",
            detail="no working node on PATH: pi cannot start",
            fix="install Node.js (pi's package.json says which version)",
        )
    have = f"node {node.version} at {node.path}"
    unknown = []
    for pi in pis:
        if pi.node_requirement is None:
            unknown.append(_describe(pi))
            continue
        if node_satisfies(node.version, pi.node_requirement) is False:
            return Check(
                name="node",
                status="fail",
                reason="node-too-old",
                detail=f"{_describe(pi)} needs node {pi.node_requirement}; {have}",
                fix=f"install Node.js {pi.node_requirement} and put it first on PATH",
            )
    if unknown:
        return Check(
            name="node",
            status="warn",
            reason="node-requirement-unknown",
            detail=f"{have}; not known what {', '.join(unknown)} needs",
        )
    return Check(name="node", status="ok", reason="node-ok", detail=have)


# -- installs and trust --------------------------------------------------------------------


def _where(location: InstallLocation) -> str:
    text = f"{location.kind} {location.directory or location.source}"
    return text + (f" (listed in {location.settings})" if location.settings else "")


def _trust_applies(pis: Sequence[PiFound]) -> bool:
    """False only when every pi found is known to predate project trust."""
    return not pis or any(pi.project_trust is not False for pi in pis)


def loads(location: InstallLocation, trust: TrustDecision | None, pis: Sequence[PiFound]) -> bool:
    """Whether pi loads this copy in a print/JSON/RPC session (where nobody is asked)."""
    if location.scope == "personal" or not _trust_applies(pis):
        return True
    return trust is not None and trust.decision == "trusted"


def check_installs(
    installs: Sequence[InstallLocation], loading: Sequence[InstallLocation]
) -> Check:
    """At least one copy, exactly one of them loading."""
    if not installs:
        return Check(
            name="installs",
            status="fail",
            reason="no-install",
            detail="no copy of the guard's pi extension for this folder",
            fix="pi-guard install",
        )
    found = "; ".join(_where(i) for i in installs)
    if not loading:
        return Check(
            name="installs",
            status="fail",
            reason="none-loads",
            detail=f"found {found}, but pi skips all of them here (see trust)",
            fix="pi-guard install  (personal: loads in every folder)",
        )
    if len(loading) > 1:
        return Check(
            name="installs",
            status="warn",
            reason="duplicate-installs",
            detail=f"{len(loading)} copies load (the first guards, the others stand down):"
            f" {'; '.join(_where(i) for i in loading)}",
            fix="keep one: remove the others with pi-guard install --uninstall and their target",
        )
    return Check(name="installs", status="ok", reason="one-install", detail=_where(loading[0]))


def check_trust(
    directory: Path,
    agent_dir: Path,
    installs: Sequence[InstallLocation],
    pis: Sequence[PiFound],
) -> tuple[Check, TrustDecision | None]:
    """pi's trust decision for ``directory``; a failure only when it keeps the only copies out."""
    try:
        decision: TrustDecision | None = project_trust(directory, agent_dir)
        problem = None
    except PiFileError as exc:
        decision, problem = None, str(exc)
    said = "" if decision is None else f"{decision.decision}: {decision.source}"
    if not _trust_applies(pis):
        versions = ", ".join(pi.version or "?" for pi in pis)
        return Check(
            name="trust",
            status="n/a",
            reason="pi-has-no-project-trust",
            detail=f"pi {versions} has no project trust: project extensions always load",
        ), decision
    if not any(i.scope == "project" for i in installs):
        return Check(
            name="trust", status="n/a", reason="no-project-install", detail=said or "-"
        ), decision
    if any(i.scope == "personal" for i in installs):
        return Check(
            name="trust",
            status="n/a",
            reason="personal-install-loads",
            detail=f"a personal copy loads whatever the trust; project: {said or problem}",
        ), decision
    fix = (
        f"trust {directory} in pi's TUI, run pi with --approve, or install for every folder:"
        " pi-guard install"
    )
    if decision is None:
        return Check(
            name="trust",
            status="fail",
            reason="trust-store-unreadable",
            detail=f"pi cannot read its trust store either: {problem}",
            fix="repair or remove the file named",
        ), None
    if decision.decision == "trusted":
        return Check(name="trust", status="ok", reason="trusted", detail=said), decision
    if decision.decision == "untrusted":
        return Check(
            name="trust",
            status="fail",
            reason="untrusted",
            detail=f"{said}: pi skips this folder's extensions, the guard is not loaded",
            fix=fix,
        ), decision
    return Check(
        name="trust",
        status="fail",
        reason="trust-not-decided",
        detail=f"{said}: the TUI asks; print, JSON and RPC modes skip the guard silently",
        fix=fix,
    ), decision


# -- per install: guard.json and its python ------------------------------------------------


def _target(location: InstallLocation) -> Target:
    if location.kind == "package":
        return "package"
    return "project" if location.kind == "project" else "global"


def check_config(location: InstallLocation) -> tuple[Check, ExtensionConfig | None]:
    """``guard.json`` of an install: present and valid."""
    assert location.directory is not None
    folder = Path(location.directory)
    path = folder / CONFIG_FILE
    fix = install_command(_target(location), folder)
    try:
        data = path.read_bytes()
    except OSError as exc:
        return Check(
            name="config",
            subject=str(path),
            status="fail",
            reason="config-missing" if isinstance(exc, FileNotFoundError) else "config-unreadable",
            detail=f"cannot read {CONFIG_FILE}: {exc.strerror}",
            fix=fix,
        ), None
    try:
        config = ExtensionConfig.model_validate_json(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(map(str, error["loc"])) or "(top)"
        return Check(
            name="config",
            subject=str(path),
            status="fail",
            reason="config-invalid",
            detail=f"{CONFIG_FILE} is not a valid configuration: {where}: {error['msg']}",
            fix=f"{fix}  (rewrites it; the broken copy is kept as {CONFIG_FILE}.corrupt)",
        ), None
    return Check(
        name="config", subject=str(path), status="ok", reason="config-valid", detail="valid"
    ), config


def check_python(location: InstallLocation, config: ExtensionConfig) -> Check:
    """The install's Python starts and imports the guard (the sidecar is ``-m guard serve``)."""
    fix = f"{install_command(_target(location), Path(location.directory or '.'))}"
    fix += "  (run with the Python that has pi-operator-guard installed)"
    python = config.python
    if not os.path.isfile(python) or not os.access(python, os.X_OK):
        return Check(
            name="python",
            subject=python,
            status="fail",
            reason="python-not-found",
            detail="the Python named in guard.json does not exist or is not executable",
            fix=fix,
        )
    try:
        done = subprocess.run(
            [python, "-I", "-c", "import guard"],
            capture_output=True,
            text=True,
            timeout=PYTHON_TIMEOUT_SECONDS,
            check=False,
            stdin=subprocess.DEVNULL,
            env=minimal_env(),
            cwd=minimal_env()["HOME"],
        )
    except subprocess.TimeoutExpired:
        return Check(
            name="python",
            subject=python,
            status="fail",
            reason="python-timeout",
            detail=f"`import guard` took longer than {PYTHON_TIMEOUT_SECONDS:.0f} s",
            fix=fix,
        )
    except OSError as exc:
        return Check(
            name="python",
            subject=python,
            status="fail",
            reason="python-not-runnable",
            detail=f"cannot run it: {exc.strerror}",
            fix=fix,
        )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return Check(
            name="python",
            subject=python,
            status="fail",
            reason="guard-not-importable",
            detail=f"`import guard` fails: {last}",
            fix=fix,
        )
    return Check(
        name="python", subject=python, status="ok", reason="imports-guard", detail="imports guard"
    )


# -- per home: home, key, audit --------------------------------------------------------------


def check_home(home: Path) -> Check:
    """The home exists and is usable, or can be created by the sidecar on first use."""
    subject = str(home)
    if not home.exists():
        parent = next((p for p in home.parents if p.exists()), Path("/"))
        if parent.is_dir() and os.access(parent, os.W_OK | os.X_OK):
            return Check(
                name="home",
                subject=subject,
                status="ok",
                reason="created-on-first-use",
                detail="does not exist yet; the sidecar creates it (mode 0700) on first use",
            )
        return Check(
            name="home",
            subject=subject,
            status="fail",
            reason="home-cannot-be-created",
            detail=f"does not exist and {parent} is not writable",
            fix="create it (mode 0700) or set home in guard.json",
        )
    if not home.is_dir():
        return Check(
            name="home",
            subject=subject,
            status="fail",
            reason="home-not-a-directory",
            detail="exists but is not a directory",
            fix="move it away or set another home in guard.json",
        )
    info = home.stat()
    if info.st_uid != os.getuid() or not os.access(home, os.W_OK | os.X_OK):
        return Check(
            name="home",
            subject=subject,
            status="fail",
            reason="home-not-writable",
            detail="owned by another user or not writable: the sidecar cannot use it",
            fix="fix its owner and permissions (yours, mode 0700)",
        )
    mode = stat.S_IMODE(info.st_mode)
    if mode & 0o077:
        return Check(
            name="home",
            subject=subject,
            status="warn",
            reason="home-mode-loose",
            detail=f"mode {mode:04o}: the sidecar tightens it to 0700 when it opens it",
            fix=f"chmod 700 {home}",
        )
    return Check(name="home", subject=subject, status="ok", reason="home-usable", detail="usable")


def check_key(home: Path) -> tuple[Check, PublicKeyring | None]:
    """The signing key loads (read-only) and the keyring it signed verifies and lists it.

    The keyring handed on (for the audit check) is the one the key signed, or, when there
    is no key yet, the file as an auditor would use it.
    """
    subject = str(home)
    store = KeyStore(home)  # not KeyStore.open: that creates the home

    def fail(reason: str, detail: str, fix: str) -> Check:
        return Check(
            name="key", subject=subject, status="fail", reason=reason, detail=detail, fix=fix
        )

    keyring_fix = (
        "restore keyring.json from a copy (it is public: an auditor may have one); an "
        "unsigned keyring from an older version: check `pi-guard keys list`, then "
        "`pi-guard keygen --trust-keyring`"
    )
    if not store.key_path.exists() and not store.key_path.is_symlink():
        if not store.keyring_path.exists():
            return Check(
                name="key",
                subject=subject,
                status="ok",
                reason="created-on-first-use",
                detail="no key yet: generated on first use",
            ), None
        try:
            listed = PublicKeyring.load(store.keyring_path)
        except KeyringError as exc:
            return fail("keyring-unusable", str(exc), keyring_fix), None
        return Check(
            name="key",
            subject=subject,
            status="warn",
            reason="key-missing",
            detail="no signing key, but the keyring lists keys: a new key is generated on"
            " first use and retires them",
            fix="restore signing.key if you have it",
        ), listed
    try:
        signer = store.load_signer()
    except KeyFileError as exc:
        return fail(
            "key-unusable",
            str(exc),
            "chmod 600 it if only its mode is wrong; else pi-guard keys rotate",
        ), None
    try:
        keyring = store.public_keyring(signer)
    except KeyringError as exc:
        return fail("keyring-unusable", str(exc), keyring_fix), None
    return Check(
        name="key", subject=subject, status="ok", reason="key-usable", detail=signer.key_id
    ), keyring


def check_audit(home: Path, keyring: PublicKeyring | None) -> Check:
    """The home's audit log verifies against its keyring (what ``audit verify`` does)."""
    log = home / AUDIT_LOG_FILE
    subject = str(log)
    if not log.exists():
        return Check(
            name="audit",
            subject=subject,
            status="ok",
            reason="no-audit-log-yet",
            detail="no audit log yet: created on first use",
        )
    if keyring is None:
        return Check(
            name="audit",
            subject=subject,
            status="n/a",
            reason="keyring-unusable",
            detail="cannot verify without the keyring",
        )
    keys = keyring.public_keys()
    anchors = anchor_dir()
    try:
        anchored, skipped = latest_anchor(anchors, log, keys)
        result = verify_log(
            log,
            keys,
            against=None if anchored is None else anchored.note,
            resume=None if anchored is None else anchored.state,
        )
    except (AuditError, OSError) as exc:
        return Check(
            name="audit",
            subject=subject,
            status="fail",
            reason="audit-unreadable",
            detail=str(exc),
            fix=f"pi-guard audit verify {log}",
        )
    if result.decision != "intact":
        where = f"line {result.line}" if result.line is not None else "head"
        return Check(
            name="audit",
            subject=subject,
            status="fail",
            reason=f"audit-{result.decision}",
            detail=f"{result.fault or result.decision} at {where}: {result.detail}",
            fix=f"pi-guard audit verify {log}  (keep the log as evidence; see the guide)",
        )
    if anchors is None:
        anchoring = (
            "; no anchor outside the home (PI_OPERATOR_GUARD_ANCHOR_DIR): a rollback of log "
            "and head together would go unseen"
        )
    elif anchored is None:
        anchoring = f"; nothing anchored yet in {anchors.path} (pi-guard audit anchor)"
    else:
        anchoring = (
            f"; extends the checkpoint of {anchored.checkpoint.size} anchored in {anchors.path}"
        )
    if skipped:
        anchoring += f" ({len(skipped)} anchor file(s) skipped: {skipped[0]})"
    return Check(
        name="audit",
        subject=subject,
        status="ok",
        reason="audit-intact",
        detail=f"intact: {result.records} records{anchoring}",
    )


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
) -> DoctorReport:
    """Run every check for a pi session in ``directory`` (see the module docstring).

    ``home`` stands in for the default home of installs whose ``guard.json`` names none;
    ``pi`` checks that pi only instead of searching ``PATH`` and the npm-global packages.
    ``sandbox_check(directory, home, agent_dir)`` is the sandbox's own check, given by the
    caller (the sandbox stands above pi's layer, so it is not imported here).
    """
    folder = directory.absolute()
    pis = find_pis(pi, search_npm=search_npm)
    node = find_node()
    installs = find_installs(folder, agent_dir)
    trust_check, trust = check_trust(folder, agent_dir, installs, pis)
    loading = tuple(i for i in installs if loads(i, trust, pis))
    checks = [check_pi(pis), check_node(node, pis), check_installs(installs, loading), trust_check]
    homes: list[Path] = []
    for location in installs:
        if location.directory is None:
            continue
        config_check, config = check_config(location)
        checks.append(config_check)
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
        if home_check.status != "fail" and home_check.reason != "created-on-first-use":
            key_check, keyring = check_key(chosen)
            checks.append(key_check)
            checks.append(check_audit(chosen, keyring))
        if sandbox_check is not None and folder.is_dir() and home_check.status != "fail":
            # From the very first run: a fresh install's home does not exist yet, but the
            # agent's bash would still be blocked where the sandbox cannot start.
            checks.append(sandbox_check(folder, chosen, agent_dir))
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
