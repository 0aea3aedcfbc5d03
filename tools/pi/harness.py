"""``make demo``: the guard inside the real pi, driven by a scripted model, answered by a script.

Installs the pinned pi (``tools/pi``: exact version, lockfile, ``npm ci``) into the ignored
``.cache/pi`` of the clone, starts :mod:`tools.pi.scripted_model` on 127.0.0.1, installs the
extension into a temporary project, runs ``pi --mode rpc`` there, answers the guard's dialogs
(one yes, one no), prints a readable transcript, then plays the monitor consumer on the
envelope pi stored in its session, and ends with ``audit verify`` and ``audit report``.

:class:`PiRpc` and :func:`ensure_pi` are reused by the end-to-end tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, TextIO

from audit import sha256_prefixed
from guard._errors import GuardError
from tools.pi.scripted_model import MODEL_ID, PROVIDER, ScriptedModelServer, ToolCall, Turn
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
    "run_pi_demo",
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
    """The environment for an offline pi run against ``agent_dir`` (contract section 10)."""
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


# -- the demo ----------------------------------------------------------------------------------

DEMO_SCENARIO = "demo"
DEMO_TURNS = (
    Turn(tool_calls=(ToolCall("read", {"path": "README.md"}),)),
    Turn(tool_calls=(ToolCall("bash", {"command": "rm -rf build"}),)),
    Turn(tool_calls=(ToolCall("write", {"path": ".env", "content": "API_TOKEN=changed\n"}),)),
    Turn(
        tool_calls=(
            ToolCall(
                "operator_confirmation_implementation_channel_plan", {"guardCanOwnDialog": True}
            ),
        )
    ),
    Turn(text="That is all: the tool results above say what ran and what was blocked."),
)


def _short(value: object, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _result_text(result: Mapping[str, Any]) -> str:
    parts = result.get("content") or []
    return "".join(p.get("text", "") for p in parts if isinstance(p, dict))


class _Transcript:
    def __init__(self, out: TextIO, answers: list[bool]) -> None:
        self.out = out
        self.answers = answers

    def say(self, who: str, text: str) -> None:
        first, *rest = text.splitlines() or [""]
        self.out.write(f"{who:>10} │ {first}\n")
        for line in rest:
            self.out.write(f"{'':>10} │ {line}\n")
        self.out.flush()

    def answer(self, request: Mapping[str, Any]) -> bool:
        self.say("guard asks", f"{request.get('title')}\n{request.get('message')}")
        yes = self.answers.pop(0)
        self.say("operator", "yes" if yes else "no")
        return yes

    def on_event(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        if kind == "tool_execution_start":
            self.say("model", f"calls {event['toolName']} {_short(event.get('args'))}")
        elif kind == "tool_execution_end":
            status = "error" if event.get("isError") else "ok"
            text = _result_text(event.get("result") or {})
            self.say("tool", f"[{status}] {_short(text, 300)}")
        elif kind == "message_end":
            message = event.get("message") or {}
            if message.get("role") == "assistant":
                text = _result_text(message)
                if text:
                    self.say("model", text)


def run_pi_demo(out: TextIO) -> int:
    """Run the real-pi demo, printing to ``out``. Returns 0 when the audit log verifies."""
    from guard._guard import Guard
    from guard._pi.install import install

    root = find_repo_root()
    pi = ensure_pi(root, log=out)
    out.write(f"pi {PI_VERSION} ready: {pi}\n\n")
    with (
        tempfile.TemporaryDirectory(prefix="pi-guard-demo-") as tmp,
        ScriptedModelServer({DEMO_SCENARIO: DEMO_TURNS}) as server,
    ):
        base = Path(tmp)
        project = base / "project"
        (project / "build").mkdir(parents=True)
        (project / "build" / "app.bin").write_bytes(b"\0" * 64)
        (project / "README.md").write_text("# demo project\n")
        (project / ".env").write_text("API_TOKEN=original\n")
        agent_dir = write_agent_dir(base / "agent", server.base_url)
        home = agent_dir / "operator-guard"
        sessions = base / "sessions"
        result = install("project", project, force=False, uninstall=False, home=home)
        out.write(result.render() + "\n\n")
        out.write(f"model server: {server.base_url} (scripted, loopback only)\n")
        out.write(f"running: pi --mode rpc in {project}\n\n")

        transcript = _Transcript(out, [True, False])
        with PiRpc(pi, project, agent_dir, session_dir=sessions) as session:
            transcript.say("user", f"scenario:{DEMO_SCENARIO}")
            session.prompt(
                f"scenario:{DEMO_SCENARIO} tidy up the project",
                transcript.answer,
                on_event=transcript.on_event,
            )
        out.write("\n")
        out.write(f"build/ exists afterwards: {(project / 'build').exists()}\n")
        out.write(f".env afterwards: {(project / '.env').read_text().strip()}\n\n")

        envelopes = [
            e["data"]
            for e in read_session_entries(sessions)
            if e.get("type") == "custom" and e.get("customType") == "operator-confirmation-evidence"
        ]
        out.write(f"evidence envelopes in the session file: {len(envelopes)}\n")
        with Guard.open(home) as guard:
            for envelope in envelopes:
                details = envelope["details"]
                out.write(
                    f"  {details['evidenceId']}: {details['toolName']} {details['actionKind']}"
                    f" expires {details['expiresAtIso']} dispatchAllowed="
                    f"{str(details['dispatchAllowed']).lower()}\n"
                )
                call = ("bash", {"command": "rm -rf build"}, project)
                out.write("  a monitor consumes it against bash {command: rm -rf build}:\n")
                for attempt in ("first", "replay"):
                    consumed = guard.consume(envelope, *call)
                    why = f", {', '.join(consumed.reasons)}" if consumed.reasons else ""
                    match = consumed.match.decision
                    out.write(f"    {attempt}: {consumed.decision} (match: {match}{why})\n")
            out.write("\n")
            verify = guard.verify_audit()
        out.write(_render_audit(home, verify))
        return 0 if _intact(verify) else 4


def _intact(verify: Any) -> bool:
    return getattr(verify, "decision", None) == "intact"


def _render_audit(home: Path, verify: Any) -> str:
    """``pi-guard audit verify`` and ``audit report`` for the demo home, as the CLI prints them."""
    lines = ["$ pi-guard audit verify"]
    for args in (["audit", "verify"], ["audit", "report"]):
        done = subprocess.run(
            [sys.executable, "-m", "guard", "--home", str(home), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if args[1] == "report":
            lines.append("$ pi-guard audit report")
        lines.append(textwrap.indent((done.stdout + done.stderr).rstrip(), "  "))
        lines.append(f"  (exit {done.returncode})")
    lines.append(f"audit log intact: {_intact(verify)}")
    return "\n".join(lines) + "\n"
