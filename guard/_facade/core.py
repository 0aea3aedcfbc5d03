"""The facade's shared core: one guard home's key, audit log, ledger and policy, and the pi
session its records name; the home's status and its whole log verified.

Contract: :meth:`Core.open` opens (creating on first use) a home; the collaborators of
:class:`guard.Guard` (``calls``, ``outcomes``, ``grants``, ``operators``, ``effects``,
``sessions``, ``spool``, ``consumption``, ``planners``) each receive this one object and
keep no state of their own beside it. :meth:`Core.append` is the one way they write: it
names the session the record belongs to, counts it for the session, and hands the durable
record to the :attr:`Core.observer`.
The signer is asked for each time (:meth:`Core.signer`), so a key another process rotated is
seen before anything is signed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from audit import shorten
from audit.log import AuditLog
from audit.verify import VerifyResult, verify_log
from audit.wire import (
    AuditRecord,
    EventData,
    KeyGeneratedData,
    KeyRetiredData,
    KeyRotatedData,
    SessionRef,
    utc_now,
)
from guard._errors import LedgerError
from guard._evidence import (
    DEFAULT_SKEW,
    MAX_TTL_SECONDS,
    Keyring,
    KeyStore,
    PublicKeyring,
    Signer,
    anchor_dir,
)
from guard._facade.ledger import open_ledger
from guard._home import AUDIT_LOG_FILE, AUDIT_PREVIEWS_ENV, ensure_private_dir, env, resolve_home
from guard._logging import get_logger
from guard._operator import OperatorCredential
from guard._policy import PolicyCache, remember_home
from guard._storage import SqliteLedger, SyncedLedger

__all__ = ["SESSION_COUNTS", "Core"]

_log = get_logger("guard")

SESSION_COUNTS = ("asked", "confirmed", "declined", "blocked", "executed", "covered")
_OPERATOR_NO = ("declined", "timeout")


def _count(counts: dict[str, int], event: str, data: Mapping[str, Any]) -> None:
    """What one record adds to a session's counts (``/guard``, ``session.ended``)."""
    if event == "confirmation.recorded" and data.get("coveredBy"):
        counts["covered"] += 1
    elif event == "confirmation.recorded":
        counts["asked"] += 1
        counts["confirmed"] += 1
    elif event == "confirmation.declined" and data.get("reason") in _OPERATOR_NO:
        counts["asked"] += 1
        counts["declined"] += 1
    elif event == "confirmation.declined":
        counts["blocked"] += 1
    elif event == "tool.executed":
        counts["executed"] += 1


