"""The approval port: one broker per sidecar offers every pending question to every screen.

The pi dialog is one approver; ``pi-guard approvals`` in a second terminal is another (through
``local``). The first valid answer wins, naming the question's id and digest; a timeout is No.
"""

import importlib
import typing

if typing.TYPE_CHECKING:
    from guard._approvals.broker import (
        ApprovalBroker,
        Asked,
        Signable,
        question_digest,
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

# Each public name's home (``module`` or ``module:attribute``), imported on first use.
_HOMES: dict[str, str] = {
    "ApprovalBroker": "guard._approvals.broker",
    "Asked": "guard._approvals.broker",
    "Signable": "guard._approvals.broker",
    "question_digest": "guard._approvals.broker",
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
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        """A public name, imported from its home module on first use (PEP 562)."""
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        module, _, attribute = home.partition(":")
        value = getattr(importlib.import_module(module), attribute or name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted([*globals(), *__all__])
