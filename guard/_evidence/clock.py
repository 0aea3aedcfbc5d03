"""UTC timestamps in the one wire form we use: RFC 3339, milliseconds, ``Z``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from guard._errors import BadInputError

__all__ = ["format_iso", "now_utc", "parse_iso"]

_ISO_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def now_utc() -> datetime:
    """The current time, UTC, truncated to milliseconds (what the wire can carry)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond - now.microsecond % 1000)


def format_iso(moment: datetime) -> str:
    """``2026-11-22T01:00:00.000Z`` (RFC 3339 section 5.6, UTC, milliseconds)."""
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def parse_iso(text: str, what: str = "timestamp") -> datetime:
    """Parse exactly the form :func:`format_iso` writes; anything else is refused."""
    if not isinstance(text, str) or not _ISO_RE.match(text):
        raise BadInputError(what, "must be UTC RFC 3339 with milliseconds and Z", text)
    try:
        # The regex fixed the shape; fromisoformat is ~10x cheaper than strptime.
        return datetime.fromisoformat(text[:-1]).replace(tzinfo=UTC)
    except ValueError:
        raise BadInputError(what, "is not a real date and time", text) from None


def add_seconds(moment: datetime, seconds: int) -> datetime:
    return moment + timedelta(seconds=seconds)
