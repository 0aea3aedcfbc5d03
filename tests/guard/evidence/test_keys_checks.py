"""The key store's checks, each on its own: errors name the keyring file, the retired-key grace
ends exactly at its bound, a keyring signed twice by one key is refused, and
``trust_unsigned_keyring`` (``keygen --trust-keyring``) signs only a keyring whose one active
key is the guard's own.

Written for the mutants of ``guard/_evidence/keys.py`` that the other tests left alive
(docs/testing.md).
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from guard import KeyringError
from guard._evidence.keys import RETIRED_KEY_GRACE_SECONDS, Keyring, PublicKeyring
from guard.evidence import KeyStore


def _store(tmp_path: Path) -> KeyStore:
    store = KeyStore.open(tmp_path / "home")
    store.ensure_key()
    return store


def _edit(store: KeyStore, change: Any) -> None:
    data = json.loads(store.keyring_path.read_text())
    change(data)
    store.keyring_path.write_text(json.dumps(data))


def _retired_without_time(data: dict[str, Any]) -> None:
    data["keys"][0]["status"] = "retired"


def test_a_broken_entry_read_from_a_file_names_the_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _edit(store, _retired_without_time)
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.load(store.keyring_path)
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem.endswith("has no retiredAt")


def test_a_broken_keyring_left_by_a_lost_key_names_the_file(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _edit(store, _retired_without_time)
    store.key_path.unlink()
    with pytest.raises(KeyringError) as raised:
        store.ensure_key()
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem.endswith("has no retiredAt")
    assert not store.key_path.exists()


def test_a_keyring_signed_twice_by_one_key_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _edit(store, lambda data: data["signatures"].append(data["signatures"][0]))
    store.key_path.unlink()  # ensure_key checks the keyring as its last key signed it
    with pytest.raises(KeyringError) as raised:
        store.ensure_key()
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem == "a key signed it twice"


def test_the_grace_of_a_retired_key_ends_exactly_at_its_bound(tmp_path: Path) -> None:
    store = _store(tmp_path)
    old, _ = store.rotate()
    ring = store.public_keyring()
    retired = ring.keys[old][1]
    assert retired is not None
    created = retired - timedelta(seconds=1)
    grace = timedelta(seconds=RETIRED_KEY_GRACE_SECONDS)
    end = retired + grace
    assert ring.usable_key(old, end - timedelta(milliseconds=1), created) is not None
    assert ring.usable_key(old, end, created) is None
    assert ring.usable_key(old, end, created, grace_seconds=RETIRED_KEY_GRACE_SECONDS + 1)


def test_trust_without_a_key_or_a_keyring_does_nothing(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    assert store.trust_unsigned_keyring() is False
    store.ensure_key()
    store.keyring_path.unlink()
    assert store.trust_unsigned_keyring() is False
    assert not store.keyring_path.exists()


def test_trust_of_a_keyring_that_already_verifies_changes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    before = store.keyring_path.read_bytes()
    assert store.trust_unsigned_keyring() is False
    assert store.keyring_path.read_bytes() == before


def test_trust_signs_an_unsigned_keyring_whose_active_key_is_ours(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _edit(store, lambda data: data.update(signatures=[]))
    with pytest.raises(KeyringError):
        store.trusted_keyring()
    store.keyring_path.chmod(0o600)
    assert store.trust_unsigned_keyring() is True
    signer = store.load_signer()
    trusted = store.trusted_keyring()
    assert [s.key_id for s in trusted.signatures] == [signer.key_id]
    assert store.keyring_path.stat().st_mode & 0o777 == 0o644
    assert store.trust_unsigned_keyring() is False


def test_trust_refuses_a_keyring_whose_active_key_is_not_ours(tmp_path: Path) -> None:
    store = _store(tmp_path)
    other = _store(tmp_path / "other")
    store.keyring_path.write_bytes(other.keyring_path.read_bytes())
    before = store.keyring_path.read_bytes()
    with pytest.raises(KeyringError) as raised:
        store.trust_unsigned_keyring()
    assert raised.value.path == str(store.keyring_path)
    assert "are not exactly the signing key" in raised.value.problem
    assert store.keyring_path.read_bytes() == before


def test_trust_refuses_a_keyring_with_a_broken_entry(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _edit(store, _retired_without_time)
    with pytest.raises(KeyringError) as raised:
        store.trust_unsigned_keyring()
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem.endswith("has no retiredAt")


def test_an_unsigned_keyring_left_by_a_lost_key_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    key_id = store.load_signer().key_id
    _edit(store, lambda data: data.update(signatures=[]))
    store.key_path.unlink()
    with pytest.raises(KeyringError) as raised:
        store.ensure_key()
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem == (
        f"not signed by its active key {key_id} (edited, or written by an older version: "
        "check `pi-guard keys list` and run `pi-guard keygen --trust-keyring`)"
    )
    assert not store.key_path.exists()


def _flip(signature: str) -> str:
    return ("B" if signature[0] == "A" else "A") + signature[1:]


@pytest.mark.parametrize("who", ["its own key", "a key not in the keyring"])
def test_a_signature_that_does_not_verify_is_refused(tmp_path: Path, who: str) -> None:
    store = _store(tmp_path)
    stranger = _store(tmp_path / "stranger").load_signer().key_id
    signature: dict[str, str] = {}

    def tamper(data: dict[str, Any]) -> None:
        if who == "its own key":
            data["signatures"][0]["signature"] = _flip(data["signatures"][0]["signature"])
            signature["by"] = data["signatures"][0]["keyId"]
        else:
            data["signatures"].append({**data["signatures"][0], "keyId": stranger})
            signature["by"] = stranger

    _edit(store, tamper)
    store.key_path.unlink()
    with pytest.raises(KeyringError) as raised:
        store.ensure_key()
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem == f"the signature by {signature['by']} does not verify"


def test_a_missing_keyring_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "keyring.json"
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.load(path)
    assert raised.value.path == str(path)
    assert raised.value.problem == "file not found"


def test_a_keyring_of_exactly_the_size_cap_is_read_one_byte_more_is_not(tmp_path: Path) -> None:
    store = _store(tmp_path)
    text = store.keyring_path.read_bytes().rstrip()
    cap = 1 << 20
    store.keyring_path.write_bytes(text + b" " * (cap - len(text)))
    assert PublicKeyring.load(store.keyring_path).keys
    store.keyring_path.write_bytes(text + b" " * (cap + 1 - len(text)))
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.load(store.keyring_path)
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem == "larger than 1 MiB"


def test_a_tampered_signature_names_the_keyring_it_was_read_from(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _edit(
        store,
        lambda data: data["signatures"][0].update(
            signature=_flip(data["signatures"][0]["signature"])
        ),
    )
    with pytest.raises(KeyringError) as raised:
        store.trusted_keyring()
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem.endswith("does not verify")


def test_a_keyring_of_another_guard_is_refused_by_name(tmp_path: Path) -> None:
    store = _store(tmp_path)
    other = _store(tmp_path / "other")
    store.keyring_path.write_bytes(other.keyring_path.read_bytes())
    with pytest.raises(KeyringError) as raised:
        store.trusted_keyring()
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem == (
        f"the active keys {[other.load_signer().key_id]} are not exactly the signing key "
        f"{store.load_signer().key_id}: refusing a keyring this guard did not write"
    )


def test_a_keyring_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    path = tmp_path / "keyring.json"
    path.mkdir()
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.load(path)
    assert raised.value.path == str(path)
    assert raised.value.problem == "cannot read: Is a directory"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[]", "corrupted at (top): Input should be an object"),
        ('{"keys": 1}', "corrupted at keys: Input should be a valid array"),
    ],
)
def test_a_corrupted_keyring_says_where(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "keyring.json"
    path.write_text(text)
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.load(path)
    assert raised.value.path == str(path)
    assert raised.value.problem == problem


def test_a_public_key_that_is_not_canonical_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    def uncanonical(data: dict[str, Any]) -> None:
        key = data["keys"][0]["publicKey"]
        last = alphabet.index(key[-1])
        data["keys"][0]["publicKey"] = key[:-1] + alphabet[last | 1]  # padding bits set

    _edit(store, uncanonical)
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.load(store.keyring_path)
    assert raised.value.path == str(store.keyring_path)
    assert raised.value.problem == "public key is not canonical base64url of 32 bytes"


def test_a_keyring_given_in_memory_is_named_as_the_keyring(tmp_path: Path) -> None:
    store = _store(tmp_path)
    _edit(store, _retired_without_time)
    keyring = Keyring.model_validate_json(store.keyring_path.read_bytes())
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.from_keyring(keyring)
    assert raised.value.path == "keyring"


@pytest.mark.parametrize("when", [None, "2026-11-23 12:00:00", "2026-02-30T00:00:00.000Z"])
def test_a_retired_key_without_a_real_retirement_time_is_refused(
    tmp_path: Path, when: str | None
) -> None:
    store = _store(tmp_path)
    key_id = store.load_signer().key_id

    def retire(data: dict[str, Any]) -> None:
        data["keys"][0].update(status="retired", retiredAtIso=when)

    _edit(store, retire)
    with pytest.raises(KeyringError) as raised:
        PublicKeyring.load(store.keyring_path)
    assert raised.value.path == str(store.keyring_path)
    if when is None:
        assert raised.value.problem == f"retired key {key_id} has no retiredAt"
    else:
        assert raised.value.problem.startswith("retiredAt")
        assert when in raised.value.problem
