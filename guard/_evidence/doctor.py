"""The evidence wing's check for ``pi-guard doctor``: the signing key loads (read-only) and
the keyring it signed verifies and lists it; nothing is created."""

from __future__ import annotations

from pathlib import Path

from guard._checks import Check
from guard._errors import KeyFileError, KeyringError
from guard._evidence.keys import KeyStore, PublicKeyring

__all__ = ["check_key"]


def check_key(home: Path) -> tuple[Check, PublicKeyring | None]:
    """The signing key loads (read-only) and the keyring it signed verifies and lists it.

    The keyring handed on (for the audit check) is the one the key signed, or, when there
    is no key yet, the file as an auditor would use it.
    """
    subject = str(home)
    store = KeyStore(home)  # not KeyStore.open: that creates the home

    def fail(reason: str, detail: str, fix: str) -> Check:
        return Check(
            name="key", subject=subject, status="fail", reason=reason, detail=detail, fix=fix
        )

    keyring_fix = (
        "restore keyring.json from a copy (it is public: an auditor may have one); an "
        "unsigned keyring from an older version: check `pi-guard keys list`, then "
        "`pi-guard keygen --trust-keyring`"
    )
    if not store.key_path.exists() and not store.key_path.is_symlink():
        if not store.keyring_path.exists():
            return Check(
                name="key",
                subject=subject,
                status="ok",
                reason="created-on-first-use",
                detail="no key yet: generated on first use",
            ), None
        try:
            listed = PublicKeyring.load(store.keyring_path)
        except KeyringError as exc:
            return fail("keyring-unusable", str(exc), keyring_fix), None
        return Check(
            name="key",
            subject=subject,
            status="warn",
            reason="key-missing",
            detail="no signing key, but the keyring lists keys: a new key is generated on"
            " first use and retires them",
            fix="restore signing.key if you have it",
        ), listed
    try:
        signer = store.load_signer()
    except KeyFileError as exc:
        return fail(
            "key-unusable",
            str(exc),
            "chmod 600 it if only its mode is wrong; else pi-guard keys rotate",
        ), None
    try:
        keyring = store.public_keyring(signer)
    except KeyringError as exc:
        return fail("keyring-unusable", str(exc), keyring_fix), None
    return Check(
        name="key", subject=subject, status="ok", reason="key-usable", detail=signer.key_id
    ), keyring