class Core:
    """See the module docstring. Use :meth:`open`."""

    def __init__(
        self,
        home: Path,
        keys: KeyStore,
        signer: Signer,
        audit: AuditLog,
        ledger: SyncedLedger,
        *,
        preview: bool = True,
    ) -> None:
        self.home = home
        self._keys = keys
        self._signer = signer
        self._keyring_stamp = self._stamp()
        self._keyring = keys.public_keyring(signer)
        self.audit = audit
        self.ledger = ledger
        self.preview = preview
        """Whether records carry a short, redacted preview of the call."""
        self.session: dict[str, Any] | None = None  # see attribute()
        self.session_counts = dict.fromkeys(SESSION_COUNTS, 0)
        self.key_created = False
        # Sees every record once it is durable (the sidecar's telemetry export); it must
        # neither raise nor wait.
        self.observer: Callable[[AuditRecord], None] | None = None
        self.classifier = PolicyCache(home)

    @classmethod
    def open(
        cls, home: str | os.PathLike[str] | None = None, *, preview: bool | None = None
    ) -> Core:
        """Open (creating on first use) the guard home: key, keyring, ledger, audit log.

        ``preview``: whether audit records carry a short, secret-redacted preview of the
        command or path; default on, off when ``$PI_OPERATOR_GUARD_AUDIT_PREVIEWS`` is
        ``0``/``off``/``false``. The operator's dialog always shows the preview.
        """
        if preview is None:
            setting = (env(AUDIT_PREVIEWS_ENV) or "on").strip().lower()
            preview = setting not in ("0", "off", "false", "no")
        root = ensure_private_dir(resolve_home(home))
        remember_home(root)  # every session's sandbox hides every home (_known_homes.py)
        keys = KeyStore.open(root)
        signer, created = keys.ensure_key()
        retired = keys.retired_on_create
        # Refuse (KeyringError) a keyring the signing key did not sign: an added key.
        keyring = keys.trusted_keyring(signer)
        # The head is verified against the trusted keyring before the log is extended
        # (re-read when a head names a key rotated in by another process), and every line
        # up to it against the head: from the latest anchored checkpoint, if one is kept.
        audit = AuditLog.open(
            root / AUDIT_LOG_FILE,
            signer,
            lambda: keys.public_keyring().public_keys(),
            previews=preview,
            anchors=anchor_dir(),
        )
        # A corrupt ledger is set aside: consume rebuilds it from the audit log first.
        # SQLite in the home unless the user's [ledger] or $PI_OPERATOR_GUARD_LEDGER names
        # a shared PostgreSQL ledger.
        ledger = open_ledger(root, set_aside_corrupt=True, lazy=True)
        core = cls(root, keys, signer, audit, ledger, preview=preview)
        if created:
            core.key_created = True
            audit.append(KeyGeneratedData(key_id=signer.key_id))
            for entry in keyring.keys:
                if entry.key_id in retired:
                    audit.append(
                        KeyRetiredData(
                            key_id=entry.key_id,
                            new_key_id=signer.key_id,
                            retired_at_iso=entry.retired_at_iso,
                            reason="key-file-missing",
                        )
                    )
        try:
            ledger.prune(utc_now(), DEFAULT_SKEW)
        except LedgerError as exc:
            if isinstance(ledger, SqliteLedger):
                raise
            # A shared ledger out of reach: housekeeping waits for the next open; every
            # consume fails closed until the server is back.
            _log.warning("ledger-prune-failed", error=str(exc))
        return core

    # -- keys -------------------------------------------------------------

    @property
    def key_id(self) -> str:
        return self.signer().key_id

    def _stamp(self) -> tuple[int, int] | None:
        try:
            info = self._keys.keyring_path.stat()
        except FileNotFoundError:
            return None
        return (info.st_mtime_ns, info.st_size)

    def refresh_keys(self) -> None:
        """Re-read the keys if another process (``pi-guard keys rotate``) changed them."""
        stamp = self._stamp()
        if stamp != self._keyring_stamp:
            self._signer, self._keyring = self._keys.load_trusted()
            self._keyring_stamp = stamp
            # Heads must be signed by the active key, not one that was just retired.
            self.audit.use_signer(self._signer)

    def signer(self) -> Signer:
        """The active signing key, as of now."""
        self.refresh_keys()
        return self._signer

    def keyring(self) -> Keyring:
        """The public keyring as stored: what an auditor or monitor needs."""
        return self._keys.keyring()

    def public_keyring(self) -> PublicKeyring:
        self.refresh_keys()
        return self._keyring

    def rotate_key(self) -> tuple[str, str]:
        """Retire the active key, install a new one, audit it. Returns ``(old, new)`` key ids."""
        old, signer = self._keys.rotate()
        self.refresh_keys()
        self.append(KeyRotatedData(old_key_id=old, new_key_id=signer.key_id))
        return old, signer.key_id

    def change_operators(
        self,
        change: Callable[[tuple[OperatorCredential, ...]], tuple[OperatorCredential, ...]],
    ) -> None:
        """Rewrite the keyring's signed ``operators`` through ``change`` (which may refuse by
        raising), then see the new keyring."""
        self._keys.change_operators(change)
        self.refresh_keys()

    # -- the session every record names ----------------------------------

    def attribute(self, session_id: str | None, session_file: str | None = None) -> None:
        """Every record appended from now on names pi's session ``session_id`` (its file, if
        it has one) and this process; ``None`` stops naming one."""
        if session_id is None:
            self.session = None
            return
        ref: dict[str, Any] = {"id": shorten(session_id, 128), "guardPid": os.getpid()}
        if session_file:
            ref["file"] = shorten(session_file, 4096)
        if ref != self.session:
            self.session_counts = dict.fromkeys(SESSION_COUNTS, 0)
        self.session = ref

    def append(self, typed: EventData) -> AuditRecord:
        """Append one typed event, naming the session it belongs to where the event can (a
        record delivered late names the session the shim kept it in, or none)."""
        late = getattr(typed, "delivered_late", None)
        if (
            self.session is not None
            and not late
            and "session" in type(typed).model_fields
            and getattr(typed, "session", None) is None
        ):
            typed = typed.model_copy(update={"session": SessionRef.model_validate(self.session)})
        record = self.audit.append(typed)
        if not late:  # a late record belongs to the session it names
            _count(self.session_counts, record.event, record.data)
        if self.observer is not None:
            self.observer(record)
        return record

    # -- the home as a whole -----------------------------------------------

    def verify_audit(self, *, allow_unanchored: bool = False) -> VerifyResult:
        """Verify the home's whole audit log against the public keyring."""
        return verify_log(
            self.audit.path, self.public_keyring().public_keys(), allow_unanchored=allow_unanchored
        )

    def status(self) -> dict[str, Any]:
        """The home, its key, log and ledger, and the evidence's time limits."""
        return {
            "home": str(self.home),
            "keyId": self.key_id,
            "auditLog": str(self.audit.path),
            "consumedIds": self.ledger.count(),
            "skewSeconds": int(DEFAULT_SKEW.total_seconds()),
            "maxTtlSeconds": MAX_TTL_SECONDS,
        }

    def close(self) -> None:
        self.ledger.close()
        self.audit.close()
