"""The process's own operational logs: structlog, to stderr only.

stdout carries data (JSON results or the JSON-RPC stream), so logs never go there.
On a TTY they are rendered for people; otherwise one JSON object per line.

structlog (and the asyncio it imports) costs a process ~50 ms: the sidecar, which pi starts
for every session, defers it (:func:`defer_logging`) and imports it only for the first line
its level lets through; until then a line below the level costs nothing.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from typing import TYPE_CHECKING, Any

from guard._home import LOG_LEVEL_ENV, env

if TYPE_CHECKING:
    import structlog

__all__ = ["Logger", "configure_logging", "defer_logging", "get_logger", "logging_configured"]

_LEVELS = logging.getLevelNamesMapping()
# The level defer_logging chose while structlog was not imported yet (None: nothing deferred).
_deferred: list[str] = []


def _chosen(level: str | None) -> str:
    return (level or env(LOG_LEVEL_ENV) or "warning").upper()


def configure_logging(level: str | None = None) -> None:
    """Log to stderr at ``level`` (default ``$PI_OPERATOR_GUARD_LOG_LEVEL`` or warning)."""
    import structlog

    _deferred.clear()
    chosen = _chosen(level)
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
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(chosen, logging.WARNING)),
        logger_factory=_stderr_logger,
        cache_logger_on_first_use=False,
    )


def logging_configured() -> bool:
    """Whether this process configured its logs (or deferred them: :func:`defer_logging`)."""
    if _deferred:
        return True
    structlog = sys.modules.get("structlog")
    return structlog is not None and bool(structlog.is_configured())


def defer_logging(level: str | None = None) -> None:
    """:func:`configure_logging` at the first line ``level`` lets through, not before; where
    structlog is imported already, at once."""
    if "structlog" in sys.modules:
        configure_logging(level)
    else:
        _deferred[:] = [_chosen(level)]


def _stderr_logger(*args: object) -> structlog.PrintLogger:
    # sys.stderr as it is when the line is written, not when logging was configured: a
    # replaced and closed stderr (an embedding host, pytest's capture) is never written to.
    import structlog

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

    return _StderrLogger(str(args[0]) if args else "guard")


class Logger:
    """A structlog logger whose every line names it (``"logger": name``), structlog imported
    only for a line that is written (while logging is deferred, lines below its level are
    dropped here, as structlog's level filter would drop them)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _line(self, method: str, event: str, args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
        if _deferred and "structlog" not in sys.modules:
            wanted = _LEVELS.get(_deferred[0], logging.WARNING)
            if _LEVELS.get("ERROR" if method == "exception" else method.upper(), 0) < wanted:
                return None
            configure_logging(_deferred[0])
        import structlog

        # Lazy: the name reaches the factory when a line is written, after configure_logging.
        return getattr(structlog.get_logger(self.name), method)(event, *args, **kw)

    def debug(self, event: str, *args: Any, **kw: Any) -> Any:
        return self._line("debug", event, args, kw)

    def info(self, event: str, *args: Any, **kw: Any) -> Any:
        return self._line("info", event, args, kw)

    def warning(self, event: str, *args: Any, **kw: Any) -> Any:
        return self._line("warning", event, args, kw)

    def error(self, event: str, *args: Any, **kw: Any) -> Any:
        return self._line("error", event, args, kw)

    def exception(self, event: str, *args: Any, **kw: Any) -> Any:
        return self._line("exception", event, args, kw)


def get_logger(name: str) -> Logger:
    """A logger whose every line names it (``"logger": name``); see :class:`Logger`."""
    return Logger(name)
