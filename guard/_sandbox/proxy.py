"""The allowlist mode's HTTP proxy: the one way out of a command's empty network.

It runs in the sidecar (outside the sandbox), listening on a Unix socket that the sandbox
binds read-only; inside, a small bridge (``argv.bridge_argv``) forwards
``127.0.0.1:PROXY_PORT`` to it and ``HTTP(S)_PROXY`` point there. It speaks
``CONNECT host:port`` (HTTPS, git, anything tunnelled: the proxy never sees inside TLS) and
absolute-form ``GET http://host/…`` (RFC 9112 §3.2.2), and answers everything else, and
every host no ``allow`` entry names, with ``403`` and one line naming the guard.

The name is resolved here, once, and the address checked before it is dialled
(:func:`network.address_refusal`), so the command cannot reach the host's loopback
services or a LAN address through a name it controls. Each refusal is kept for the
sidecar to audit on its own thread (:meth:`NetworkProxy.take_refusals`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from guard._logging import get_logger
from guard._sandbox.network import (
    PROXY_PORT,
    AllowEntry,
    Refusal,
    address_refusal,
    match_host,
    parse_entry,
    split_host_port,
)

__all__ = ["PROXY_PORT", "NetworkProxy", "ProxyRefusal"]

_HEAD_LIMIT = 64 * 1024
_HEAD_TIMEOUT = 30.0
_DIAL_TIMEOUT = 15.0
_KEEP_REFUSALS = 256
_HOP_HEADERS = (b"proxy-", b"connection:", b"keep-alive:")

_log = get_logger("guard.sandbox.proxy")


@dataclass(frozen=True)
class ProxyRefusal:
    """A request the proxy refused: the host and port asked for, and why."""

    host: str
    port: int
    reason: Refusal


class NetworkProxy:
    """An allowlisting HTTP proxy on ``socket_path``, served by a thread of its own."""

    def __init__(self, socket_path: Path, allow: tuple[str, ...]) -> None:
        self.socket_path = socket_path
        self.allow: tuple[AllowEntry, ...] = tuple(parse_entry(a) for a in allow)
        self._refusals: list[ProxyRefusal] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None

    # -- life --------------------------------------------------------------------------------

    def start(self) -> None:
        """Listen (the socket exists when this returns); raises ``OSError`` if it cannot."""
        self.socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(str(self.socket_path))
            # The sandbox runs commands as the same user: only that user may connect.
            os.chmod(self.socket_path, 0o600)
            listener.listen(128)
        except OSError:
            listener.close()
            raise
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(listener, ready), name="guard-proxy", daemon=True
        )
        self._thread.start()
        ready.wait()

    def stop(self) -> None:
        """Stop serving and remove the socket."""
        loop, stopped = self._loop, self._stopped
        if loop is not None and stopped is not None:
            loop.call_soon_threadsafe(stopped.set)
        if self._thread is not None:
            self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self.socket_path.unlink()

    def take_refusals(self) -> list[ProxyRefusal]:
        """The refusals since the last call, each distinct one once per call (at most 256)."""
        with self._lock:
            taken, self._refusals = self._refusals, []
        return taken

    def _serve(self, listener: socket.socket, ready: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main(listener, ready))
        finally:
            loop.close()

    async def _main(self, listener: socket.socket, ready: threading.Event) -> None:
        self._stopped = asyncio.Event()
        server = await asyncio.start_unix_server(self._handle, sock=listener, limit=_HEAD_LIMIT)
        ready.set()
        async with server:
            await self._stopped.wait()

    # -- one request -------------------------------------------------------------------------

    def _refuse(self, host: str, port: int, reason: Refusal) -> None:
        refusal = ProxyRefusal(host[:253], port, reason)
        with self._lock:
            if refusal not in self._refusals and len(self._refusals) < _KEEP_REFUSALS:
                self._refusals.append(refusal)
        _log.info("network-refused", host=refusal.host, port=port, reason=reason)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._request(reader, writer)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
            pass
        except asyncio.LimitOverrunError:
            await _answer(writer, 431, "the request head is too large")
        finally:
            writer.close()
            with contextlib.suppress(OSError, ConnectionError):
                await writer.wait_closed()

    async def _request(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT)
        line, _, rest = head.partition(b"\r\n")
        parts = line.decode("latin-1").split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            await _answer(writer, 400, "not an HTTP/1 proxy request")
            return
        method, target, version = parts
        try:
            if method == "CONNECT":
                host, port = split_host_port(target)
                path = None
            else:
                url = urlsplit(target)
                if url.scheme != "http" or not url.hostname:
                    raise ValueError(target)
                host, port = url.hostname, url.port or 80
                path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        except ValueError:
            self._refuse(target[:253], 0, "bad-request")
            await _answer(writer, 400, "only CONNECT host:port and absolute http:// requests")
            return
        if port is None or not host:
            await _answer(writer, 400, "CONNECT needs host:port")
            return
        entry = match_host(host, port, self.allow)
        if entry is None:
            self._refuse(host, port, "not-allowed")
            await _answer(writer, 403, f"{host}:{port} is not in the sandbox's network allowlist")
            return
        upstream = await self._dial(host, port, entry)
        if isinstance(upstream, str):
            self._refuse(host, port, upstream)
            await _answer(writer, 403, f"{host}:{port} resolves to an address the sandbox refuses")
            return
        up_reader, up_writer = upstream
        try:
            if path is None:
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
            else:
                up_writer.write(_origin_form(method, path, version, rest))
                await up_writer.drain()
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            up_writer.close()

    async def _dial(
        self, host: str, port: int, entry: AllowEntry
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | Refusal:
        """Resolve once, check each address, dial the first allowed one (or say why not)."""
        loop = asyncio.get_running_loop()
        try:
            infos = await asyncio.wait_for(
                loop.getaddrinfo(host, port, type=socket.SOCK_STREAM), _DIAL_TIMEOUT
            )
        except (TimeoutError, OSError):
            return "unresolved"
        reason: Refusal = "unresolved"
        for _family, _type, _proto, _name, sockaddr in infos:
            address = str(sockaddr[0])
            refusal = address_refusal(address, entry)
            if refusal is not None:
                reason = refusal
                continue
            try:
                return await asyncio.wait_for(asyncio.open_connection(address, port), _DIAL_TIMEOUT)
            except (TimeoutError, OSError):
                reason = "unresolved"
        return reason


def _origin_form(method: str, path: str, version: str, rest: bytes) -> bytes:
    """The request as the origin expects it: origin-form target, no hop-by-hop headers, and
    ``Connection: close`` so a second request on it cannot name another host."""
    lines = [f"{method} {path} {version}".encode("latin-1")]
    for header in rest.split(b"\r\n"):
        if header and not header.lower().startswith(_HOP_HEADERS):
            lines.append(header)
    lines.append(b"Connection: close")
    return b"\r\n".join(lines) + b"\r\n\r\n"


async def _answer(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    reason = {400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large"}
    body = f"operator-guard: {why}\n".encode()
    writer.write(
        f"HTTP/1.1 {status} {reason[status]}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError, ConnectionError):
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (OSError, ConnectionError):
        writer.close()
