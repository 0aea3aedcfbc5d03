"""pi's interactive TUI on a pseudo-terminal, for the tests of what the operator types.

RPC mode has no keyboard: what a key does while a dialog is open (pi's select moves on
``j``/``k`` and takes Enter) can only be seen with the real TUI on a terminal.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

# CSI and OSC sequences, and the single-character escapes pi's renderer writes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")


class Terminal:
    """One process on a pty of ``rows`` x ``cols``; its output is read on a thread."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        rows: int = 50,
        cols: int = 160,
    ) -> None:
        self._argv = list(argv)
        self._cwd = cwd
        self._env = {**env, "TERM": "xterm-256color", "COLUMNS": str(cols), "LINES": str(rows)}
        self._size = struct.pack("HHHH", rows, cols, 0, 0)
        self._raw = bytearray()
        self._lock = threading.Lock()
        self._fd = -1
        self._process: subprocess.Popen[bytes] | None = None
        self._reader: threading.Thread | None = None

    def __enter__(self) -> Terminal:
        main, sub = pty.openpty()
        termios.tcsetwinsize(sub, struct.unpack("HHHH", self._size)[:2])
        self._process = subprocess.Popen(
            self._argv,
            cwd=self._cwd,
            env=self._env,
            stdin=sub,
            stdout=sub,
            stderr=sub,
            start_new_session=True,
            # SIGINT as the terminal gives it, whatever the test runner inherited.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        os.close(sub)
        self._fd = main
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        if self._reader is not None:
            self._reader.join(timeout=5)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self._fd], [], [], 0.2)
                if not ready:
                    if self._process is not None and self._process.poll() is not None:
                        return
                    continue
                chunk = os.read(self._fd, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self._raw.extend(chunk)

    def text(self) -> str:
        """Everything written so far, without escape sequences."""
        with self._lock:
            raw = bytes(self._raw)
        return _ANSI.sub("", raw.decode("utf-8", "replace"))

    def mark(self) -> int:
        """A position in the output, for :meth:`wait_for` to look only after it."""
        return len(self.text())

    def wait_for(self, needle: str, *, after: int = 0, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.text()[after:]:
            if time.monotonic() > deadline:
                tail = self.text()[-2000:]
                raise AssertionError(
                    f"{needle!r} not shown within {timeout} s; the screen:\n{tail}"
                )
            if self._process is not None and self._process.poll() is not None:
                raise AssertionError(f"pi exited before showing {needle!r}:\n{self.text()[-2000:]}")
            time.sleep(0.05)

    def type(self, keys: str, *, pause: float = 0.05) -> None:
        """Send ``keys`` one at a time, as a person types them."""
        for key in keys:
            self.press(key, pause=pause)

    def press(self, sequence: str, *, pause: float = 0.05) -> None:
        """Send ``sequence`` in one write: a key that is several bytes (an arrow), a paste."""
        os.write(self._fd, sequence.encode())
        time.sleep(pause)
