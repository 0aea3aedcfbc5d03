"""Evidence consumed (``consume``): whether the call about to run carries evidence of its
approval, once. The envelope comes with the request or from pi's session file (the shim's
entry for the call); the guard consumes it and audits the result, a verify-only sidecar's
monitor consumes it with the public keyring alone and logs it (it signs nothing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from guard._errors import RpcFault
from guard._logging import get_logger
from guard._pi import session_envelopes
from guard._sidecar.framing import RpcCode
from guard._sidecar.session.home import Home
from guard._sidecar.wire import ConsumeParams

__all__ = ["Consumer"]

_log = get_logger("guard.sidecar")


class Consumer:
    """``consume`` (see the module), by the home's guard, or verify-only by its monitor."""

    def __init__(self, home: Home, *, verify_only: bool) -> None:
        self.home = home
        self.verify_only = verify_only

    def consume(self, p: ConsumeParams) -> dict[str, Any]:
        """Whether the call about to run carries evidence of its approval (once)."""
        envelope = p.envelope
        if p.session_file is not None:
            try:
                found = session_envelopes(Path(p.session_file), tool_call_id=p.tool_call_id)
            except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
                raise RpcFault(
                    RpcCode.BAD_INPUT,
                    "session file unreadable",
                    "session-file-unreadable",
                    path=p.session_file[:300],
                    error=getattr(exc, "strerror", None) or str(exc),
                ) from None
            envelope = found[-1] if found else None
        monitor = self.home.monitor
        if monitor is not None:
            result = monitor.consume(
                envelope,
                p.tool_name,
                p.input,
                p.cwd,
                tool_call_id=p.tool_call_id,
                call_checked_elsewhere=p.call_checked_elsewhere,
                require_dialog=p.require_dialog,
                require_operator_signature=p.require_operator_signature,
            )
            _log.info(
                "monitor-consume",
                decision=result.decision,
                evidence_id=result.evidence_id,
                reasons=list(result.reasons),
            )
        elif self.verify_only:
            raise RpcFault(
                RpcCode.GUARD_UNAVAILABLE,
                "Guard unavailable",
                "keyring-open-failed",
                home=str(self.home.path),
                error=self.home.open_error,
            )
        else:
            result = self.home.need_guard().consume(
                envelope,
                p.tool_name,
                p.input,
                p.cwd,
                tool_call_id=p.tool_call_id,
                call_checked_elsewhere=p.call_checked_elsewhere,
                require_dialog=p.require_dialog,
                require_operator_signature=p.require_operator_signature,
            )
        return result.model_dump(mode="json")
