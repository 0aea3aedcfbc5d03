"""The operator's own key on the facade: enrolled passkeys, and evidence a passkey signs first.

Contract: the passkeys are the keyring's signed ``operators`` (rewritten under the keys lock
by :meth:`guard._facade.core.Core.change_operators`); a removed one stays listed, so what it
signed is refused by name.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from audit.wire import OperatorEnrolledData, OperatorRemovedData, format_iso, utc_now
from guard._errors import BadInputError, TtlError
from guard._evidence import DEFAULT_TTL_SECONDS, MAX_TTL_SECONDS, Reservation, reserve
from guard._facade.calls import Calls
from guard._facade.consumer import check_tool_call_id
from guard._facade.core import Core
from guard._operator import OperatorCredential

__all__ = ["Operators"]


class Operators:
    """Enroll and remove the operator's authenticators (the keyring's signed ``operators``)."""

    def __init__(self, core: Core, calls: Calls) -> None:
        self._core = core
        self._calls = calls

    def listed(self) -> tuple[OperatorCredential, ...]:
        """Every enrolled authenticator credential, active and removed (signed keyring)."""
        return tuple(self._core.public_keyring().operators.values())

    def enroll(self, credential: OperatorCredential) -> OperatorCredential:
        """Add ``credential`` to the keyring's signed ``operators`` and audit
        ``operator.enrolled``; an id already listed is a :class:`BadInputError`."""

        def add(current: tuple[OperatorCredential, ...]) -> tuple[OperatorCredential, ...]:
            if any(c.credential_id == credential.credential_id for c in current):
                raise BadInputError("credential", "is already enrolled", credential.credential_id)
            return (*current, credential)

        self._core.change_operators(add)
        self._core.append(
            OperatorEnrolledData(
                credential_id=credential.credential_id,
                label=credential.label,
                algorithm=credential.algorithm,
                rp_id=credential.rp_id,
                origin=credential.origin,
            )
        )
        return credential

    def remove(self, credential_id: str) -> OperatorCredential:
        """Mark credential ``credential_id`` removed (it stays listed, so what it signed is
        refused by name) and audit ``operator.removed``; an unknown or already removed id is a
        :class:`BadInputError`."""
        removed: list[OperatorCredential] = []

        def drop(current: tuple[OperatorCredential, ...]) -> tuple[OperatorCredential, ...]:
            kept = []
            for c in current:
                if c.credential_id == credential_id and c.status == "active":
                    c = c.model_copy(
                        update={"status": "removed", "removed_at_iso": format_iso(utc_now())}
                    )
                    removed.append(c)
                kept.append(c)
            if not removed:
                raise BadInputError(
                    "credential", "no enrolled credential has this id", credential_id
                )
            return tuple(kept)

        self._core.change_operators(drop)
        gone = removed[0]
        self._core.append(OperatorRemovedData(credential_id=gone.credential_id, label=gone.label))
        return gone

    def reserve(
        self,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        ttl_seconds: int = DEFAULT_TTL_SECONDS,
        tool_call_id: str | None = None,
    ) -> Reservation | None:
        """The id, lifetime and approval statement of the evidence a yes to this call will
        mint (the operator's authenticator signs the statement first); ``None`` when the call
        needs no confirmation or is blocked."""
        if type(ttl_seconds) is not int or not 0 < ttl_seconds <= MAX_TTL_SECONDS:
            raise TtlError(ttl_seconds, MAX_TTL_SECONDS)
        check_tool_call_id(tool_call_id)
        evaluation = self._calls.evaluate(tool_name, tool_input, cwd)
        if evaluation.verdict != "confirm" or evaluation.fingerprint is None:
            return None
        return reserve(
            self._core.key_id,
            evaluation.fingerprint,
            ttl_seconds=ttl_seconds,
            now=utc_now(),
            tool_call_id=tool_call_id,
        )
