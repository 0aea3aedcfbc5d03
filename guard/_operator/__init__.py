"""The operator's own key: passkey (WebAuthn) enrolment and signed approvals.

Public face of the wing: the wire shapes (:class:`OperatorCredential`,
:class:`OperatorSignature`), the approval statement and its challenge, the check of a signature
(:func:`check_operator_signature`, a typed :class:`OperatorCheck`) and enrolment
(:func:`creation_options`, :func:`enrolled_credential`). Imports only ``audit`` and
py_webauthn; the evidence and keyring modules build on it.
"""

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
