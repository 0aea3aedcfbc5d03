"""The Python facade: :class:`Guard`, composed of collaborators that share one :class:`Core`.

``core`` (:class:`Core`: one home's keys, audit log, ledger and policy, the session records
name, the one append), ``calls`` (evaluate and record), ``outcomes`` (a call ran, was
blocked, declined, or its input changed), ``grants`` (scoped grants), ``operators`` (the
operator's passkeys), ``effects`` (the effects review's records), ``sessions`` (a pi session
started and ended, refusals) and ``spool`` (the shim's spooled events, replayed once each);
``consumption`` (evidence consumed through the one consume path, audited) and ``planners``
(a read-only planner run, audited); ``fields`` says what records say of a call.
``guard/_facade/guard.py`` builds them and keeps the verbs of a call's life, each handed to
its collaborator. Nothing here imports the sidecar: the sidecar's params build on
:class:`CallParams` and the spooled event shapes.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._facade.calls import (
        Calls,
    )
    from guard._facade.consumer import (
        ClassifiedCall,
        check_tool_call_id,
        classify_call,
    )
    from guard._facade.consumption import (
        Consumption,
    )
    from guard._facade.core import (
        SESSION_COUNTS,
        Core,
    )
    from guard._facade.effects import (
        Effects,
    )
    from guard._facade.fields import (
        BlockReason,
        DeclineReason,
        LateDeclineReason,
        fingerprint_fields,
        operator_reason_text,
        preview_of,
    )
    from guard._facade.grants import (
        Grants,
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
        Operators,
    )
    from guard._facade.outcomes import (
        Late,
        Outcomes,
    )
    from guard._facade.plan import (
        plan_input,
    )
    from guard._facade.planners import (
        Planners,
    )
    from guard._facade.sessions import (
        Sessions,
    )
    from guard._facade.spool import (
        REPLAY_SKEW,
        CallParams,
        OperatorReasonText,
        ReplayRejected,
        ReplayReply,
        Spool,
        SpooledDecline,
        SpooledEvent,
        SpooledExecuted,
        logged_spool_ids,
    )

__all__ = [
    "REPLAY_SKEW",
    "SESSION_COUNTS",
    "BlockReason",
    "CallParams",
    "Calls",
    "ClassifiedCall",
    "Consumption",
    "Core",
    "DeclineReason",
    "Effects",
    "Grants",
    "Guard",
    "Late",
    "LateDeclineReason",
    "Monitor",
    "OperatorReasonText",
    "Operators",
    "Outcomes",
    "Planners",
    "ReplayRejected",
    "ReplayReply",
    "Sessions",
    "Spool",
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
    "Calls": "guard._facade.calls",
    "ClassifiedCall": "guard._facade.consumer",
    "check_tool_call_id": "guard._facade.consumer",
    "classify_call": "guard._facade.consumer",
    "Consumption": "guard._facade.consumption",
    "Core": "guard._facade.core",
    "SESSION_COUNTS": "guard._facade.core",
    "Effects": "guard._facade.effects",
    "BlockReason": "guard._facade.fields",
    "DeclineReason": "guard._facade.fields",
    "LateDeclineReason": "guard._facade.fields",
    "fingerprint_fields": "guard._facade.fields",
    "operator_reason_text": "guard._facade.fields",
    "preview_of": "guard._facade.fields",
    "Grants": "guard._facade.grants",
    "Guard": "guard._facade.guard",
    "ledger_url": "guard._facade.ledger",
    "open_ledger": "guard._facade.ledger",
    "Monitor": "guard._facade.monitor",
    "Operators": "guard._facade.operators",
    "Late": "guard._facade.outcomes",
    "Outcomes": "guard._facade.outcomes",
    "plan_input": "guard._facade.plan",
    "Planners": "guard._facade.planners",
    "Sessions": "guard._facade.sessions",
    "CallParams": "guard._facade.spool",
    "OperatorReasonText": "guard._facade.spool",
    "REPLAY_SKEW": "guard._facade.spool",
    "ReplayRejected": "guard._facade.spool",
    "ReplayReply": "guard._facade.spool",
    "Spool": "guard._facade.spool",
    "SpooledDecline": "guard._facade.spool",
    "SpooledEvent": "guard._facade.spool",
    "SpooledExecuted": "guard._facade.spool",
    "logged_spool_ids": "guard._facade.spool",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
