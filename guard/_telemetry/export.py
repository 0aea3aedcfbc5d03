"""The exporter: audit records in on the caller's thread, spans out in a process of its own.

:meth:`Telemetry.observe` runs where the guard appends a record: it folds the record into
its call (:class:`guard._telemetry.calls.CallFolder`) and writes a finished call, one line,
to the export process's pipe (:mod:`guard._telemetry.child`), never waiting: a pipe without
room for the line drops the call and counts it. That process imports the OpenTelemetry SDK
(only there, only when export is on), turns each call into an ``execute_tool`` span and
posts them in batches over OTLP/HTTP; it says how each batch went, which a thread here
counts (a failed export counts its spans as dropped). Encoding and posting therefore never
hold this interpreter's lock while a call waits, and a collector that is down or slow
changes no decision and delays no call. The export process is the sidecar's child, outside
the agent's sandbox, and its headers never reach an agent command (the sandbox removes
``OTEL_EXPORTER_OTLP_*HEADERS`` and the variables ``[telemetry] headers`` name).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from audit.wire import AuditRecord
from guard._home import TELEMETRY_STATUS_FILE
from guard._logging import get_logger
from guard._telemetry.calls import CallFolder
from guard._telemetry.child import MAX_BATCH, span_line
from guard._telemetry.config import ExportConfig, TelemetryOff, export_config
from guard._telemetry.model import TelemetryStatus

__all__ = [
    "EXPORT_PROCESS",
    "MAX_BATCH",
    "STATUS_FILE",
    "Telemetry",
    "off_status",
    "open_telemetry",
]

STATUS_FILE = TELEMETRY_STATUS_FILE
EXPORT_PROCESS: tuple[str, ...] = (sys.executable, "-I", "-m", "guard._telemetry.child")
"""The export process's argv."""
_PIPE_BYTES_PER_CALL = 2048
_MAX_PIPE = 1 << 20  # Linux's pipe-max-size for an unprivileged process

_log = get_logger("guard.telemetry")


