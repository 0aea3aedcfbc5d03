"""The pi wing's checks for ``pi-guard doctor``: ``pi`` (the versions found), ``node`` (does
it satisfy each pi's ``engines.node``), ``installs`` (global, project, package; which of them
load; duplicates), ``trust`` (pi's project-trust decision; it only matters when the guard is
installed for the project alone), and per install ``config`` (``guard.json``) and ``python``
(runs and imports the guard, isolated, as the sidecar runs, with a short timeout).
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from guard._checks import Check
from guard._errors import PiFileError
from guard._hermetic import minimal_env
from guard._home import POLICY_FILE
from guard._pi.install import ExtensionConfig, Target, install_command
from guard._pi.layout import CONFIG_FILE, SHIM_FILE, SHIM_MODULES, InstallLocation
from guard._pi.probe import (
    NEWEST_TESTED,
    NEWEST_TESTED_NODE,
    NodeFound,
    PiFound,
    newer_than_tested,
    node_satisfies,
)
from guard._pi.trust import TrustDecision, project_trust

__all__ = [
    "PYTHON_TIMEOUT_SECONDS",
    "check_config",
    "check_installs",
    "check_mcp",
    "check_node",
    "check_packages",
    "check_pi",
    "check_policy",
    "check_python",
    "check_shim",
    "check_trust",
    "loads",
]

PYTHON_TIMEOUT_SECONDS = 20.0


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
    newer = [pi for pi in pis if newer_than_tested(pi.version)]
    if newer:
        tested = ".".join(map(str, NEWEST_TESTED))
        return Check(
            name="pi",
            status="warn",
            reason="pi-newer-than-tested",
            detail=f"{found}; newer than {tested}, the newest the guard is tested with: tools"
            " it brings that the guard does not know ask at every call",
            fix="update pi-operator-guard, or keep asking for those tools",
        )
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
    if not pis and node_satisfies(node.version, NEWEST_TESTED_NODE) is False:
        # No pi found: the checks assume the current one, and Node must be fine for it too.
        tested = ".".join(map(str, NEWEST_TESTED))
        return Check(
            name="node",
            status="warn",
            reason="node-too-old-for-current-pi",
            detail=f"no pi found; the current pi ({tested}) needs node {NEWEST_TESTED_NODE};"
            f" {have}",
            fix=f"install Node.js {NEWEST_TESTED_NODE} and put it first on PATH",
        )
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


def check_shim(location: InstallLocation) -> Check:
    """The shim's modules beside its ``index.ts``: pi cannot load an install that lacks one
    (``index.ts`` imports them), and then nothing guards its sessions."""
    assert location.directory is not None
    folder = Path(location.directory)
    missing = [name for name in SHIM_MODULES if not (folder / name).is_file()]
    if missing:
        return Check(
            name="shim",
            subject=str(folder / SHIM_FILE),
            status="fail",
            reason="shim-incomplete",
            detail=f"{SHIM_FILE} imports {', '.join(missing)}, not beside it: pi cannot load it",
            fix=install_command(_target(location), folder, "--force"),
        )
    return Check(
        name="shim",
        subject=str(folder / SHIM_FILE),
        status="ok",
        reason="shim-complete",
        detail=f"{SHIM_FILE} and {', '.join(SHIM_MODULES)}",
    )


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


# -- MCP servers -------------------------------------------------------------------------


def check_mcp(folder: Path, home: Path, agent_dir: Path) -> Check:
    """The MCP servers pi would start here (the user's ``mcp.json``, the project's
    ``.pi/mcp.json``) and how the guard judges their tools' calls. A project's servers are a
    warning: pi starts them outside the sandbox, and every call of theirs asks."""
    from guard._policy import Policy, read_mcp_servers

    mine = read_mcp_servers(agent_dir / "mcp.json")
    theirs = read_mcp_servers(folder / ".pi" / "mcp.json")
    trust = Policy.load(home, folder).mcp
    parts: list[str] = []
    for servers, where in ((mine, "your mcp.json"), (theirs, "the project's .pi/mcp.json")):
        if servers.problem is not None:
            parts.append(f"{where} could not be read ({servers.problem}): no server's hints count")
        for key in sorted(servers.replacing - {"*"}):
            if servers is theirs:
                how = "every call asks (a project's server)"
            elif key in trust.hints and key not in trust.project and "*" not in trust.project:
                how = "hints trusted: read-only tools run unasked"
            else:
                how = "every call asks"
            parts.append(f"{key} ({where}): {how}")
    if not parts:
        return Check(name="mcp", status="ok", reason="no-mcp-servers", detail="none configured")
    detail = "; ".join(parts) + " (pi starts stdio servers outside the sandbox)"
    if theirs.present:
        return Check(
            name="mcp",
            status="warn",
            reason="project-mcp-servers",
            detail=detail,
            fix="pi starts the project's servers outside the sandbox in a trusted folder: read "
            ".pi/mcp.json before you trust this folder",
        )
    return Check(name="mcp", status="ok", reason="mcp-servers", detail=detail)


# -- the user policy and pi's package list ---------------------------------------------------


def check_policy(home: Path) -> Check:
    """The user's policy file (``<home>/operator-guard.toml``), as ``pi-guard policy check``
    reads it: its problems named (the guard runs stricter than the file may say meanwhile)."""
    from guard._policy import check_config_file

    path = home / POLICY_FILE
    if not path.exists():
        return Check(
            name="policy",
            subject=str(path),
            status="ok",
            reason="no-user-policy",
            detail="no user policy file: the built-in policy applies",
        )
    problems = check_config_file(path, layer="user")
    if not problems:
        return Check(
            name="policy", subject=str(path), status="ok", reason="policy-ok", detail="valid"
        )
    shown = "; ".join(str(p) for p in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    # A file that cannot be read or parsed applies none of what the operator wrote (only
    # the strictest reading of its network and hidden paths): a failure, not a warning.
    unread = any(p.key in ("(file)", "(syntax)") for p in problems)
    return Check(
        name="policy",
        subject=str(path),
        status="fail" if unread else "warn",
        reason="policy-unreadable" if unread else "policy-problems",
        detail=f"{len(problems)} problem{'s' if len(problems) != 1 else ''}: {shown}{more}",
        fix=f"pi-guard policy check {path}",
    )


def check_packages(folder: Path | None, agent_dir: Path) -> Check:
    """Package entries of pi's ``settings.json`` whose local folder is gone (uninstalled
    while pi still lists it: pi cannot load it)."""
    from guard._pi.layout import listed_packages

    gone = [
        (settings, source)
        for settings, source, path in listed_packages(agent_dir, folder)
        if path is not None and not path.exists()
    ]
    if not gone:
        return Check(
            name="packages",
            status="ok",
            reason="packages-present",
            detail="every local package pi's settings list is there",
        )
    named = "; ".join(f"{source} (in {settings})" for settings, source in gone)
    return Check(
        name="packages",
        status="warn",
        reason="package-folder-missing",
        detail=f"pi's settings list a package whose folder is gone: {named}",
        fix="pi remove " + " ".join(shlex.quote(source) for _, source in gone),
    )
