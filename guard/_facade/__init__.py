"""The parts :class:`guard.Guard` is made of, one concern per module, each building on ``base``.

``base`` (:class:`GuardBase`: keys, evaluate, record, appending for a session),
``operators`` (the operator's passkeys), ``grants`` (scoped grants), ``sessions`` (a pi
session started and ended, refusals), ``effects`` (the effects review's records),
``outcomes`` (a call ran, was blocked, declined, or its input changed) and ``spool`` (the
shim's spooled events, replayed once each). ``guard/_facade/guard.py`` composes them and adds
opening a home, consuming, planners and verify. Nothing here imports the sidecar: the
sidecar's params build on :class:`CallParams` and the spooled event shapes.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._facade.base import (
        SESSION_COUNTS,
        BlockReason,
        DeclineReason,
        GuardBase,
        LateDeclineReason,
        fingerprint_fields,
        operator_reason_text,
        preview_of,
    )
    from guard._facade.consumer import (
        ClassifiedCall,
        check_tool_call_id,
        classify_call,
    )
    from guard._facade.effects import (
        EffectsPart,
    )
    from guard._facade.grants import (
        GrantsPart,
    )
    from guard._facade.guard import (
        Guard,
    )
    from guard._facade.ledger import (
        ledger_url,
        open_ledger,
    )
    from guard._facade.monitor import (
        Monitor,
    )
    from guard._facade.operators import (
        OperatorsPart,
    )
    from guard._facade.outcomes import (
        OutcomesPart,
    )
    from guard._facade.plan import (
        plan_input,
    )
    from guard._facade.sessions import (
        SessionsPart,
    )
    from guard._facade.spool import (
        REPLAY_SKEW,
        CallParams,
        OperatorReasonText,
        ReplayRejected,
        ReplayReply,
        SpooledDecline,
        SpooledEvent,
        SpooledExecuted,
        SpoolPart,
        logged_spool_ids,
    )

__all__ = [
    "REPLAY_SKEW",
    "SESSION_COUNTS",
    "BlockReason",
    "CallParams",
    "ClassifiedCall",
    "DeclineReason",
    "EffectsPart",
    "GrantsPart",
    "Guard",
    "GuardBase",
    "LateDeclineReason",
    "Monitor",
    "OperatorReasonText",
    "OperatorsPart",
    "OutcomesPart",
    "ReplayRejected",
    "ReplayReply",
    "SessionsPart",
    "SpoolPart",
    "SpooledDecline",
    "SpooledEvent",
    "SpooledExecuted",
    "check_tool_call_id",
    "classify_call",
    "fingerprint_fields",
    "ledger_url",
    "logged_spool_ids",
    "open_ledger",
    "operator_reason_text",
    "plan_input",
    "preview_of",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "ClassifiedCall": "guard._facade.consumer",
    "Guard": "guard._facade.guard",
    "Monitor": "guard._facade.monitor",
    "check_tool_call_id": "guard._facade.consumer",
    "classify_call": "guard._facade.consumer",
    "ledger_url": "guard._facade.ledger",
    "open_ledger": "guard._facade.ledger",
    "plan_input": "guard._facade.plan",
    "BlockReason": "guard._facade.base",
    "DeclineReason": "guard._facade.base",
    "GuardBase": "guard._facade.base",
    "LateDeclineReason": "guard._facade.base",
    "SESSION_COUNTS": "guard._facade.base",
    "fingerprint_fields": "guard._facade.base",
    "operator_reason_text": "guard._facade.base",
    "preview_of": "guard._facade.base",
    "EffectsPart": "guard._facade.effects",
    "GrantsPart": "guard._facade.grants",
    "OperatorsPart": "guard._facade.operators",
    "OutcomesPart": "guard._facade.outcomes",
    "SessionsPart": "guard._facade.sessions",
    "CallParams": "guard._facade.spool",
    "OperatorReasonText": "guard._facade.spool",
    "REPLAY_SKEW": "guard._facade.spool",
    "ReplayRejected": "guard._facade.spool",
    "ReplayReply": "guard._facade.spool",
    "SpoolPart": "guard._facade.spool",
    "SpooledDecline": "guard._facade.spool",
    "SpooledEvent": "guard._facade.spool",
    "SpooledExecuted": "guard._facade.spool",
    "logged_spool_ids": "guard._facade.spool",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
