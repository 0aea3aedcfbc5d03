"""UTC timestamps in the one form the log uses: RFC 3339, milliseconds, ``Z``."""

from __future__ import annotations

from datetime import UTC, datetime

from audit._errors import UsageError

__all__ = ["format_ts", "now_ts", "parse_instant"]


def format_ts(moment: datetime) -> str:
    """``2026-11-22T01:00:00.000Z`` for an aware datetime (converted to UTC)."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now_ts() -> str:
    """The current time as a log timestamp."""
    return format_ts(datetime.now(UTC))


def parse_instant(value: datetime | str, what: str) -> datetime:
    """An aware UTC datetime from a datetime or an ISO 8601 string; naive means UTC."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip())
        except ValueError:
            raise UsageError(what, "not an ISO 8601 date or time", value) from None
    elif isinstance(value, datetime):
        moment = value
    else:
        raise UsageError(what, "must be a datetime or an ISO 8601 string", value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)
