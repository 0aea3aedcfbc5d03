"""Reading command-line JSON strictly and writing results: shared by the CLI modules."""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NoReturn, TypeVar

from pydantic import ConfigDict, RootModel

import audit
import audit.wire
from guard._errors import BadInputError

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "MAX_JSON_BYTES",
    "Listing",
    "emit",
    "end_at_once",
    "exit_process",
    "load_json_object",
    "read_text_arg",
    "stop_signals",
]


@contextlib.contextmanager
def stop_signals() -> Iterator[threading.Event]:
    """An event that SIGINT or SIGTERM sets while the block runs, whatever dispositions the
    process inherited: one started in the background of a non-interactive shell inherits
    SIGINT ignored, and Python then raises no ``KeyboardInterrupt`` for Ctrl-C or ``kill -INT``.
    The handlers run on the main thread, so it must wait in short slices (``event.wait(t)``)."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield stop  # only the main thread may install handlers: the caller's own loop ends it
        return

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


_at_once = threading.Event()


def end_at_once() -> None:
    """Let the process end without the interpreter's teardown once the command returns (a
    command whose every record is written and synced, and whose end someone waits for: the
    sidecar, whose exit pi waits for at the end of every session; tearing down a session's
    heap took 0.1 to 0.2 s). Exit handlers still run; the output streams are flushed."""
    _at_once.set()


def exit_process(code: int) -> NoReturn:
    """End the process with ``code`` (the console script's last step); see :func:`end_at_once`."""
    if not _at_once.is_set():
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    atexit._run_exitfuncs()
    os._exit(code)


_Item = TypeVar("_Item")


class Listing(RootModel[list[_Item]], Generic[_Item]):
    """A ``--json`` listing: a JSON array of one wire model.

    Its validator and schema are built on first use, like the wire models' (a plain
    ``RootModel[list[...]]`` builds both when the command modules load, for every command).
    """

    model_config = ConfigDict(defer_build=True)


MAX_JSON_BYTES = 1 << 20


def read_text_arg(value: str, what: str) -> str:
    """``-`` reads stdin; anything else is the text itself. Bounded and UTF-8 only."""
    data = (
        sys.stdin.buffer.read(MAX_JSON_BYTES + 1)
        if value == "-"
        else value.encode("utf-8", "surrogateescape")
    )
    if len(data) > MAX_JSON_BYTES:
        raise BadInputError(what, f"larger than {MAX_JSON_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(what, f"not valid UTF-8 at byte {exc.start}") from None


def read_file_arg(value: str, what: str) -> str:
    """``-`` reads stdin; anything else is a file path. Bounded and UTF-8 only."""
    if value == "-":
        return read_text_arg("-", what)
    try:
        with Path(value).open("rb") as handle:
            data = handle.read(MAX_JSON_BYTES + 1)
    except OSError as exc:
        raise BadInputError(what, f"cannot read file: {exc.strerror}", value) from None
    if len(data) > MAX_JSON_BYTES:
        raise BadInputError(what, f"larger than {MAX_JSON_BYTES} bytes", value)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(what, f"not valid UTF-8 at byte {exc.start}", value) from None


def load_json_object(text: str, what: str) -> dict[str, Any]:
    """Parse a JSON object strictly (:func:`audit.load_json`); anything else is a BadInputError."""
    try:
        value = audit.wire.load_json(text, max_bytes=MAX_JSON_BYTES)
    except audit.JsonInputError as exc:
        raise BadInputError(what, exc.problem, exc.value) from None
    if not isinstance(value, dict):
        raise BadInputError(what, "must be a JSON object", type(value).__name__)
    return value


def emit(value: BaseModel | dict[str, Any] | list[Any]) -> None:
    """Write one JSON document to stdout."""
    data = value if isinstance(value, dict | list) else value.model_dump(mode="json")
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()
