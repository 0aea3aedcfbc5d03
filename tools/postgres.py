"""A throwaway PostgreSQL server on 127.0.0.1 for the tests and ``make bench``.

Uses the server binaries of the Debian ``postgresql`` package (``initdb``, ``pg_ctl``,
``postgres``), found on ``$PATH`` or under ``/usr/lib/postgresql/<version>/bin``. The
cluster lives in a fresh temporary directory, listens on 127.0.0.1 on a free port only
(no Unix socket), and requires a password (scram-sha-256). ``initdb`` refuses to run as
root, so as root the cluster is run by an unprivileged system user (``postgres`` when the
package created it, else ``nobody``) through ``runuser``.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["INSTALL_HINT", "PostgresMissing", "PostgresServer", "find_bin_dir"]

INSTALL_HINT = (
    "PostgreSQL server binaries (initdb, pg_ctl) not found: install them with "
    "`apt-get install postgresql` (Debian/Ubuntu) or `brew install postgresql` (macOS); "
    "the tests start their own throwaway server from them"
)


class PostgresMissing(RuntimeError):
    """No ``initdb``/``pg_ctl`` on this machine."""


def find_bin_dir(path: str | None = None, debian_root: Path = Path("/usr/lib/postgresql")) -> Path:
    """The directory holding ``initdb`` and ``pg_ctl`` (on ``path``, default ``$PATH``, else
    the newest ``debian_root/<version>/bin``); raises :class:`PostgresMissing`."""
    found = shutil.which("initdb", path=path)
    if found and shutil.which("pg_ctl", path=path):
        return Path(found).resolve().parent
    debian = sorted(
        debian_root.glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    if debian:
        return debian[-1].parent
    raise PostgresMissing(INSTALL_HINT)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_as() -> str | None:
    """The unprivileged user to run the server as when we are root; ``None``: ourselves."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise PostgresMissing("running as root and no unprivileged user (postgres, nobody) exists")


@dataclass
class PostgresServer:
    """One cluster: :meth:`start` it, hand out :meth:`url`, :meth:`restart`, :meth:`stop`."""

    bin_dir: Path = field(default_factory=find_bin_dir)
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    user: str = "guard_admin"
    port: int = 0
    root: Path | None = None
    _as: str | None = None

    @property
    def data(self) -> Path:
        assert self.root is not None
        return self.root / "data"

    def url(self, database: str = "postgres", *, user: str | None = None) -> str:
        """A connection URL (with the password) for ``database``."""
        name = user or self.user
        return f"postgresql://{name}:{self.password}@127.0.0.1:{self.port}/{database}"

    def _cmd(self, *argv: str) -> list[str]:
        return ["runuser", "-u", self._as, "--", *argv] if self._as else list(argv)

    def _pg(self, tool: str, *args: str, timeout: float = 120) -> None:
        done = subprocess.run(
            self._cmd(str(self.bin_dir / tool), *args),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")

    def start(self) -> PostgresServer:
        """Create the cluster in a new temporary directory and start it."""
        self._as = _run_as()
        self.root = Path(tempfile.mkdtemp(prefix="pi-guard-pg-"))
        self.root.chmod(0o711)  # the server's user must reach data/ (it owns only that)
        self.data.mkdir(mode=0o700)
        secret = self.root / "pwfile"
        secret.write_text(self.password + "\n")
        if self._as:
            entry = pwd.getpwnam(self._as)
            for path in (self.data, secret):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        secret.chmod(0o600)
        self._pg(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            self.user,
            "--pwfile",
            str(secret),
            "--auth=scram-sha-256",
            "-E",
            "UTF8",
            "--locale=C",
        )
        secret.unlink()
        for _ in range(5):
            self.port = _free_port()
            try:
                self._ctl_start()
                return self
            except RuntimeError:
                continue
        raise RuntimeError(f"PostgreSQL would not start; see {self.data / 'server.log'}")

    def _ctl_start(self) -> None:
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories='' "
            "-c max_connections=200 -c shared_buffers=32MB"
        )
        self._pg(
            "pg_ctl", "-D", str(self.data), "-l", str(self.data / "server.log"),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip

    def restart(self, *, mode: str = "immediate") -> None:
        """Stop the server (``immediate``: as a crash would, no shutdown checkpoint) and
        start it again on the same port."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")
        self._ctl_start()

    def kill(self, *, mode: str = "immediate") -> None:
        """Stop the server, leaving the cluster in place (:meth:`restart` brings it back)."""
        self._pg("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def resume(self) -> None:
        """Start a server stopped by :meth:`kill`."""
        self._ctl_start()

    def stop(self) -> None:
        """Stop the server and remove the cluster."""
        if self.root is None:
            return
        with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
            self._pg("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)
        self.root = None
