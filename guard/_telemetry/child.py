"""The export process: spans in on stdin, OTLP/HTTP out, counts back on stdout.

The sidecar starts it (``python -I -m guard._telemetry.child``) when export is on, so that
importing the SDK, building and encoding a batch and posting it never take the sidecar's
interpreter lock, nor time slices on its thread, while a call waits. One JSON object a line:

* in: first the export's settings (``endpoint``, ``headers``, ``timeout``, ``queue``), then one
  :class:`~guard._telemetry.model.CallSpan` a line (:func:`span_line`); end of input: export
  what is left and exit;
* out: ``{"ready": true}`` once the SDK is loaded, or ``{"broken": why}``; after each batch
  ``{"exported": n}`` or ``{"dropped": n, "error": why}``.

A batch gathers what arrives within :data:`LINGER_SECONDS` (at most :data:`MAX_BATCH`
spans): one post for the calls of a moment. Reading stops while the bounded queue is full;
the pipe then fills and the sidecar drops what it cannot write (counted there).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import IO, Any

from guard._telemetry.model import SEMCONV_VERSION, CallSpan

__all__ = [
    "LINGER_SECONDS",
    "MAX_BATCH",
    "NICENESS",
    "READ_PAUSE_SECONDS",
    "main",
    "read_span",
    "span_line",
]

MAX_BATCH = 512
NICENESS = 10
READ_PAUSE_SECONDS = 0.05
LINGER_SECONDS = 0.2
_STOP = object()


def span_line(span: CallSpan) -> bytes:
    """One span as the line the sidecar writes to this process."""
    attributes = {k: list(v) if isinstance(v, tuple) else v for k, v in span.attributes.items()}
    doc = {"n": span.name, "s": span.start_ns, "e": span.end_ns, "a": attributes}
    if span.error_type is not None:
        doc["x"] = span.error_type
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def read_span(line: bytes) -> CallSpan:
    """A line of :func:`span_line` back to its span."""
    doc = json.loads(line)
    attributes = {k: tuple(v) if isinstance(v, list) else v for k, v in doc["a"].items()}
    return CallSpan(doc["n"], int(doc["s"]), int(doc["e"]), attributes, doc.get("x"))


class _Exporter:
    """The SDK's tracer (its spans collected, not exported one by one) and OTLP exporter."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
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
        self._tracer = provider.get_tracer(
            "pi-operator-guard",
            ours,
            schema_url=f"https://opentelemetry.io/schemas/{SEMCONV_VERSION}",
        )
        headers = settings.get("headers")
        self._otlp = OTLPSpanExporter(
            endpoint=settings.get("endpoint"),
            headers=dict(headers) if headers is not None else None,
            timeout=float(settings["timeout"]),
        )

    def export(self, batch: list[CallSpan]) -> str | None:
        """Post ``batch``; why it failed, or None."""
        from opentelemetry.sdk.trace.export import SpanExportResult
        from opentelemetry.trace import SpanKind, Status, StatusCode

        self._collect.ended.clear()
        for call in batch:
            span = self._tracer.start_span(
                call.name, kind=SpanKind.INTERNAL, attributes=call.attributes,
                start_time=call.start_ns,
            )  # fmt: skip
            if call.error_type is not None:
                span.set_status(Status(StatusCode.ERROR))
            span.end(end_time=call.end_ns)
        try:
            if self._otlp.export(list(self._collect.ended)) != SpanExportResult.SUCCESS:
                return "export failed (the collector is down, slow or refused the spans)"
        except Exception as exc:  # the SDK's exporter reports failures, but be sure
            return f"{type(exc).__name__}: {exc}"
        return None

    def shutdown(self) -> None:
        self._otlp.shutdown()  # type: ignore[no-untyped-call]


def _say(out: IO[bytes], **fields: object) -> None:
    out.write(json.dumps(fields).encode() + b"\n")
    out.flush()


def _read(source: IO[bytes], inbox: queue.Queue[object]) -> None:
    # What the pipe holds, then a pause: calls back to back are read a handful at a time, so
    # this process wakes about 1 / READ_PAUSE_SECONDS times a second, not once per call (each
    # wake-up can take a time slice from the sidecar's core). A line split across two reads
    # waits for its end.
    read = getattr(source, "read1", source.read)
    pending = b""
    while chunk := read(1 << 20):
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            try:
                inbox.put(read_span(line))
            except (ValueError, KeyError, TypeError):
                continue  # not a span: the sidecar never writes one, and a bad line costs nothing
        time.sleep(READ_PAUSE_SECONDS)
    inbox.put(_STOP)


def main(
    source: IO[bytes] | None = None, out: IO[bytes] | None = None, *, background: bool = False
) -> int:
    """Run the export process over ``source`` and ``out`` (stdin and stdout). ``background``:
    once the SDK is loaded, give way to every other process (:data:`NICENESS`)."""
    source = source or sys.stdin.buffer
    out = out or sys.stdout.buffer
    try:
        settings = json.loads(source.readline())
        exporter = _Exporter(settings)
    except Exception as exc:
        _say(out, broken=f"exporter could not start: {type(exc).__name__}: {exc}"[:500])
        return 1
    _say(out, ready=True)
    if background:
        _give_way()
    inbox: queue.Queue[object] = queue.Queue(maxsize=max(int(settings.get("queue", 1)), 1))
    threading.Thread(target=_read, args=(source, inbox), daemon=True).start()
    stop = False
    while not stop:
        batch: list[CallSpan] = []
        item = inbox.get()
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
                item = inbox.get(timeout=max(linger_until - time.monotonic(), 0))
            except queue.Empty:
                break
        if batch:
            error = exporter.export(batch)
            if error is None:
                _say(out, exported=len(batch))
            else:
                _say(out, dropped=len(batch), error=error[:500])
    exporter.shutdown()
    return 0


def _give_way() -> None:
    # Encoding and posting a batch must not take a time slice from a call waiting in the
    # sidecar (on two cores, the exporter and the sidecar compete). The SDK is loaded at the
    # normal priority (the first batch is not late); what follows runs niced: a loaded machine
    # makes the export later, the queue then drops and counts (setpriority(2); never fatal).
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, 0, NICENESS)


if __name__ == "__main__":
    sys.exit(main(background=True))
