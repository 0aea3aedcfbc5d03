"""What an event's data becomes before it is written: a JSON round trip, previews redacted
or dropped, the operator's reason redacted and bounded, then the event's model."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from audit._errors import EventDataError
from audit._records.canonical import canonical_json
from audit._records.fields import MAX_OPERATOR_REASON_CHARS
from audit._records.models import EVENT_MODELS
from audit._redaction.redact import redact_preview

__all__ = ["normalize"]


def normalize(event: str, data: Mapping[str, Any], *, previews: bool) -> dict[str, Any]:
    """``data`` as it will be written for ``event``: plain JSON, previews redacted (or
    dropped without ``previews``), the operator's reason redacted and bounded, validated by
    the event's model. Raises :class:`audit.EventDataError`; nothing is written."""
    if not isinstance(data, Mapping):
        raise EventDataError(event, [f"(data): must be a mapping, not {type(data).__name__}"])
    # A JSON round trip turns tuples into lists and refuses what has no JSON form.
    plain = json.loads(canonical_json(dict(data)))
    preview = plain.get("preview")
    if "preview" in plain and (not previews or preview == ""):
        del plain["preview"]
    elif isinstance(preview, str):
        plain["preview"] = redact_preview(preview)
    # The operator's own words: kept even without previews, but redacted and bounded alike.
    reason = plain.get("operatorReason")
    if isinstance(reason, str):
        plain["operatorReason"] = redact_preview(reason, limit=MAX_OPERATOR_REASON_CHARS)
        if not plain["operatorReason"]:
            del plain["operatorReason"]
    try:
        model = EVENT_MODELS[event].model_validate(plain)
    except ValidationError as exc:
        raise EventDataError(event, _errors_of(exc)) from None
    result: dict[str, Any] = model.model_dump(mode="json", exclude_none=True)
    return result


def _errors_of(exc: ValidationError) -> list[str]:
    out: list[str] = []
    for err in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in err["loc"]) or "(data)"
        out.append(f"{where}: {err['msg']}")
    return out
