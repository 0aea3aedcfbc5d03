"""The operator's own key: passkey (WebAuthn) enrolment and signed approvals.

Public face of the wing: the wire shapes (:class:`OperatorCredential`,
:class:`OperatorSignature`), the approval statement and its challenge, the check of a signature
(:func:`check_operator_signature`, a typed :class:`OperatorCheck`) and enrolment
(:func:`creation_options`, :func:`enrolled_credential`). Imports only ``audit`` and
py_webauthn; the evidence and keyring modules build on it.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._operator.enroll import (
        RP_NAME,
        EnrolmentRefused,
        creation_options,
        enrolled_credential,
    )
    from guard._operator.model import (
        ALGORITHMS,
        STATEMENT_FIELDS,
        STATEMENT_SCHEMA,
        CoseAlgorithm,
        OperatorCredential,
        OperatorSignature,
        approval_statement,
        statement_challenge,
    )
    from guard._operator.verify import (
        OPERATOR_REASONS,
        OperatorCheck,
        OperatorReason,
        check_operator_signature,
    )

__all__ = [
    "ALGORITHMS",
    "OPERATOR_REASONS",
    "RP_NAME",
    "STATEMENT_FIELDS",
    "STATEMENT_SCHEMA",
    "CoseAlgorithm",
    "EnrolmentRefused",
    "OperatorCheck",
    "OperatorCredential",
    "OperatorReason",
    "OperatorSignature",
    "approval_statement",
    "check_operator_signature",
    "creation_options",
    "enrolled_credential",
    "statement_challenge",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "EnrolmentRefused": "guard._operator.enroll",
    "RP_NAME": "guard._operator.enroll",
    "creation_options": "guard._operator.enroll",
    "enrolled_credential": "guard._operator.enroll",
    "ALGORITHMS": "guard._operator.model",
    "CoseAlgorithm": "guard._operator.model",
    "OperatorCredential": "guard._operator.model",
    "OperatorSignature": "guard._operator.model",
    "STATEMENT_FIELDS": "guard._operator.model",
    "STATEMENT_SCHEMA": "guard._operator.model",
    "approval_statement": "guard._operator.model",
    "statement_challenge": "guard._operator.model",
    "OPERATOR_REASONS": "guard._operator.verify",
    "OperatorCheck": "guard._operator.verify",
    "OperatorReason": "guard._operator.verify",
    "check_operator_signature": "guard._operator.verify",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
