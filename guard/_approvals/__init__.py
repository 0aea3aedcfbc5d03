"""The approval port: one broker per sidecar offers every pending question to every screen.

The pi dialog is one approver; ``pi-guard approvals`` in a second terminal is another (through
``local``). The first valid answer wins, naming the question's id and digest; a timeout is No.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._approvals.broker import (
        ApprovalBroker,
        Asked,
        Listener,
        Signable,
        question_digest,
    )
    from guard._approvals.home import (
        GONE,
        REPLY_TIMEOUT,
        Listed,
        ask_sidecar,
        pending_in,
        port_holder,
        sidecar_about,
        sidecar_dirs,
    )
    from guard._approvals.local import (
        SOCKET_NAME,
        LocalApprovals,
        ask_local,
    )
    from guard._approvals.model import (
        APPROVERS,
        OUTCOMES,
        Answer,
        AnswerRequest,
        Approver,
        Decision,
        Outcome,
        Pending,
    )
    from guard._approvals.web import (
        ApprovalPage,
        Enrolment,
        enrolled_port,
    )

__all__ = [
    "APPROVERS",
    "GONE",
    "OUTCOMES",
    "REPLY_TIMEOUT",
    "SOCKET_NAME",
    "Answer",
    "AnswerRequest",
    "ApprovalBroker",
    "ApprovalPage",
    "Approver",
    "Asked",
    "Decision",
    "Enrolment",
    "Listed",
    "Listener",
    "LocalApprovals",
    "Outcome",
    "Pending",
    "Signable",
    "ask_local",
    "ask_sidecar",
    "enrolled_port",
    "pending_in",
    "port_holder",
    "question_digest",
    "sidecar_about",
    "sidecar_dirs",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "ApprovalBroker": "guard._approvals.broker",
    "Asked": "guard._approvals.broker",
    "Listener": "guard._approvals.broker",
    "Signable": "guard._approvals.broker",
    "question_digest": "guard._approvals.broker",
    "GONE": "guard._approvals.home",
    "Listed": "guard._approvals.home",
    "REPLY_TIMEOUT": "guard._approvals.home",
    "ask_sidecar": "guard._approvals.home",
    "pending_in": "guard._approvals.home",
    "port_holder": "guard._approvals.home",
    "sidecar_about": "guard._approvals.home",
    "sidecar_dirs": "guard._approvals.home",
    "LocalApprovals": "guard._approvals.local",
    "SOCKET_NAME": "guard._approvals.local",
    "ask_local": "guard._approvals.local",
    "APPROVERS": "guard._approvals.model",
    "Answer": "guard._approvals.model",
    "AnswerRequest": "guard._approvals.model",
    "Approver": "guard._approvals.model",
    "Decision": "guard._approvals.model",
    "OUTCOMES": "guard._approvals.model",
    "Outcome": "guard._approvals.model",
    "Pending": "guard._approvals.model",
    "ApprovalPage": "guard._approvals.web",
    "Enrolment": "guard._approvals.web",
    "enrolled_port": "guard._approvals.web",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
