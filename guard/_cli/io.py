"""Reading command-line JSON strictly and writing results: shared by the CLI modules."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from guard._errors import BadInputError

__all__ = ["MAX_JSON_BYTES", "emit", "load_json_object", "read_text_arg"]

MAX_JSON_BYTES = 1 << 20


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise BadInputError("json", "duplicate key", key)
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise BadInputError("json", "NaN and Infinity are not JSON", name)


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
    """Parse a JSON object, refusing duplicate keys, NaN/Infinity and other top-level types."""
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise BadInputError(
            what, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise BadInputError(what, "JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise BadInputError(what, "must be a JSON object", type(value).__name__)
    return value


def emit(value: BaseModel | dict[str, Any] | list[Any]) -> None:
    """Write one JSON document to stdout."""
    data = value.model_dump(mode="json") if isinstance(value, BaseModel) else value
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    sys.stdout.flush()
