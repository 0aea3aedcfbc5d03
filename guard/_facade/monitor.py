"""``Monitor``: the verify-only consumer, for a monitor that holds the guard's public keyring
and a ledger but never its signing key.

Contract: a monitor home holds ``keyring.json`` (its trust root: copy it from the guard, with
the operators' passkeys it lists) and, optionally, the guard's audit log, whose consumed ids
stay consumed here too. :meth:`Monitor.consume` runs the guard's own consume path
(:func:`guard._facade.consumer.consume_call`): the same fingerprint, the same checks, the same
single use; it mints nothing and appends nothing (an append needs the signing key), so results go
to the caller. Every result is report-only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from guard._evidence import KEYRING_FILE, ConsumeResult, PublicKeyring
from guard._facade.consumer import consume_call
from guard._facade.ledger import open_ledger
from guard._home import AUDIT_LOG_FILE, resolve_home
from guard._policy import PolicyCache

__all__ = ["Monitor"]


class Monitor:
    """See the module docstring. Use :meth:`open`, as a context manager."""

    def __init__(self, home: Path, keyring: PublicKeyring) -> None:
        self.home = home
        self.keyring = keyring
        self.ledger = open_ledger(home, lazy=True)
        self.classifier = PolicyCache(home)

    @classmethod
    def open(cls, home: str | os.PathLike[str] | None = None) -> Monitor:
        """The monitor of ``home`` (default ``$PI_OPERATOR_GUARD_HOME``, then the guard's);
        raises :class:`KeyringError` when its ``keyring.json`` is missing or malformed."""
        where = resolve_home(home)
        return cls(where, PublicKeyring.load(where / KEYRING_FILE))

    def consume(
        self,
        envelope: Mapping[str, Any] | str | bytes | None,
        tool_name: str,
        tool_input: Mapping[str, Any],
        cwd: str | os.PathLike[str],
        *,
        tool_call_id: str | None = None,
        call_checked_elsewhere: bool = False,
        require_dialog: bool = False,
        require_operator_signature: bool = False,
    ) -> ConsumeResult:
        """Check ``envelope`` against the pending call (recomputed here) and consume it once,
        exactly as :meth:`guard.Guard.consume` does (evidence bound to a call needs its
        ``tool_call_id`` or ``call_checked_elsewhere=True``). Never authorizes anything."""
        result, _ = consume_call(
            envelope,
            tool_name,
            tool_input,
            cwd,
            classifier=self.classifier,
            keyring=self.keyring,
            ledger=self.ledger,
            log_path=self.home / AUDIT_LOG_FILE,
            require_log=False,
            tool_call_id=tool_call_id,
            call_checked_elsewhere=call_checked_elsewhere,
            require_dialog=require_dialog,
            require_operator_signature=require_operator_signature,
        )
        return result

    def close(self) -> None:
        self.ledger.close()

    def __enter__(self) -> Monitor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
