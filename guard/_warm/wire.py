"""The warm start's protocol on ``<home>/warm.sock`` (standard library only).

One connection per sidecar::

    launcher -> server   header (magic, payload length) with 4 fds attached (SCM_RIGHTS):
                         stdin, stdout, stderr and the launcher's working directory;
                         then the payload: JSON of :class:`Request`
    server -> launcher   one line: {"pid": N} (a sidecar is forked and waits) or
                         {"refused": reason} (nothing was forked: start cold)
    launcher -> server   one byte, ``ACK``: the launcher takes the sidecar (it never starts
                         one of its own after this); the server releases the sidecar
    server -> launcher   one line when the sidecar ended: {"exit": code} or {"signal": n}

The sidecar waits for its release before it touches the fds it was given, so a launcher that
got no ``pid`` line (or sent no ``ACK``) may start a cold sidecar: the forked one never runs.
A connection that closes while its sidecar runs is a launcher that died: the server ends
the sidecar (SIGTERM), as pi's end would have.
"""

from __future__ import annotations

import json
import struct
from typing import Any, NamedTuple

__all__ = [
    "ACK",
    "FDS",
    "HEADER",
    "MAGIC",
    "MAX_PAYLOAD",
    "SERVE_ARGV",
    "ProtocolError",
    "Request",
    "decode_line",
    "encode_line",
]

MAGIC = b"PGW1"
HEADER = struct.Struct("!4sI")
MAX_PAYLOAD = 4 * 1024 * 1024
"""An environment larger than this is no pi's (Linux allows 2 MiB of argv and env)."""
FDS = 4
"""stdin, stdout, stderr and the working directory."""
ACK = b"A"
SERVE_ARGV = (("serve",), ("serve", "--verify-only"))
"""The only command lines a fork server's child runs (``pi-guard`` arguments)."""


class ProtocolError(Exception):
    """A message that is not this protocol's (its reason code is ``args[0]``)."""

    @property
    def reason(self) -> str:
        return str(self.args[0])


class Request(NamedTuple):
    """What a launcher asks for: a sidecar run as it would have run in its place."""

    argv: tuple[str, ...]
    env: dict[str, str]
    umask: int
    nice: int
    ignored: tuple[int, ...]
    rlimits: dict[str, tuple[int, int]]
    python: str
    version: str
    roots: tuple[str, ...]

    def encode(self) -> bytes:
        data = {
            "argv": list(self.argv),
            "env": self.env,
            "umask": self.umask,
            "nice": self.nice,
            "ignored": list(self.ignored),
            "rlimits": {k: list(v) for k, v in self.rlimits.items()},
            "python": self.python,
            "version": self.version,
            "roots": list(self.roots),
        }
        return json.dumps(data, ensure_ascii=True, separators=(",", ":")).encode("ascii")

    @classmethod
    def decode(cls, payload: bytes) -> Request:
        """Parse and check the shape of a payload; raises :class:`ProtocolError`."""
        try:
            data = json.loads(payload.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            raise ProtocolError("payload-not-json") from None
        if not isinstance(data, dict):
            raise ProtocolError("payload-not-object")
        try:
            request = cls(
                argv=tuple(_strings(data["argv"])),
                env=_env(data["env"]),
                umask=_int(data["umask"], 0, 0o777),
                nice=_int(data["nice"], -20, 19),
                ignored=tuple(_int(s, 1, 64) for s in _list(data["ignored"])),
                rlimits=_rlimits(data["rlimits"]),
                python=_string(data["python"]),
                version=_string(data["version"]),
                roots=tuple(_strings(data["roots"])),
            )
        except KeyError as exc:
            raise ProtocolError(f"missing-{exc.args[0]}") from None
        if request.argv not in SERVE_ARGV:
            raise ProtocolError("argv-not-serve")
        return request


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ProtocolError("field-not-list")
    return value


def _string(value: Any) -> str:
    if not isinstance(value, str) or "\0" in value:
        raise ProtocolError("field-not-string")
    return value


def _strings(value: Any) -> list[str]:
    return [_string(v) for v in _list(value)]


def _int(value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise ProtocolError("field-not-int")
    return value


def _env(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ProtocolError("env-not-object")
    env = {_string(k): _string(v) for k, v in value.items()}
    if any(not k or "=" in k for k in env):
        raise ProtocolError("env-bad-name")
    return env


def _rlimits(value: Any) -> dict[str, tuple[int, int]]:
    if not isinstance(value, dict):
        raise ProtocolError("rlimits-not-object")
    limits: dict[str, tuple[int, int]] = {}
    for name, pair in value.items():
        items = _list(pair)
        if len(items) != 2:
            raise ProtocolError("rlimit-not-pair")
        limits[_string(name)] = (_int(items[0], -1, 2**63 - 1), _int(items[1], -1, 2**63 - 1))
    return limits


def encode_line(message: dict[str, Any]) -> bytes:
    """One reply line."""
    return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def decode_line(line: bytes) -> dict[str, Any]:
    """One reply line parsed; raises :class:`ProtocolError`."""
    try:
        data = json.loads(line)
    except ValueError:
        raise ProtocolError("reply-not-json") from None
    if not isinstance(data, dict):
        raise ProtocolError("reply-not-object")
    return data
