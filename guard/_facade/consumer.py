"""The one consume path of the guard and of a verify-only monitor.

Contract: :func:`classify_call` judges a pending call once (its normalized name, checked input,
verdict and fingerprint: a :class:`ClassifiedCall`, the one way the pending fingerprint is
computed). :func:`consume_call` checks the caller's input, recomputes the pending call's
fingerprint from the call itself with the home's policy (:func:`pending_fingerprint`), reads
what the user's policy requires of evidence (``[evidence]``), and runs
:func:`guard._evidence.single_use.consume_synced` (ledger synced from the audit log, this id
recalled from the log, the consumer's checks, single use). :class:`guard.Guard` and
:class:`guard.Monitor` both call it, so what one of them checks the other cannot skip; the
guard then audits the result, a monitor (no signing key) cannot.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit.wire import utc_now
from guard._errors import BadInputError
from guard._evidence import (
    ConsumeResult,
    Fingerprint,
    PublicKeyring,
    compute_fingerprint,
    consume_synced,
    normalize_tool_name,
)
from guard._policy import PolicyCache, Verdict
from guard._storage import SyncedLedger

__all__ = [
    "ClassifiedCall",
    "check_input",
    "check_tool_call_id",
    "classify_call",
    "consume_call",
    "pending_fingerprint",
]


def check_input(tool_input: object) -> Mapping[str, Any]:
    """``tool_input`` if it is a JSON object, else a :class:`BadInputError`."""
    if not isinstance(tool_input, Mapping):
        raise BadInputError("tool input", "must be a JSON object", type(tool_input).__name__)
    return tool_input


def check_tool_call_id(tool_call_id: object) -> None:
    """A tool call id is absent or 1..256 characters, else a :class:`BadInputError`."""
    if tool_call_id is not None and (
        not isinstance(tool_call_id, str) or not 0 < len(tool_call_id) <= 256
    ):
        raise BadInputError("tool call id", "must be 1..256 characters", tool_call_id)


@dataclass(frozen=True, slots=True)
class ClassifiedCall:
    """One pending call as the guard judged it, made by :func:`classify_call` from the input
    the call will run with (never from a client's word about it).

    The sidecar makes one when a request arrives and hands it to every step of that request
    (evaluate, record, a grant's cover, decline, executed), so a request classifies its call
    once. It lives for one request: the next request about the same call judges it afresh
    (the policy, the files a rule names or a grant may have changed in between).
    """

    name: str
    """The tool's normalized name."""
    input: Mapping[str, Any]
    """The call's input, checked to be a JSON object."""
    cwd: str | os.PathLike[str]
    """The call's directory, as the call gave it."""
    verdict: Verdict
    problems: tuple[str, ...]
    """What is wrong with the policy files that judged it (``config_problems``)."""
    fingerprint: Fingerprint | None
    """What evidence for this call must carry; ``None`` for a local-safe call."""


def classify_call(
    classifier: PolicyCache,
    tool_name: str,
    tool_input: Mapping[str, Any],
    cwd: str | os.PathLike[str],
) -> ClassifiedCall:
    """Judge a pending call with the home's policy and, unless it is local-safe, compute its
    fingerprint. Raises :class:`BadInputError` for an input that is no JSON object or has no
    canonical form."""
    name = normalize_tool_name(tool_name)
    checked = check_input(tool_input)
    workdir = Path(cwd)
    verdict, policy = classifier.classify(name, checked, workdir)
    fingerprint = None
    if verdict.action_kind != "local-safe":
        fingerprint = compute_fingerprint(
            verdict.action_kind, name, checked, workdir, path=verdict.path
        )
    problems = tuple(str(problem) for problem in policy.problems)
    return ClassifiedCall(name, checked, cwd, verdict, problems, fingerprint)


def pending_fingerprint(
    classifier: PolicyCache,
    tool_name: str,
    tool_input: Mapping[str, Any],
    cwd: str | os.PathLike[str],
) -> Fingerprint | None:
    """The fingerprint evidence for this call must carry; ``None`` for a local-safe call
    (no evidence can match it)."""
    return classify_call(classifier, tool_name, tool_input, cwd).fingerprint


def consume_call(
    envelope: Mapping[str, Any] | str | bytes | None,
    tool_name: str,
    tool_input: Mapping[str, Any],
    cwd: str | os.PathLike[str],
    *,
    classifier: PolicyCache,
    keyring: PublicKeyring,
    ledger: SyncedLedger,
    log_path: Path,
    require_log: bool,
    tool_call_id: str | None = None,
    call_checked_elsewhere: bool = False,
    require_dialog: bool = False,
    require_operator_signature: bool = False,
) -> tuple[ConsumeResult, Fingerprint | None]:
    """Consume ``envelope`` for this pending call once; the result and the fingerprint it was
    checked against. Without ``tool_call_id``, evidence bound to a call is refused
    (``call-id-required``) unless ``call_checked_elsewhere``. ``require_operator_signature``
    or the user's ``[evidence] require_operator_signature`` refuses evidence without the
    operator's own signature.
    Raises :class:`BadInputError` for a malformed call, :class:`LedgerError` when the log
    cannot be synced (nothing is consumed then)."""
    check_tool_call_id(tool_call_id)
    pending = pending_fingerprint(classifier, tool_name, tool_input, cwd)
    required = classifier.policy_for(cwd).evidence.require_operator_signature
    result = consume_synced(
        envelope,
        pending,
        keyring=keyring,
        ledger=ledger,
        log_path=log_path,
        now=utc_now(),
        tool_call_id=tool_call_id,
        call_checked_elsewhere=call_checked_elsewhere,
        require_log=require_log,
        require_dialog=require_dialog,
        require_operator_signature=require_operator_signature or required,
    )
    return result, pending
