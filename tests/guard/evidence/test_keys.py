"""Key files, permissions, rotation and the retired-key grace period."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec as ec_key
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from audit.wire import b64url_decode, b64url_encode, utc_now
from guard import KeyFileError, KeyringError
from guard._evidence.keys import RETIRED_KEY_GRACE_SECONDS
from guard.evidence import KeyStore


def test_generated_key_is_private(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    signer, created = store.ensure_key()
    assert created
    assert signer.key_id.startswith("ed25519:") and len(signer.key_id) == 8 + 64
    assert (store.key_path.stat().st_mode & 0o777) == 0o600
    assert (store.home.stat().st_mode & 0o777) == 0o700
    again, created_again = store.ensure_key()
    assert not created_again and again.key_id == signer.key_id


def test_a_missing_key_file_is_named_in_the_error(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    with pytest.raises(KeyFileError) as err:
        store.load_signer()
    assert (err.value.path, err.value.problem) == (
        str(store.key_path),
        "not found (run `pi-guard keygen`)",
    )


def test_each_refused_key_file_is_named_with_its_problem(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    store.ensure_key()
    pem = store.key_path.read_bytes()

    def refusal() -> tuple[str, str]:
        with pytest.raises(KeyFileError) as err:
            store.load_signer()
        return err.value.path, err.value.problem

    path = str(store.key_path)
    store.key_path.chmod(0o640)
    assert refusal() == (path, "mode 0640 lets others read it; chmod 600 it or rotate")
    store.key_path.chmod(0o600)
    if os.getuid() == 0:  # only root can give a file away (CI runs as root)
        os.chown(store.key_path, 65534, 65534)
        assert refusal() == (path, "is owned by another user")
    store.key_path.unlink()
    store.key_path.mkdir()
    assert refusal() == (path, "is not a regular file")
    store.key_path.rmdir()
    elsewhere = tmp_path / "elsewhere.key"
    elsewhere.write_bytes(pem)
    elsewhere.chmod(0o600)
    store.key_path.symlink_to(elsewhere)  # O_NOFOLLOW: a symlink is never followed
    assert refusal() == (path, "cannot open: Too many levels of symbolic links")


def _write_key_file(store: KeyStore, content: bytes) -> None:
    store.key_path.unlink(missing_ok=True)
    fd = os.open(store.key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, content)
    os.close(fd)


def test_a_key_file_that_is_no_ed25519_pem_is_named_with_its_problem(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")

    def refusal() -> tuple[str, str]:
        with pytest.raises(KeyFileError) as err:
            store.load_signer()
        return err.value.path, err.value.problem

    path = str(store.key_path)
    _write_key_file(store, b"-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n")
    assert refusal() == (path, "is not a PEM Ed25519 private key")
    _write_key_file(store, b"")
    assert refusal() == (path, "is not a PEM Ed25519 private key")
    ec = ec_key.generate_private_key(ec_key.SECP256R1())
    pem = ec.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
    _write_key_file(store, pem)
    assert refusal() == (path, "is not an Ed25519 key")


def test_a_key_file_is_read_up_to_64_kib(tmp_path: Path) -> None:
    # OpenSSL skips text before the PEM block, so a key whose block ends exactly at 64 KiB
    # loads, and 32 bytes more of text in front of it push its end line past what is read.
    store = KeyStore.open(tmp_path / "home")
    store.ensure_key()
    pem = store.key_path.read_bytes()
    key_id = store.load_signer().key_id
    lead = b"x" * (64 * 1024 - len(pem) - 1) + b"\n"
    _write_key_file(store, lead + pem)
    assert store.key_path.stat().st_size == 64 * 1024
    assert store.load_signer().key_id == key_id
    _write_key_file(store, b"x" * 32 + lead + pem)
    with pytest.raises(KeyFileError) as err:
        store.load_signer()
    assert err.value.problem == "is not a PEM Ed25519 private key"


def test_ensure_key_on_an_existing_key_retires_nothing(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    assert store.retired_on_create == ()  # nothing created yet, so nothing retired
    store.ensure_key()
    store.key_path.unlink()  # the key vanished: the next ensure_key retires it
    _, created = store.ensure_key()
    assert created and len(store.retired_on_create) == 1
    _, created = store.ensure_key()  # the new key is there: nothing retired this time
    assert not created and store.retired_on_create == ()


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o644, 0o666])
def test_group_or_world_readable_key_is_refused(tmp_path: Path, mode: int) -> None:
    store = KeyStore.open(tmp_path / "home")
    store.ensure_key()
    store.key_path.chmod(mode)
    with pytest.raises(KeyFileError, match="lets others read it"):
        store.load_signer()


def test_missing_and_garbage_key(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    with pytest.raises(KeyFileError, match="not found"):
        store.load_signer()
    fd = os.open(store.key_path, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, b"-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n")
    os.close(fd)
    with pytest.raises(KeyFileError, match="not a PEM Ed25519"):
        store.load_signer()


def test_symlinked_key_file_is_refused(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    store.ensure_key()
    real = tmp_path / "elsewhere.key"
    store.key_path.rename(real)
    store.key_path.symlink_to(real)
    with pytest.raises(KeyFileError, match="cannot open"):
        store.load_signer()


def test_corrupted_keyring(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    store.ensure_key()
    store.keyring_path.write_text(
        '{"schema": "pi-operator-guard/keyring/v1", "keys": [{"keyId": 1}]}'
    )
    with pytest.raises(KeyringError, match=r"corrupted at keys\.0"):
        store.public_keyring()
    store.keyring_path.write_text("not json")
    with pytest.raises(KeyringError, match="corrupted"):
        store.public_keyring()


def test_keyring_entry_whose_key_does_not_match_its_id(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    store.ensure_key()
    text = store.keyring_path.read_text()
    entry_key = store.keyring().keys[0].public_key
    store.keyring_path.write_text(text.replace(entry_key, b64url_encode(b"\x01" * 32)))
    with pytest.raises(KeyringError, match="does not match"):
        store.public_keyring()


def test_rotation_retires_the_old_key_with_grace(tmp_path: Path) -> None:
    store = KeyStore.open(tmp_path / "home")
    old, _ = store.ensure_key()
    old_id, new = store.rotate()
    assert old_id == old.key_id and new.key_id != old.key_id
    assert store.load_signer().key_id == new.key_id
    ring = store.public_keyring()
    statuses = {e.key_id: e.status for e in store.keyring().keys}
    assert statuses == {old.key_id: "retired", new.key_id: "active"}
    now = utc_now()
    before = now - timedelta(seconds=10)
    assert ring.usable_key(old.key_id, now, before) is not None
    # Evidence created at or after the retirement: never, not even in the grace.
    assert ring.usable_key(old.key_id, now, now + timedelta(seconds=1)) is None
    assert ring.usable_key(old.key_id, now) is None
    later = now + timedelta(seconds=RETIRED_KEY_GRACE_SECONDS + 1)
    assert ring.usable_key(old.key_id, later, before) is None
    assert ring.usable_key(new.key_id, later, later) is not None
    assert ring.usable_key("ed25519:" + "0" * 64, now, before) is None


@pytest.mark.parametrize(
    "text", ["", "AA==", "AA", "A", "A" * 86 + "=", "A" * 85 + "B", "A" * 86 + " ", "é" * 86]
)
def test_b64url_decode_is_canonical_only(text: str) -> None:
    assert b64url_decode(text, 64) is None


def test_b64url_round_trip() -> None:
    data = bytes(range(64))
    assert b64url_decode(b64url_encode(data), 64) == data
