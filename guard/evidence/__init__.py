"""The evidence primitives, for a careful integrator: safe only with what each one assumes.

The recipes are in :mod:`guard`: :class:`guard.Guard` and :class:`guard.Monitor` recompute
the pending call's fingerprint with the home's policy, apply the user's ``[evidence]``
requirements, keep the ledger in step with the audit log and audit every result. The names
here are the pieces they are built from (in the spirit of pyca/cryptography's ``hazmat``);
each leaves a check to its caller:

* :func:`check_and_consume` runs the seven checks and consumes the id once. The caller must
  have recomputed ``pending`` itself from the call about to run (never taken from the
  envelope, the agent or the shim), with the policy in force (:func:`compute_fingerprint`),
  passed the trusted keyring and the one ledger every consumer of this evidence shares,
  brought that ledger up to date with the audit log's ``evidence.consumed`` records, and
  passed ``require_operator_signature`` if the user's ``[evidence]`` policy asks for it.
  It appends nothing: auditing the result is the caller's.
* :func:`compute_fingerprint` binds an action kind, a tool, its input and a path. The caller
  must have classified the call with the policy (the action kind and the path are the
  policy's, not the caller's guess) and normalized the tool name.
* :func:`payload_hash` hashes the full tool input (RFC 8785); the caller must pass the input
  exactly as it will run (a hash of another input binds another call).
* :func:`normalize_tool_name` and :func:`normalize_path` refuse or normalize one value; the
  caller must have decided which value is the one bound (the workspace root included).
* :class:`KeyStore` and :class:`Signer` hold the signing key: whoever holds a ``Signer`` can
  mint evidence, so the caller must keep it in the guard home's private directory, never in
  the agent's reach. :class:`PublicKeyring` verifies only what the keyring says: the caller
  must have loaded it from a keyring the signing key signed (:meth:`KeyStore.public_keyring`).
* :class:`ConsumptionLedger` and :class:`SqliteLedger` make an id single-use only within one
  ledger: the caller must give every consumer of the same evidence the same ledger.
* :func:`verify_dsse` checks an operator-decision statement in a DSSE envelope against one
  public key (:func:`read_public_key` reads a PEM file or a keyring's active key); it is
  safe anywhere, and its ``verified`` says only that the key signed a report-only decision:
  it authorizes nothing and consumes nothing. :func:`dsse_from_log` signs the statement of a
  recorded yes from a log it verifies first; :func:`sign_statement` signs any
  :class:`DecisionStatement` it is given, so the caller must have built it
  (:func:`statement_for`) from a ``confirmation.recorded`` record of a verified log.
* :data:`DEFAULT_SKEW` and :data:`TRUSTED_ORIGINS` are the defaults the recipes use; a
  caller that passes others has decided the clock tolerance and the origins it trusts.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._evidence.consume import (
        DEFAULT_SKEW,
        TRUSTED_ORIGINS,
        check_and_consume,
    )
    from guard._evidence.dsse import (
        PAYLOAD_TYPE,
        DsseCheck,
        DsseEnvelope,
        dsse_from_log,
        read_public_key,
        sign_statement,
        verify_dsse,
    )
    from guard._evidence.fingerprint import (
        compute_fingerprint,
        normalize_path,
        normalize_tool_name,
        payload_hash,
    )
    from guard._evidence.keys import (
        KeyStore,
        PublicKeyring,
        Signer,
    )
    from guard._evidence.statement import (
        PREDICATE_TYPE,
        STATEMENT_TYPE,
        DecisionStatement,
        OperatorDecision,
        statement_for,
    )
    from guard._storage import (
        ConsumptionLedger,
        SqliteLedger,
    )

__all__ = [
    "DEFAULT_SKEW",
    "PAYLOAD_TYPE",
    "PREDICATE_TYPE",
    "STATEMENT_TYPE",
    "TRUSTED_ORIGINS",
    "ConsumptionLedger",
    "DecisionStatement",
    "DsseCheck",
    "DsseEnvelope",
    "KeyStore",
    "OperatorDecision",
    "PublicKeyring",
    "Signer",
    "SqliteLedger",
    "check_and_consume",
    "compute_fingerprint",
    "dsse_from_log",
    "normalize_path",
    "normalize_tool_name",
    "payload_hash",
    "read_public_key",
    "sign_statement",
    "statement_for",
    "verify_dsse",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "DEFAULT_SKEW": "guard._evidence.consume",
    "TRUSTED_ORIGINS": "guard._evidence.consume",
    "check_and_consume": "guard._evidence.consume",
    "PAYLOAD_TYPE": "guard._evidence.dsse",
    "DsseCheck": "guard._evidence.dsse",
    "DsseEnvelope": "guard._evidence.dsse",
    "dsse_from_log": "guard._evidence.dsse",
    "read_public_key": "guard._evidence.dsse",
    "sign_statement": "guard._evidence.dsse",
    "verify_dsse": "guard._evidence.dsse",
    "compute_fingerprint": "guard._evidence.fingerprint",
    "normalize_path": "guard._evidence.fingerprint",
    "normalize_tool_name": "guard._evidence.fingerprint",
    "payload_hash": "guard._evidence.fingerprint",
    "PREDICATE_TYPE": "guard._evidence.statement",
    "STATEMENT_TYPE": "guard._evidence.statement",
    "DecisionStatement": "guard._evidence.statement",
    "OperatorDecision": "guard._evidence.statement",
    "statement_for": "guard._evidence.statement",
    "KeyStore": "guard._evidence.keys",
    "PublicKeyring": "guard._evidence.keys",
    "Signer": "guard._evidence.keys",
    "ConsumptionLedger": "guard._storage",
    "SqliteLedger": "guard._storage",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
