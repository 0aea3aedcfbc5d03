"""A real OTLP/HTTP receiver on 127.0.0.1 for the tests, built on the OpenTelemetry protobuf
definitions (``opentelemetry-proto``): ``POST /v1/traces`` and ``/v1/logs`` bodies decode
as ``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest``, and every span is kept with
its attributes as plain Python values, and every body as it arrived. ``delay`` makes it slow; ``status`` makes it refuse.
"""

from __future__ import annotations

import contextlib
import gzip
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue

__all__ = ["OtlpReceiver", "ReceivedSpan", "otlp_receiver"]


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return tuple(_value(v) for v in value.array_value.values)
    if kind == "kvlist_value":
        return _attributes(value.kvlist_value.values)
    return getattr(value, kind) if kind is not None else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs if isinstance(kv, KeyValue)}


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    kind: int
    attributes: dict[str, Any]
    resource: dict[str, Any]
    scope: str
    schema_url: str
    status_code: int
    start_ns: int
    end_ns: int


@dataclass
class OtlpReceiver:
    delay: float = 0.0
    status: int = 200
    spans: list[ReceivedSpan] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    requests: list[dict[str, str]] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    """Every request body as it arrived, decompressed: what was exported, byte for byte."""
    port: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[ReceivedSpan]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if len(self.spans) >= count:
                    return list(self.spans)
            time.sleep(0.02)
        with self._lock:
            return list(self.spans)

    def take(self, path: str, headers: dict[str, str], body: bytes) -> None:
        if headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        with self._lock:
            self.requests.append({"path": path, **headers})
            self.bodies.append(body)
        if path == "/v1/traces":
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for rs in request.resource_spans:
                resource = _attributes(rs.resource.attributes)
                for ss in rs.scope_spans:
                    for span in ss.spans:
                        received = ReceivedSpan(
                            name=span.name,
                            kind=span.kind,
                            attributes=_attributes(span.attributes),
                            resource=resource,
                            scope=ss.scope.name,
                            schema_url=ss.schema_url,
                            status_code=span.status.code,
                            start_ns=span.start_time_unix_nano,
                            end_ns=span.end_time_unix_nano,
                        )
                        with self._lock:
                            self.spans.append(received)
        elif path == "/v1/logs":
            logs = ExportLogsServiceRequest()
            logs.ParseFromString(body)
            for rl in logs.resource_logs:
                for sl in rl.scope_logs:
                    for record in sl.log_records:
                        with self._lock:
                            self.logs.append(_attributes(record.attributes))


def _handler(receiver: OtlpReceiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            # A slow receiver's client may have given up: its closed socket is no error here.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self._post()

        def _post(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if receiver.delay:
                time.sleep(receiver.delay)
            if receiver.status != 200:
                self.send_response(receiver.status)
                self.send_header("content-length", "0")
                self.end_headers()
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            receiver.take(self.path, headers, body)
            reply = (
                ExportTraceServiceResponse()
                if self.path == "/v1/traces"
                else ExportLogsServiceResponse()
            ).SerializeToString()
            self.send_response(200)
            self.send_header("content-type", "application/x-protobuf")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return Handler


@contextmanager
def otlp_receiver(delay: float = 0.0, status: int = 200) -> Iterator[OtlpReceiver]:
    """A receiver serving on a free port of 127.0.0.1 until the block ends."""
    receiver = OtlpReceiver(delay=delay, status=status)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(receiver))
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
