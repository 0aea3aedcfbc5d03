"""``pi-guard serve``: the guard's JSON-RPC 2.0 sidecar, one JSON object per LF-terminated line.

The pi extension shim starts this process once per session and asks it everything: every
decision (classify, what the dialog says, why a call is blocked) is made here, in Python,
by the :class:`~guard.Guard` facade; the sidecar is the adapter from the wire to it.
Framing and messages are in ``framing``, request handling in ``server``, the wire shapes in
``wire`` and the text people read in ``text``; the session's state and its verbs are the
:class:`~guard._sidecar.session.Session`. This module is :class:`Sidecar`, one table from
each method's name and params model to a verb of the session (and the few methods about
the sidecar itself), and :func:`serve`. Its ``__all__`` re-exports the protocol names.
One message goes out unasked: ``approvals.answered``, when another screen answered an open
question first (a notification: no id).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from pydantic import BaseModel

from guard._approvals import Answer
from guard._errors import GuardError, RpcFault
from guard._facade import REPLAY_SKEW
from guard._home import resolve_home
from guard._logging import defer_logging, get_logger, logging_configured
from guard._pi import planner_tools, session_envelopes
from guard._sidecar.framing import (
    MAX_LINE_BYTES,
    Frame,
    LineSplitter,
    RpcCode,
    decode_request,
    encode_message,
    error_response,
    iter_frames,
)
from guard._sidecar.server import Method, RpcServer, answer_stream, install_sigterm
from guard._sidecar.session import Session
from guard._sidecar.text import PLANNER_TOOL_NAME
from guard._sidecar.wire import (
    ApprovalAnswered,
    ApprovalAnswerParams,
    ConsumeParams,
    DeclinedParams,
    EffectsResolveParams,
    EffectsReviewParams,
    EvaluateParams,
    GrantsRevokeParams,
    NoParams,
    PlanParams,
    RecordParams,
    ReplayParams,
    SandboxPlanParams,
    StatusParams,
    ToolExecutedParams,
    VerifyParams,
)

__all__ = [
    "MAX_LINE_BYTES",
    "PLANNER_TOOL_NAME",
    "PROTOCOL",
    "REPLAY_SKEW",
    "Frame",
    "LineSplitter",
    "RpcCode",
    "Sidecar",
    "decode_request",
    "encode_message",
    "error_response",
    "iter_frames",
    "serve",
    "session_envelopes",
]

_log = get_logger("guard.sidecar")

PROTOCOL = "pi-operator-guard/sidecar/v1"

P = TypeVar("P", bound=BaseModel)


class Sidecar(RpcServer):
    """The guard's method table over one :class:`Session` (request handling is
    :class:`RpcServer`'s); see :func:`serve`."""

    def __init__(self, home: Path | None, *, verify_only: bool = False) -> None:
        self.started = time.monotonic()
        self.home = resolve_home(home)
        self.session = session = Session(self.home, verify_only=verify_only)
        desk, effects, status = session.desk, session.effects, session.status
        methods = {
            "describe": Method(NoParams, self._describe, True),
            "health": Method(NoParams, self._health, True),
            "ping": Method(NoParams, _ping, True),
            "status": Method(StatusParams, lambda p: status.report(p, self.requests), False),
            "evaluate": Method(EvaluateParams, session.evaluate, False),
            "record": Method(RecordParams, session.record, False),
            "audit.declined": Method(DeclinedParams, session.decline, False),
            "consume": Method(ConsumeParams, session.consume, True),
            "plan": Method(PlanParams, status.plan, False),
            "audit.toolExecuted": Method(ToolExecutedParams, session.executed, False),
            "audit.replay": Method(ReplayParams, session.replay, False),
            "audit.verify": Method(VerifyParams, status.verify, True),
            "sandbox.plan": Method(SandboxPlanParams, session.start, False),
            "effects.review": Method(EffectsReviewParams, _dumped(effects.review), False),
            "effects.resolve": Method(EffectsResolveParams, _dumped(effects.resolve), False),
            "grants.list": Method(NoParams, lambda _: desk.grants(), False),
            "approvals.answer": Method(ApprovalAnswerParams, desk.answer, False),
            "grants.revoke": Method(GrantsRevokeParams, desk.revoke, False),
        }
        super().__init__(methods, verify_only=verify_only)
        desk.broker.listen(self._answered)

    def _call(self, name: str, raw_params: Any) -> Any:
        try:
            return super()._call(name, raw_params)
        except RpcFault as fault:
            if fault.data.get("reason") == "audit-integrity":
                self.session.home.note_damage()
            raise

    def _answered(self, approval_id: str, answer: Answer) -> None:
        """Another screen answered an open question first: the shim hears it at once
        (``approvals.answered``) and closes its dialog. pi's own dialog's answer is the
        reply to its ``approvals.answer``: not sent again."""
        if answer.approver != "pi-dialog":
            self.notify("approvals.answered", ApprovalAnswered(id=approval_id, answer=answer))

    def _describe(self, _: NoParams) -> dict[str, Any]:
        from importlib.metadata import PackageNotFoundError, version

        try:
            package_version = version("pi-operator-guard")
        except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
            package_version = "0"
        return {
            "name": "pi-operator-guard",
            "protocol": PROTOCOL,
            "version": package_version,
            "verifyOnly": self.verify_only,
            "maxLineBytes": MAX_LINE_BYTES,
            "methods": sorted(
                n for n, m in self.methods.items() if m.verify_only_ok or not self.verify_only
            ),
            "params": {n: m.params.model_json_schema() for n, m in sorted(self.methods.items())},
            "notifications": {"approvals.answered": ApprovalAnswered.model_json_schema()},
            "tools": [tool.model_dump(mode="json") for tool in planner_tools()],
        }

    def _health(self, _: NoParams) -> dict[str, Any]:
        home = self.session.home
        key_id = None
        if home.guard is not None:
            with contextlib.suppress(GuardError):
                key_id = home.guard.key_id
        return {
            "ok": home.open_error is None and home.damage is None,
            "pid": os.getpid(),
            "uptimeSeconds": round(time.monotonic() - self.started, 3),
            "requests": self.requests,
            "verifyOnly": self.verify_only,
            "home": str(self.home),
            "keyId": key_id,
            "error": home.open_error,
            "statusText": self.session.status.line(),
        }

    def close(self) -> None:
        self.session.close()


def _ping(_: NoParams) -> dict[str, Any]:
    """A bare round trip: the baseline the benchmark compares the guard against."""
    return {"pong": True}


def _dumped(verb: Callable[[P], BaseModel]) -> Callable[[P], dict[str, Any]]:
    """A verb whose reply is a wire model, answering with its JSON."""
    return lambda p: verb(p).model_dump(mode="json")


# -- the loop ----------------------------------------------------------------------------------


def serve(
    stdin: BinaryIO, stdout: BinaryIO, *, home: Path | None, verify_only: bool = False
) -> int:
    """Run the JSON-RPC loop until EOF on ``stdin`` (or SIGTERM). Returns the exit code (0)."""
    if not logging_configured():
        defer_logging()  # stdout is the JSON-RPC stream: logs must go to stderr
    restore = install_sigterm()
    sidecar = Sidecar(home, verify_only=verify_only)
    _log.info("sidecar-started", pid=os.getpid(), home=str(sidecar.home), verify_only=verify_only)
    try:
        answer_stream(sidecar, stdin, stdout)
    finally:
        sidecar.close()
        restore()
        _log.info("sidecar-stopped", requests=sidecar.requests)
    return 0
