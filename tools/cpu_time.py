"""The CPU time of a whole command, daemons included: ``python -m tools.cpu_time -- make test``.

``time`` counts only the children a command waited for: a process that left its parent (the
guard's fork server, a sidecar of a pi that was killed, a PostgreSQL the tests started) is
missing from it. This runs the command in a control group of its own, which every descendant
stays in, and prints the group's CPU time (user + sys) once the command and what it left
behind have ended (it waits a minute at most for those, and says how many still run):

    cpu: 1234.5 s (cgroup v1); wall: 800.1 s; exit: 0

Linux only, as root or with a delegated group (``--parent``); where no group can be made it
says so and counts what ``wait4`` reports, as ``time`` does (``(children only)``). The
command's exit code is this program's. Standard library only: repo tooling, not in the wheel.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["CpuGroup", "main"]

_V1 = Path("/sys/fs/cgroup/cpuacct")
_V2 = Path("/sys/fs/cgroup")
_SETTLE_SECONDS = 60.0


class CpuGroup:
    """A fresh control group that counts CPU time: v2 (``cpu.stat``) or v1 ``cpuacct``."""

    def __init__(self, parent: Path, kind: str) -> None:
        self.path = parent / f"cpu-time-{os.getpid()}"
        self.kind = kind
        self.path.mkdir()

    @classmethod
    def make(cls, parent: Path | None) -> CpuGroup | None:
        """A group under ``parent`` (default: the v2 root, else v1 ``cpuacct``); ``None``
        where none can be made here."""
        candidates: list[tuple[Path, str]] = []
        if parent is not None:
            candidates.append((parent, "v2" if (parent / "cgroup.controllers").exists() else "v1"))
        else:
            candidates += [(_V2, "v2"), (_V1, "v1")]
        for path, kind in candidates:
            if kind == "v2" and not (path / "cgroup.controllers").exists():
                continue
            try:
                return cls(path, kind)
            except OSError:
                continue
        return None

    def join(self) -> None:
        """Move the calling process (and so everything it starts) into the group."""
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def seconds(self) -> float:
        if self.kind == "v1":
            return int((self.path / "cpuacct.usage").read_text()) / 1e9
        for line in (self.path / "cpu.stat").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "usage_usec":
                return int(value) / 1e6
        raise OSError("cpu.stat has no usage_usec")

    def settle(self, limit: float) -> int:
        """Wait up to ``limit`` seconds for what the command left behind to end; how many
        processes still run in the group then."""
        deadline = time.monotonic() + limit
        while True:
            left = len((self.path / "cgroup.procs").read_text().split())
            if left == 0 or time.monotonic() >= deadline:
                return left
            time.sleep(0.1)

    def remove(self) -> None:
        # A process that just ended can hold the group a moment longer (EBUSY); one left
        # behind that still runs keeps it until it ends.
        for _ in range(20):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.cpu_time", description="The CPU time of a whole command."
    )
    parser.add_argument("--parent", type=Path, default=None, help="make the group under this one")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given (python -m tools.cpu_time -- COMMAND ...)")
    group = CpuGroup.make(args.parent)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(command, preexec_fn=group.join if group else None)
    except OSError as exc:
        sys.stderr.write(f"cpu_time: cannot run {command[0]}: {exc.strerror}\n")
        if group:
            group.remove()
        return 127
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    code = os.waitstatus_to_exitcode(status)
    left = 0
    if group is None:
        cpu, how = usage.ru_utime + usage.ru_stime, "children only: no control group here"
    else:
        left = group.settle(_SETTLE_SECONDS)  # what it left behind ends on its own idle time
        cpu, how = group.seconds(), f"cgroup {group.kind}"
        group.remove()
    still = f"; still running: {left}" if left else ""
    sys.stderr.write(f"cpu: {cpu:.1f} s ({how}); wall: {wall:.1f} s; exit: {code}{still}\n")
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    raise SystemExit(main())
