"""Whether and where this home's decisions are exported: the user policy's ``[telemetry]``
(a project file's is refused when the layers are read) and the standard ``OTEL_*``
variables, which count only once the user's file turns export on.

Reading is cheap on the default path: a user file that does not mention ``telemetry`` is
not parsed here, and nothing of the OpenTelemetry SDK is imported (see ``export``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from guard._policy import CONFIG_FILE_NAME, TelemetrySettings, read_layer

__all__ = ["ExportConfig", "TelemetryOff", "export_config", "traces_endpoint"]

TRACES_PATH = "/v1/traces"
_TRUE = ("1", "true", "yes", "on")


@dataclass(frozen=True, slots=True)
class TelemetryOff:
    """Export is off, and why (a reason code: ``not-enabled``, ``sdk-disabled``,
    ``policy-problem``)."""

    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class ExportConfig:
    """Export is on: the endpoint (``None``: the SDK's ``OTEL_EXPORTER_OTLP_*`` variables),
    the headers resolved from the variables the policy names (``None``: the SDK's
    ``OTEL_EXPORTER_OTLP_HEADERS``), those whose variable is unset, and the limits."""

    settings: TelemetrySettings
    endpoint: str | None
    headers: Mapping[str, str] | None
    missing_headers: tuple[str, ...] = field(default=())


def traces_endpoint(settings: TelemetrySettings, environ: Mapping[str, str]) -> str | None:
    """The traces URL the exporter posts to, as far as the policy and environment say."""
    if settings.endpoint is not None:
        return settings.endpoint.rstrip("/") + TRACES_PATH
    direct = environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
    if direct:
        return direct
    base = environ.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip()
    return base.rstrip("/") + TRACES_PATH if base else None


def export_config(
    home: Path, environ: Mapping[str, str] | None = None
) -> ExportConfig | TelemetryOff:
    """This home's export, from ``<home>/operator-guard.toml`` and ``environ``."""
    env = os.environ if environ is None else environ
    path = home / CONFIG_FILE_NAME
    try:
        with path.open("rb") as fh:
            head = fh.read(1 << 20)
    except OSError:
        return TelemetryOff("not-enabled", "no user policy file")
    if b"telemetry" not in head:
        return TelemetryOff("not-enabled", "[telemetry] enabled is not set")
    layer = read_layer(path, "user")
    settings = layer.telemetry
    if settings is None:
        bad = [p for p in layer.problems if p.key.startswith("telemetry")]
        if bad or layer.status == "invalid":
            first = bad[0] if bad else (layer.problems[0] if layer.problems else None)
            why = f"{first.key}: {first.message}" if first is not None else "unreadable"
            return TelemetryOff("policy-problem", f"{path}: {why}")
        return TelemetryOff("not-enabled", "[telemetry] enabled is not set")
    if not settings.enabled:
        return TelemetryOff("not-enabled", "[telemetry] enabled = false")
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() in _TRUE:
        return TelemetryOff("sdk-disabled", "OTEL_SDK_DISABLED is set")
    headers: dict[str, str] | None = None
    missing: list[str] = []
    if settings.headers:
        headers = {}
        for name, variable in settings.headers.items():
            value = env.get(variable)
            if value:
                headers[name] = value
            else:
                missing.append(variable)
    return ExportConfig(
        settings=settings,
        endpoint=traces_endpoint(settings, {}) if settings.endpoint else None,
        headers=headers,
        missing_headers=tuple(missing),
    )
