"""The approval port: one broker per sidecar offers every pending question to every screen.

The pi dialog is one approver; ``pi-guard approvals`` in a second terminal is another (through
``local``). The first valid answer wins, naming the question's id and digest; a timeout is No.
"""

from guard._approvals.broker import ApprovalBroker, Asked, Signable, question_digest
from guard._approvals.local import SOCKET_NAME, LocalApprovals, ask_local
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

__all__ = [
    "APPROVERS",
    "OUTCOMES",
    "SOCKET_NAME",
    "Answer",
    "AnswerRequest",
    "ApprovalBroker",
    "Approver",
    "Asked",
    "Decision",
    "LocalApprovals",
    "Outcome",
    "Pending",
    "Signable",
    "ask_local",
    "question_digest",
]