class Telemetry:
    """This sidecar's export (see the module). Start with :meth:`start`; :meth:`close`."""

    def __init__(
        self,
        config: ExportConfig,
        *,
        status_dir: Path | None = None,
        command: Sequence[str] = EXPORT_PROCESS,
    ) -> None:
        self.config = config
        self._status_dir = status_dir
        self._command = tuple(command)
        self._folder = CallFolder(details=config.settings.previews)
        self._fold_lock = threading.Lock()
        self._count_lock = threading.Lock()
        self.sent = 0
        self.exported = 0
        self.dropped = 0
        self._child_dropped = 0  # of what was sent: the export process could not post it
        self.last_error: str | None = None
        self._broken = False
        self._closing = False
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: int | None = None
        self._room = 0
        self._reader: threading.Thread | None = None

    @classmethod
    def start(cls, config: ExportConfig, **kwargs: Any) -> Telemetry:
        telemetry = cls(config, **kwargs)
        telemetry._spawn()
        return telemetry

    def _spawn(self) -> None:
        settings = {
            "endpoint": self.config.endpoint,
            "headers": dict(self.config.headers) if self.config.headers is not None else None,
            "timeout": self.config.settings.timeout_seconds,
            "queue": self.config.settings.queue,
        }
        try:
            process = subprocess.Popen(
                self._command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError as exc:
            self._fail(f"exporter could not start: {exc}")
            return
        assert process.stdin is not None
        assert process.stdout is not None
        self._process = process
        pipe = process.stdin.fileno()
        # Room for the queue's calls in the pipe itself: a write that fits never blocks.
        wanted = min(max(self.config.settings.queue * _PIPE_BYTES_PER_CALL, 4096), _MAX_PIPE)
        try:
            self._room = fcntl.fcntl(pipe, fcntl.F_SETPIPE_SZ, wanted)
        except OSError:
            self._room = fcntl.fcntl(pipe, fcntl.F_GETPIPE_SZ)
        try:
            process.stdin.write(json.dumps(settings).encode() + b"\n")
            process.stdin.flush()
        except OSError:
            pass  # it ended already: the reader hears why
        os.set_blocking(pipe, False)
        self._pipe = pipe
        self._reader = threading.Thread(
            target=self._hear, args=(process.stdout,), name="guard-telemetry", daemon=True
        )
        self._reader.start()

    # -- the caller's thread ---------------------------------------------------------------

    def observe(self, record: AuditRecord) -> None:
        """Take one appended record; never raises, never waits."""
        try:
            with self._fold_lock:
                spans = self._folder.fold(record, time.time_ns())
            for span in spans:
                self._put(span_line(span))
        except Exception as exc:  # a bug here must not cost a call
            self._count(dropped=1, error=f"{type(exc).__name__}: {exc}")

    def _put(self, line: bytes) -> None:
        pipe = self._pipe
        if self._closing or self._broken or pipe is None:
            self._count(dropped=1)
            return
        with self._count_lock:
            full = self.sent - self.exported - self._child_dropped >= self.config.settings.queue
        if full:  # the queue is what was sent and not answered for: the batch posting counts
            self._count(dropped=1)
            return
        try:
            # A line that fits in the pipe's free room is written whole without blocking
            # (pipe(7): one writer; the reader only makes room), else it is dropped.
            waiting = int.from_bytes(fcntl.ioctl(pipe, termios.FIONREAD, b"\0\0\0\0"), "little")
            if len(line) > self._room - waiting:
                self._count(dropped=1)
                return
            written = os.write(pipe, line)
        except OSError:  # full after all, or the process ended
            self._count(dropped=1)
            return
        if written != len(line):  # cannot happen with one writer; never leave half a line
            self._count(dropped=1, error="the export pipe took part of a line")
            self._broken = True
            return
        with self._count_lock:
            self.sent += 1

    def status(self) -> TelemetryStatus:
        with self._count_lock:
            queued = max(self.sent - self.exported - self._child_dropped, 0)
            return TelemetryStatus(
                state="broken" if self._broken else "on",
                reason="export-failed" if self._broken else "enabled",
                endpoint=self.config.endpoint,
                exported=self.exported,
                dropped=self.dropped,
                queued=0 if self._broken else queued,
                last_error=self.last_error[:500] if self.last_error else None,
                missing_headers=self.config.missing_headers,
            )

    def close(self, wait: float = 1.0) -> None:
        """Export the calls still open and what waits, for at most ``wait`` seconds; what is
        left then is dropped (counted) and the export process is stopped."""
        with self._fold_lock:
            spans = self._folder.drain(time.time_ns())
        for span in spans:
            self._put(span_line(span))
        self._closing = True
        process = self._process
        if process is not None:
            if self._pipe is not None:
                with contextlib.suppress(OSError):
                    os.set_blocking(self._pipe, True)
                with contextlib.suppress(OSError):
                    assert process.stdin is not None
                    process.stdin.close()  # the end of the input: export what is left
            try:
                process.wait(wait)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if self._reader is not None:
                self._reader.join(1.0)
        with self._count_lock:
            left = self.sent - self.exported - self._child_dropped
            self.sent -= left
        self._count(dropped=max(left, 0))
        self._write_status()
        self._status_dir = None  # the session's directory goes next: never made again

    # -- the export process's answers ------------------------------------------------------

    def _count(self, *, exported: int = 0, dropped: int = 0, error: str | None = None) -> None:
        with self._count_lock:
            self.exported += exported
            self.dropped += dropped
            if error is not None:
                self.last_error = error

    def _fail(self, why: str) -> None:
        self._broken = True
        with self._count_lock:
            # What it had and never answered for is lost.
            left = self.sent - self.exported - self._child_dropped
            self.sent -= left
        self._count(dropped=max(left, 0), error=why)
        _log.error("telemetry-start-failed", error=why)
        self._write_status()

    def _hear(self, answers: IO[bytes]) -> None:
        for line in answers:
            try:
                said = json.loads(line)
            except ValueError:
                continue
            if not isinstance(said, Mapping):
                continue
            if "broken" in said:
                self._fail(str(said["broken"])[:500])
                return
            if "exported" in said:
                self._count(exported=int(said["exported"]))
                with self._count_lock:
                    self.last_error = None
            elif "dropped" in said:
                with self._count_lock:
                    self._child_dropped += int(said["dropped"])
                error = str(said.get("error") or "export failed")
                self._count(dropped=int(said["dropped"]), error=error)
                _log.warning("telemetry-export-failed", spans=said["dropped"], error=error)
            self._write_status()
        if not self._closing and not self._broken:
            code = self._process.poll() if self._process is not None else None
            self._fail(f"the export process ended (exit {code})")

    def _write_status(self) -> None:
        """The status for ``pi-guard doctor``, replaced whole (never fails the export)."""
        directory = self._status_dir
        if directory is None:
            return
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            path = directory / STATUS_FILE
            temp = path.with_name(f".{STATUS_FILE}.{os.getpid()}.{threading.get_ident()}")
            temp.write_text(json.dumps(self.status().model_dump(mode="json")), encoding="utf-8")
            os.replace(temp, path)
        except OSError as exc:
            _log.warning("telemetry-status-unwritten", error=str(exc))


def off_status(off: TelemetryOff) -> TelemetryStatus:
    """The status of an export that is off."""
    return TelemetryStatus(state="off", reason=f"{off.reason}: {off.detail}"[:200])


def open_telemetry(
    home: Path, *, status_dir: Path | None = None, environ: Mapping[str, str] | None = None
) -> Telemetry | TelemetryStatus:
    """This home's export, started (a :class:`Telemetry`), or the status saying it is off."""
    config = export_config(home, environ)
    if isinstance(config, TelemetryOff):
        return off_status(config)
    _log.info("telemetry-on", endpoint=config.endpoint, queue=config.settings.queue)
    return Telemetry.start(config, status_dir=status_dir)
