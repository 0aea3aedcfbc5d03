"""The exporter: audit records in on the caller's thread, spans out on a thread of its own.

:meth:`Telemetry.observe` runs where the guard appends a record: it folds the record into
its call (:class:`guard._telemetry.calls.CallFolder`) and puts a finished call on a bounded
queue, never waiting; a full queue drops the call and counts it. One daemon thread imports
the OpenTelemetry SDK (only here, only when export is on), turns each call into an
``execute_tool`` span and posts them in batches over OTLP/HTTP; a failed export counts its
spans as dropped. A collector that is down or slow therefore changes no decision and delays
no call. The exporter runs in the sidecar, outside the agent's sandbox, and its headers
never reach an agent command (the sandbox removes ``OTEL_EXPORTER_OTLP_*HEADERS`` and the
variables ``[telemetry] headers`` name).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from audit.wire import AuditRecord
from guard._home import TELEMETRY_STATUS_FILE
from guard._logging import get_logger
from guard._telemetry.calls import CallFolder
from guard._telemetry.config import ExportConfig, TelemetryOff, export_config
from guard._telemetry.model import SEMCONV_VERSION, CallSpan, TelemetryStatus

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

__all__ = ["MAX_BATCH", "STATUS_FILE", "Telemetry", "off_status", "open_telemetry"]

MAX_BATCH = 512
LINGER_SECONDS = 0.2
"""How long the export thread gathers calls into one batch (the SDK's batch processor waits
longer): the work of an export is shared by the calls of that moment."""
STATUS_FILE = TELEMETRY_STATUS_FILE

_log = get_logger("guard.telemetry")
_STOP = object()
ExporterFactory = Callable[[ExportConfig], "SpanExporter"]


def _otlp_exporter(config: ExportConfig) -> SpanExporter:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter(
        endpoint=config.endpoint,
        headers=dict(config.headers) if config.headers is not None else None,
        timeout=config.settings.timeout_seconds,
    )


class Telemetry:
    """This sidecar's export (see the module). Start with :meth:`start`; :meth:`close`."""

    def __init__(
        self,
        config: ExportConfig,
        *,
        status_dir: Path | None = None,
        exporter: ExporterFactory = _otlp_exporter,
    ) -> None:
        self.config = config
        self._status_dir = status_dir
        self._factory = exporter
        self._folder = CallFolder(details=config.settings.previews)
        self._fold_lock = threading.Lock()
        self._queue: queue.Queue[object] = queue.Queue(maxsize=config.settings.queue)
        self._count_lock = threading.Lock()
        self.exported = 0
        self.dropped = 0
        self.last_error: str | None = None
        self._broken = False
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="guard-telemetry", daemon=True)

    @classmethod
    def start(cls, config: ExportConfig, **kwargs: Any) -> Telemetry:
        telemetry = cls(config, **kwargs)
        telemetry._thread.start()
        return telemetry

    # -- the caller's thread ---------------------------------------------------------------

    def observe(self, record: AuditRecord) -> None:
        """Take one appended record; never raises, never waits."""
        try:
            with self._fold_lock:
                spans = self._folder.fold(record, time.time_ns())
            for span in spans:
                self._put(span)
        except Exception as exc:  # a bug here must not cost a call
            self._count(dropped=1, error=f"{type(exc).__name__}: {exc}")

    def _put(self, item: object) -> None:
        if self._closing:
            self._count(dropped=1)
            return
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self._count(dropped=1)

    def status(self) -> TelemetryStatus:
        with self._count_lock:
            return TelemetryStatus(
                state="broken" if self._broken else "on",
                reason="export-failed" if self._broken else "enabled",
                endpoint=self.config.endpoint,
                exported=self.exported,
                dropped=self.dropped,
                queued=self._queue.qsize(),
                last_error=self.last_error[:500] if self.last_error else None,
                missing_headers=self.config.missing_headers,
            )

    def close(self, wait: float = 1.0) -> None:
        """Export the calls still open and what waits, for at most ``wait`` seconds; what is
        left then is dropped (counted) and the thread is abandoned (it is a daemon)."""
        with self._fold_lock:
            spans = self._folder.drain(time.time_ns())
        for span in spans:
            self._put(span)
        self._closing = True
        with contextlib.suppress(queue.Full):  # a full queue: what is left is dropped
            self._queue.put_nowait(_STOP)
        self._thread.join(wait)
        left = sum(1 for item in self._drained() if item is not _STOP)
        self._count(dropped=left)
        self._write_status()
        self._status_dir = None  # the session's directory goes next: never made again

    def _drained(self) -> list[object]:
        out: list[object] = []
        while True:
            try:
                out.append(self._queue.get_nowait())
            except queue.Empty:
                return out

    # -- the export thread -----------------------------------------------------------------

    def _count(self, *, exported: int = 0, dropped: int = 0, error: str | None = None) -> None:
        with self._count_lock:
            self.exported += exported
            self.dropped += dropped
            if error is not None:
                self.last_error = error

    def _run(self) -> None:
        try:
            exporter, tracer = self._sdk()
        except Exception as exc:
            self._broken = True
            self._count(error=f"exporter could not start: {type(exc).__name__}: {exc}")
            _log.error("telemetry-start-failed", error=str(exc))
            self._write_status()
            while self._queue.get() is not _STOP:
                self._count(dropped=1)
            return
        self._write_status()
        stop = False
        while not stop:
            batch: list[CallSpan] = []
            item = self._queue.get()
            linger_until = time.monotonic() + LINGER_SECONDS
            while True:
                if item is _STOP:
                    stop = True
                    break
                assert isinstance(item, CallSpan)
                batch.append(item)
                if len(batch) >= MAX_BATCH:
                    break
                try:  # gather a batch for a moment: one post, not one per call
                    item = self._queue.get(timeout=max(linger_until - time.monotonic(), 0))
                except queue.Empty:
                    break
            if batch:
                self._export(exporter, tracer, batch)
        exporter.shutdown()

    def _sdk(self) -> tuple[SpanExporter, Any]:
        """The SDK's tracer (its spans collected, not exported one by one) and exporter."""
        from importlib.metadata import PackageNotFoundError, version

        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider

        try:
            ours = version("pi-operator-guard")
        except PackageNotFoundError:  # pragma: no cover - a bare checkout
            ours = "0"

        class _Collect(SpanProcessor):
            def __init__(self) -> None:
                self.ended: list[ReadableSpan] = []

            def on_end(self, span: ReadableSpan) -> None:
                self.ended.append(span)

        resource = Resource.create({"service.name": "pi-operator-guard", "service.version": ours})
        provider = TracerProvider(resource=resource)
        self._collect = _Collect()
        provider.add_span_processor(self._collect)
        tracer = provider.get_tracer(
            "pi-operator-guard",
            ours,
            schema_url=f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}",
        )
        return self._factory(self.config), tracer

    def _export(self, exporter: SpanExporter, tracer: Any, batch: list[CallSpan]) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult
        from opentelemetry.trace import SpanKind, Status, StatusCode

        self._collect.ended.clear()
        for call in batch:
            span = tracer.start_span(
                call.name,
                kind=SpanKind.INTERNAL,
                attributes=call.attributes,
                start_time=call.start_ns,
            )
            if call.error_type is not None:
                span.set_status(Status(StatusCode.ERROR))
            span.end(end_time=call.end_ns)
        spans = list(self._collect.ended)
        error: str | None = None
        try:
            if exporter.export(spans) != SpanExportResult.SUCCESS:
                error = "export failed (the collector is down, slow or refused the spans)"
        except Exception as exc:  # the SDK's exporter reports failures, but be sure
            error = f"{type(exc).__name__}: {exc}"
        if error is None:
            self._count(exported=len(batch))
            with self._count_lock:
                self.last_error = None
        else:
            self._count(dropped=len(batch), error=error)
            _log.warning("telemetry-export-failed", spans=len(batch), error=error)
        self._write_status()

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
