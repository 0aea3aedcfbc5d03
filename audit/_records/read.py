"""Reading a log's records back, each checked against the chain (the signed head is not)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from pydantic import ValidationError

from audit._errors import LogFormatError, LogLineError
from audit._records.chain import Chain, check_body, open_snapshot
from audit._records.models import AuditRecord

__all__ = ["read_records"]


def read_records(path: str | os.PathLike[str]) -> Iterator[AuditRecord]:
    """Yield every record of the log at ``path``, checking hashes, ``seq`` and ``prev``.

    The signed head is not checked here (use :func:`audit.verify.verify_log`). Raises
    :class:`audit.LogFormatError` at the first line that breaks the chain and
    :class:`audit.LogNotFoundError` if there is no log.
    """
    log_path = Path(path)
    stream, size, _ = open_snapshot(log_path, with_head=False)
    with stream:
        yield from _records(log_path, stream, size)


def _records(path: Path, stream: IO[bytes], size: int) -> Iterator[AuditRecord]:
    chain = Chain()
    done = 0
    if size == 0:
        return
    for lineno, raw in enumerate(stream, start=1):
        line = raw
        done += len(line)
        if done > size:
            line = line[: len(line) - (done - size)]
            done = size
        try:
            if not line.endswith(b"\n"):
                raise LogLineError("torn-line", "the last line has no line feed")
            rec = check_body(line[:-1])
            chain.accept(rec)
        except LogLineError as fault:
            raise LogFormatError(path, lineno, fault.kind, fault.detail) from None
        try:
            yield AuditRecord.model_validate(rec)
        except ValidationError:
            raise LogFormatError(
                path, lineno, "malformed-line", "a field has the wrong type or form"
            ) from None
        if done >= size:
            return
