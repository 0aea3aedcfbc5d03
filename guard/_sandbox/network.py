"""Which hosts the agent's commands may reach in ``allowlist`` mode: pure decisions.

The proxy (:mod:`guard._sandbox.proxy`) asks two questions of every request, in order:

1. :func:`match_host`: does an ``allow`` entry name this host and port? An entry is
   ``host``, ``*.domain`` (its subdomains, not the domain itself) or an IP literal, each
   optionally ``:port``; without a port it covers 80 and 443 only.
2. :func:`address_refusal`: may the address the name resolved to be dialled? Loopback,
   unspecified, link-local (cloud metadata) and multicast addresses never: the host's own
   services (the ledger's PostgreSQL, the approval page, databases) stay out of reach in
   every mode but ``open``. Private and other non-global addresses only when the entry that
   matched is that IP literal, so a public name that resolves to the operator's LAN (DNS
   rebinding) is refused.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "DEFAULT_PORTS",
    "PROXY_PORT",
    "AllowEntry",
    "Refusal",
    "address_refusal",
    "match_host",
    "parse_entry",
    "split_host_port",
]

DEFAULT_PORTS = (80, 443)
PROXY_PORT = 3128  # where the sandbox's bridge listens for the guard's proxy (argv, proxy)
Refusal = Literal["not-allowed", "host-address", "private-address", "unresolved", "bad-request"]

_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class AllowEntry:
    """One parsed ``allow`` entry: ``host`` lower-case, ``wildcard`` for ``*.domain``."""

    text: str
    host: str
    port: int | None
    wildcard: bool
    literal: bool


def split_host_port(text: str, default: int | None = None) -> tuple[str, int | None]:
    """``host:port``, ``[v6]:port``, ``host`` or ``[v6]`` as (lower-case host, port).

    Raises ``ValueError`` for a port that is not 1..65535 or a malformed bracket.
    """
    text = text.strip().lower()
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise ValueError(f"unclosed IPv6 bracket: {text!r}")
        host, rest = text[1:end], text[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError(f"text after the IPv6 address: {text!r}")
        port_text = rest[1:] if rest else ""
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host, port_text = text, ""
    if not port_text:
        return host.rstrip("."), default
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"ports are 1..65535: {text!r}")
    return host.rstrip("."), int(port_text)


def _literal(host: str) -> _Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def parse_entry(text: str) -> AllowEntry:
    """An ``allow`` entry as the policy validated it (see ``NetworkSettings``)."""
    host, port = split_host_port(text)
    wildcard = host.startswith("*.")
    if wildcard:
        host = host[2:]
    return AllowEntry(text, host, port, wildcard, _literal(host) is not None)


def match_host(host: str, port: int, allow: tuple[AllowEntry, ...]) -> AllowEntry | None:
    """The first entry that names ``host:port``; ``None`` when none does."""
    host = host.lower().rstrip(".")
    literal = _literal(host)
    for entry in allow:
        if entry.port is None and port not in DEFAULT_PORTS:
            continue
        if entry.port is not None and entry.port != port:
            continue
        if entry.literal:
            if literal is not None and literal == _literal(entry.host):
                return entry
        elif entry.wildcard:
            if host.endswith("." + entry.host):
                return entry
        elif host == entry.host:
            return entry
    return None


def address_refusal(address: str, entry: AllowEntry) -> Refusal | None:
    """Why the proxy must not dial ``address`` for a request ``entry`` allowed, if it must not."""
    ip = _literal(address.split("%", 1)[0])
    if ip is None:
        return "unresolved"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_loopback or ip.is_unspecified or ip.is_link_local or ip.is_multicast:
        return "host-address"
    if not ip.is_global and not (entry.literal and _literal(entry.host) == ip):
        return "private-address"
    return None
