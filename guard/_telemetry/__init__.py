"""OpenTelemetry export of the guard's decisions: one ``execute_tool`` span per guarded call.

``config`` (whether and where: the user policy's ``[telemetry]`` and the ``OTEL_*``
variables), ``calls`` (a call's audit records folded into the span's facts, after the log's
redaction), ``export`` (:class:`Telemetry`: finished calls written to the export process,
at most a queue's worth at once; drops counted), ``child`` (that process: it imports the SDK
and posts), ``doctor`` (the check of ``pi-guard doctor``) and ``model`` (the status, a
call's span facts, the semantic conventions' version). Nothing here is imported unless
export is configured, and the SDK only once it is on.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._telemetry.calls import CALL_EVENTS, CallFolder
    from guard._telemetry.config import ExportConfig, TelemetryOff, export_config
    from guard._telemetry.doctor import check_telemetry
    from guard._telemetry.export import Telemetry, off_status, open_telemetry
    from guard._telemetry.model import SEMCONV_VERSION, CallSpan, TelemetryStatus

__all__ = [
    "CALL_EVENTS",
    "SEMCONV_VERSION",
    "CallFolder",
    "CallSpan",
    "ExportConfig",
    "Telemetry",
    "TelemetryOff",
    "TelemetryStatus",
    "check_telemetry",
    "export_config",
    "off_status",
    "open_telemetry",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "CALL_EVENTS": "guard._telemetry.calls",
    "CallFolder": "guard._telemetry.calls",
    "ExportConfig": "guard._telemetry.config",
    "TelemetryOff": "guard._telemetry.config",
    "export_config": "guard._telemetry.config",
    "check_telemetry": "guard._telemetry.doctor",
    "Telemetry": "guard._telemetry.export",
    "off_status": "guard._telemetry.export",
    "open_telemetry": "guard._telemetry.export",
    "SEMCONV_VERSION": "guard._telemetry.model",
    "CallSpan": "guard._telemetry.model",
    "TelemetryStatus": "guard._telemetry.model",
}

# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
