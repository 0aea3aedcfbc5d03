"""Where a peer of the approval port runs: outside any sandbox, inside a bubblewrap sandbox
(every command of the agent's runs in one), in a namespace of its own, or nowhere found.

Contract: :func:`place_of` places a process of this pid namespace; :func:`tcp_peer_place`
finds the process at the other end of a loopback TCP connection first (its socket in
``/proc/net/tcp`` and ``tcp6`` by both addresses → the inode → every process whose
``/proc/PID/fd`` holds ``socket:[inode]``) and gives the strictest place of its holders.

* ``outside``: the same pid and user namespace as this process (the operator's terminal,
  browser, a ``pi-guard`` command);
* ``bwrap-sandbox``: another pid or user namespace, made by bubblewrap: the nearest ancestor
  in this pid namespace runs ``bwrap`` (bubblewrap always unshares the pid namespace, and a
  process never leaves the namespace it was made in, so every command of the agent's sandbox
  is placed here, whatever it runs or renames itself to);
* ``other-namespace``: another namespace made by something else (a browser's own sandbox:
  chromium's zygote makes user and pid namespaces for its renderers);
* ``unknown``: not found or not readable (the connection closed already, another user's
  process, a pid from another namespace): fail closed, it is nobody's word.

The Unix socket refuses every place but ``outside``; the page counts a wrong login against
the lock-out only from ``outside`` or ``other-namespace`` (see ``web.py``).
"""

from __future__ import annotations

import ipaddress
import os
from typing import Literal

__all__ = ["PeerPlace", "place_of", "tcp_peer_place"]

PeerPlace = Literal["outside", "bwrap-sandbox", "other-namespace", "unknown"]
_STRICTNESS: dict[PeerPlace, int] = {
    "outside": 0,
    "other-namespace": 1,
    "bwrap-sandbox": 2,
    "unknown": 3,
}
_MAX_ANCESTORS = 64
_NET_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


def _namespace(pid: int | str, kind: str) -> str:
    return os.readlink(f"/proc/{pid}/ns/{kind}")


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if line.startswith("PPid:"):
                return int(line.split()[1])
    raise OSError(f"no PPid for {pid}")


def place_of(pid: int) -> PeerPlace:
    """Where process ``pid`` (a pid of this namespace; 0 or less: none here) runs."""
    if pid <= 0:
        return "unknown"
    try:
        ours = {kind: _namespace("self", kind) for kind in ("pid", "user")}
        if all(_namespace(pid, kind) == ours[kind] for kind in ours):
            return "outside"
        # The nearest ancestor in this pid namespace made the namespace the peer runs in.
        current = pid
        for _ in range(_MAX_ANCESTORS):
            current = _parent(current)
            if current <= 0:
                return "unknown"
            if _namespace(current, "pid") == ours["pid"]:
                made_by = os.path.basename(os.readlink(f"/proc/{current}/exe"))
                return "bwrap-sandbox" if made_by == "bwrap" else "other-namespace"
    except (OSError, ValueError):
        return "unknown"
    return "unknown"


def _address(text: str) -> tuple[str, int]:
    """``0100007F:1F90`` (``/proc/net/tcp``'s host-order words, hex) as ``("127.0.0.1", 8080)``;
    an IPv4-mapped IPv6 address as its IPv4 form."""
    host, port = text.split(":")
    raw = bytes.fromhex(host)
    packed = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    address = ipaddress.ip_address(packed)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return str(address), int(port, 16)


def _socket_inode(local: tuple[str, int], remote: tuple[str, int]) -> int | None:
    """The inode of the socket whose own end is ``local`` and other end ``remote``."""
    for table in _NET_TABLES:
        try:
            with open(table, encoding="ascii", errors="replace") as handle:
                next(handle, None)  # the header
                for line in handle:
                    fields = line.split()
                    if len(fields) < 10:
                        continue
                    try:
                        if _address(fields[1]) == local and _address(fields[2]) == remote:
                            inode = int(fields[9])
                            return inode or None  # 0: closed already (TIME_WAIT)
                    except ValueError:
                        continue
        except OSError:
            continue
    return None


def _holders(inode: int) -> list[int]:
    """Every process of this pid namespace holding socket ``inode`` open."""
    wanted = f"socket:[{inode}]"
    found: list[int] = []
    with os.scandir("/proc") as entries:
        pids = [e.name for e in entries if e.name.isdigit()]
    for pid in pids:
        try:
            with os.scandir(f"/proc/{pid}/fd") as fds:
                if any(_link(fd.path) == wanted for fd in fds):
                    found.append(int(pid))
        except OSError:
            continue
    return found


def _link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def tcp_peer_place(peer: tuple[str, int], server: tuple[str, int]) -> PeerPlace:
    """Where the process at ``peer`` (its address and port) of a TCP connection to
    ``server`` runs: the strictest place of the processes holding its socket."""
    host, port = peer[0], int(peer[1])
    try:
        normal = str(ipaddress.ip_address(host))
    except ValueError:
        return "unknown"
    inode = _socket_inode((normal, port), (str(server[0]), int(server[1])))
    if inode is None:
        return "unknown"
    places = [place_of(pid) for pid in _holders(inode)]
    if not places:
        return "unknown"
    return max(places, key=_STRICTNESS.__getitem__)
