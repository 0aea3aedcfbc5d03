"""The real pi for :mod:`tools.pi.demo` (``make demo``) and the end-to-end tests.

:func:`ensure_pi` installs the pinned pi (``tools/pi``: exact version, lockfile, ``npm ci``) into
the ignored ``.cache/pi`` of the clone; :func:`write_agent_dir` and :func:`offline_env` point it
at :mod:`tools.pi.scripted_model` on 127.0.0.1 with no network; :class:`PiRpc` drives
``pi --mode rpc`` and answers the guard's dialogs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TextIO

from audit import sha256_prefixed
from guard._errors import GuardError
from tools.pi.scripted_model import MODEL_ID, PROVIDER
from tools.pi.scripted_model import models_json as _models_json

__all__ = [
    "PI_PACKAGE",
    "PI_VERSION",
    "PiRpc",
    "PiSetupError",
    "ensure_pi",
    "find_repo_root",
    "offline_env",
    "read_session_entries",
    "write_agent_dir",
]

PI_PACKAGE = "@mariozechner/pi-coding-agent"
PI_VERSION = "0.73.1"
_STAMP = ".installed-lock"

Answer = Callable[[Mapping[str, Any]], bool | None]


class PiSetupError(GuardError):
    """pi could not be installed or started (no clone, no node/npm, npm failed)."""


# -- the pinned pi ---------------------------------------------------------------------------


def find_repo_root(start: Path | None = None) -> Path:
    """The clone holding ``tools/pi`` (searched from ``start`` or the cwd, then this file)."""
    begin = (start or Path.cwd()).absolute()
    for candidate in (begin, *begin.parents, *Path(__file__).resolve().parents):
        if (candidate / "tools" / "pi" / "package-lock.json").is_file():
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


def ensure_pi(root: Path, *, log: TextIO | None = None) -> Path:
    """Install the pinned pi into ``root/.cache/pi`` unless that exact lockfile is installed.

    Serialized with a file lock, so parallel test runs share one install. Returns the path
    of the ``pi`` executable.
    """
    tools = root / "tools" / "pi"
    cache = root / ".cache" / "pi"
    pi = cache / "node_modules" / ".bin" / "pi"
    lock_bytes = (tools / "package-lock.json").read_bytes()
    wanted = sha256_prefixed(lock_bytes + b"\0" + (tools / "package.json").read_bytes())
    with _locked(root / ".cache" / "pi.lock"):
        stamp = cache / _STAMP
        if pi.exists() and stamp.exists() and stamp.read_text().strip() == wanted:
            return pi
        npm = shutil.which("npm")
        if npm is None or shutil.which("node") is None:
            raise PiSetupError("node and npm are needed to install pi (Node 20 or newer)")
        if log is not None:
            log.write(f"installing {PI_PACKAGE}@{PI_VERSION} into {cache} (npm ci) ...\n")
            log.flush()
        cache.mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)
        shutil.copyfile(tools / "package.json", cache / "package.json")
        shutil.copyfile(tools / "package-lock.json", cache / "package-lock.json")
        done = subprocess.run(
            [npm, "ci", "--prefix", str(cache), "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=cache,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
        if done.returncode != 0 or not pi.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise PiSetupError(f"npm ci failed ({done.returncode}): {' | '.join(tail)}")
        installed = json.loads((cache / "node_modules" / PI_PACKAGE / "package.json").read_text())[
            "version"
        ]
        if installed != PI_VERSION:
            raise PiSetupError(f"npm installed {PI_PACKAGE} {installed}, expected {PI_VERSION}")
        stamp.write_text(wanted + "\n")
    return pi


def write_agent_dir(agent_dir: Path, base_url: str) -> Path:
    """A pi agent dir whose only provider is the scripted model server."""
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(_models_json(base_url), indent=2))
    return agent_dir


def offline_env(agent_dir: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for an offline pi run against ``agent_dir``.

    pi reads its providers from ``$PI_CODING_AGENT_DIR/models.json``; ``PI_OFFLINE=1`` and
    ``PI_SKIP_VERSION_CHECK=1`` keep it off the network. Inherited ``PI_*`` variables are dropped.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PI_")}
    env.update(
        {"PI_CODING_AGENT_DIR": str(agent_dir), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"}
    )
    env.update(extra or {})
    return env


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
        pi: Path,
        project: Path,
        agent_dir: Path,
        *,
        session_dir: Path | None = None,
        extra_args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        stderr_path: Path | None = None,
    ) -> None:
        args = [str(pi), "--mode", "rpc", "--provider", PROVIDER, "--model", MODEL_ID]
        args += ["--session-dir", str(session_dir)] if session_dir else ["--no-session"]
        args += list(extra_args)
        self._stderr: IO[bytes] = (
            stderr_path.open("wb") if stderr_path else open(os.devnull, "wb")  # noqa: SIM115
        )
        self.proc = subprocess.Popen(
            args,
            cwd=project,
            env=offline_env(agent_dir, env),
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

    def prompt(
        self,
        text: str,
        answer: Answer = lambda _request: False,
        *,
        timeout: float = 60.0,
        on_event: Callable[[Mapping[str, Any]], None] | None = None,
    ) -> list[dict[str, Any]]:
        """Send a prompt, answer each confirm with ``answer`` (``None``: leave it unanswered),
        and return this prompt's events up to ``agent_end``."""
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
            if kind == "extension_ui_request" and event.get("method") == "confirm":
                yes = answer(event)
                if yes is not None:
                    self.send(
                        {"type": "extension_ui_response", "id": event["id"], "confirmed": yes}
                    )
            if kind == "agent_end":
                return events

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
