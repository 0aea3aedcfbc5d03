"""What the telemetry wing says of itself and hands to its exporter: the export's status
(``/guard``, ``pi-guard doctor``) and one guarded call as a span's facts (no SDK here)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from audit.wire import WIRE_CONFIG

__all__ = [
    "SEMCONV_VERSION",
    "AttributeValue",
    "CallSpan",
    "TelemetryState",
    "TelemetryStatus",
]

SEMCONV_VERSION = "1.44.0"
"""The OpenTelemetry semantic conventions the spans follow (the GenAI ``execute_tool`` span,
development status); ``docs/telemetry.md`` names the attributes."""

AttributeValue = str | bool | int | tuple[str, ...]
TelemetryState = Literal["off", "on", "broken"]


@dataclass(frozen=True, slots=True)
class CallSpan:
    """One guarded call, as its ``execute_tool`` span carries it: built from the audit
    records of the call alone (what the log holds, already redacted), so nothing reaches
    a collector that the log would not show."""

    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, AttributeValue]
    error_type: str | None = None


class TelemetryStatus(BaseModel):
    """The export as this process sees it: on or off (and why), where to, and how many
    calls were exported, dropped (queue full, or the export failed) or still wait."""

    model_config = WIRE_CONFIG

    state: TelemetryState
    reason: str = Field(max_length=200)
    endpoint: str | None = None
    exported: int = 0
    dropped: int = 0
    queued: int = 0
    last_error: str | None = Field(default=None, max_length=500)
    missing_headers: tuple[str, ...] = ()

    def line(self) -> str:
        """One line for ``/guard`` and ``doctor``."""
        if self.state == "off":
            return f"off ({self.reason})"
        where = self.endpoint or "the OTEL_EXPORTER_OTLP_* endpoint"
        text = f"{self.state}: {where}; {self.exported} exported, {self.dropped} dropped"
        if self.queued:
            text += f", {self.queued} queued"
        if self.missing_headers:
            text += "; unset header variables: " + ", ".join(self.missing_headers)
        if self.last_error:
            text += f"; last error: {self.last_error}"
        return text
