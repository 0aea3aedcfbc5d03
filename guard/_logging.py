"""The process's own operational logs: structlog, to stderr only.

stdout carries data (JSON results or the JSON-RPC stream), so logs never go there.
On a TTY they are rendered for people; otherwise one JSON object per line.
"""

from __future__ import annotations

import contextlib
import logging
import sys

import structlog

from guard._home import env

__all__ = ["configure_logging", "get_logger"]


def configure_logging(level: str | None = None) -> None:
    """Log to stderr at ``level`` (default ``$PI_OPERATOR_GUARD_LOG_LEVEL`` or warning)."""
    chosen = (level or env("LOG_LEVEL") or "warning").upper()
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer(colors=False)
        if sys.stderr.isatty()
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.stdlib.add_logger_name,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(chosen, logging.WARNING)
        ),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


class _StderrLogger(structlog.PrintLogger):
    """A print logger with the name it was asked for (``add_logger_name`` reads it)."""

    def __init__(self, name: str) -> None:
        super().__init__(sys.stderr)
        self.name = name

    def msg(self, message: str) -> None:
        # A closed stderr (pi died) must not end what the sidecar still owes the audit log.
        with contextlib.suppress(OSError):
            super().msg(message)

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def _stderr_logger(*args: object) -> structlog.PrintLogger:
    # sys.stderr as it is when the line is written, not when logging was configured: a
    # replaced and closed stderr (an embedding host, pytest's capture) is never written to.
    return _StderrLogger(str(args[0]) if args else "guard")


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    """A structlog logger whose every line names it (``"logger": name``)."""
    # Lazy: the name reaches the factory when a line is written, after configure_logging.
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger
