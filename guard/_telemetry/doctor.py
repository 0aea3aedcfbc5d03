"""The telemetry check of ``pi-guard doctor``: off, or on with its endpoint (reachable?), the
header variables it names (set?) and what the sidecars of the home exported and dropped."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import ValidationError

from guard._approvals import sidecar_dirs
from guard._checks import Check
from guard._errors import StateError
from guard._telemetry.config import TelemetryOff, export_config, traces_endpoint
from guard._telemetry.export import STATUS_FILE
from guard._telemetry.model import TelemetryStatus

__all__ = ["DEFAULT_ENDPOINT", "check_telemetry"]

DEFAULT_ENDPOINT = "http://localhost:4318/v1/traces"
"""Where the SDK posts when neither the policy nor an ``OTEL_*`` variable says."""
_PROBE_SECONDS = 1.0


def _reachable(url: str) -> str | None:
    """``None`` when a TCP connection to the endpoint opens, else why not."""
    parts = urlsplit(url)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        return str(exc)
    if not parts.hostname:
        return "no host in the URL"
    try:
        with socket.create_connection((parts.hostname, port), timeout=_PROBE_SECONDS):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def _sessions(home: Path) -> list[TelemetryStatus]:
    """The status each sidecar of the home wrote (a crashed one's too: its drops count)."""
    out: list[TelemetryStatus] = []
    try:
        directories = sidecar_dirs(home)
    except StateError:
        return out
    for directory in directories:
        try:
            text = (directory / STATUS_FILE).read_text(encoding="utf-8")
            out.append(TelemetryStatus.model_validate(json.loads(text)))
        except (OSError, ValueError, ValidationError):
            continue
    return out


def check_telemetry(home: Path) -> Check:
    """Off, or on: the endpoint, its header variables and the sessions' counts."""
    config = export_config(home)
    if isinstance(config, TelemetryOff):
        if config.reason == "policy-problem":
            return Check(
                name="telemetry",
                status="warn",
                reason="telemetry-policy-problem",
                detail=f"off: {config.detail}",
                fix="pi-guard policy check",
            )
        return Check(
            name="telemetry", status="ok", reason="telemetry-off", detail=f"off ({config.detail})"
        )
    url = traces_endpoint(config.settings, os.environ) or DEFAULT_ENDPOINT
    sessions = _sessions(home)
    exported = sum(s.exported for s in sessions)
    dropped = sum(s.dropped for s in sessions)
    detail = f"on: {url}; {exported} exported, {dropped} dropped by {len(sessions)} session(s)"
    errors = [s.last_error for s in sessions if s.last_error]
    if config.missing_headers:
        return Check(
            name="telemetry",
            status="warn",
            reason="telemetry-header-unset",
            subject=url,
            detail=detail + "; unset: " + ", ".join(config.missing_headers),
            fix="set the variables [telemetry] headers names in pi's environment",
        )
    unreachable = _reachable(url)
    if unreachable is not None:
        return Check(
            name="telemetry",
            status="warn",
            reason="telemetry-endpoint-unreachable",
            subject=url,
            detail=f"{detail}; the endpoint does not answer ({unreachable})",
            fix="start the collector, or correct [telemetry] endpoint",
        )
    if dropped or errors:
        return Check(
            name="telemetry",
            status="warn",
            reason="telemetry-dropping",
            subject=url,
            detail=detail + (f"; last error: {errors[-1]}" if errors else ""),
        )
    return Check(name="telemetry", status="ok", reason="telemetry-on", subject=url, detail=detail)
