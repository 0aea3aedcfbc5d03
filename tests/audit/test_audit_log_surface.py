"""The smaller parts of AuditLog's surface: ``repr`` and ``trust`` after a key rotation.

A log opened with a fixed keyring refuses a head signed by a key it does not know
(another process rotated the key); :meth:`AuditLog.trust` gives it the new keyring.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogIntegrityError, UsageError
from audit.log import AuditLog
from audit.verify import read_records, verify_log
from tests.audit.audit_testkit import FixedSigner, executed, keyring


def test_repr_names_the_log_path(log_path: Path, signer: FixedSigner) -> None:
    log = AuditLog.open(log_path, signer, signer.keys)
    assert repr(log) == f"AuditLog({str(log_path)!r})"
    log.close()
    assert repr(log) == f"AuditLog({str(log_path)!r})"


def _rotate_elsewhere(path: Path, old: FixedSigner, new: FixedSigner) -> None:
    """Another process rotates the key and appends with the new one."""
    with AuditLog.open(path, old, keyring(old, new)) as other:
        other.append("key.rotated", {"oldKeyId": old.key_id, "newKeyId": new.key_id})
        other.use_signer(new)
        other.append("tool.executed", executed("elsewhere"))


def test_trust_lets_a_log_accept_heads_of_a_rotated_key(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log.append("tool.executed", executed("before"))
        _rotate_elsewhere(log_path, signer, other_signer)
        with pytest.raises(LogIntegrityError) as refused:
            log.append("tool.executed", executed("refused"))
        assert refused.value.kind == "head-unknown-key"

        log.trust(keyring(signer, other_signer))
        log.use_signer(other_signer)
        rec = log.append("tool.executed", executed("after"))

    records = list(read_records(log_path))
    assert records[-1] == rec
    assert [r.data.get("toolCallId") for r in records[-3:]] == [None, "elsewhere", "after"]
    assert verify_log(log_path, keyring(signer, other_signer)).decision == "intact"


def test_trust_accepts_a_key_source_function(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        _rotate_elsewhere(log_path, signer, other_signer)
        log.trust(lambda: keyring(signer, other_signer))
        log.append("tool.executed", executed("after"))
    assert verify_log(log_path, keyring(signer, other_signer)).decision == "intact"


def test_a_key_source_given_to_trust_is_asked_again_after_a_later_rotation(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        source = _CountingKeys(keyring(signer), keyring(signer, other_signer))
        log.trust(source)
        _rotate_elsewhere(log_path, signer, other_signer)  # after trust(): a key it lacks
        log.use_signer(other_signer)
        log.append("tool.executed", executed("after"))
    assert source.calls == 2
    assert verify_log(log_path, keyring(signer, other_signer)).decision == "intact"


def test_trust_refuses_what_is_not_a_keyring(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log, pytest.raises(UsageError) as err:
        log.trust({signer.key_id: "not a key"})  # type: ignore[dict-item]
    assert (err.value.what, err.value.problem) == (
        "public_keys",
        "must map key ids to Ed25519 public keys",
    )


def test_trust_shows_the_type_of_what_is_not_a_keyring(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log, pytest.raises(UsageError) as err:
        log.trust([signer.public_key])  # type: ignore[arg-type]
    assert err.value.value == "list"
    assert str(err.value) == "public_keys: must map key ids to Ed25519 public keys (got list)"


def test_a_refused_trust_keeps_the_key_source_the_log_had(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    # The log asks its key source again when a head names a key it does not know; a
    # refused trust() must not leave the refused value behind as that source.
    source = _CountingKeys(keyring(signer), keyring(signer, other_signer))
    with AuditLog.open(log_path, signer, source) as log:
        for refused in ({signer.key_id: "not a key"}, [signer.public_key], lambda: None):
            with pytest.raises(UsageError):
                log.trust(refused)  # type: ignore[arg-type]
        _rotate_elsewhere(log_path, signer, other_signer)
        log.use_signer(other_signer)
        log.append("tool.executed", executed("after"))
    assert source.calls == 2
    assert verify_log(log_path, keyring(signer, other_signer)).decision == "intact"


def test_a_refused_trust_keeps_the_keys_the_log_had(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    with AuditLog.open(log_path, signer, keyring(signer)) as log:
        with pytest.raises(UsageError):
            log.trust({signer.key_id: other_signer.public_key, "x": "not a key"})  # type: ignore[dict-item]
        log.append("tool.executed", executed("still trusted"))
    assert verify_log(log_path, keyring(signer)).decision == "intact"


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc/self/fd")
@pytest.mark.parametrize("keys", [None, {"ed25519:x": b"raw bytes"}], ids=["none", "bytes"])
def test_opening_with_what_is_not_a_keyring_is_refused_and_leaks_no_file(
    log_path: Path, signer: FixedSigner, keys: object
) -> None:
    AuditLog.open(log_path, signer, signer.keys).close()
    open_before = _open_fds()
    with pytest.raises(UsageError) as err:
        AuditLog.open(log_path, signer, keys)  # type: ignore[arg-type]
    assert (err.value.what, err.value.value) == ("public_keys", type(keys).__name__)
    assert _open_fds() == open_before


class _CountingKeys:
    """A key source function that counts how often it is asked."""

    def __init__(self, *answers: dict[str, Ed25519PublicKey]) -> None:
        self.answers = list(answers)
        self.calls = 0

    def __call__(self) -> dict[str, Ed25519PublicKey]:
        self.calls += 1
        return self.answers[min(self.calls, len(self.answers)) - 1]


def test_a_key_source_is_asked_again_when_the_head_names_a_new_key(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    _rotate_elsewhere(log_path, signer, other_signer)  # the head is now other_signer's
    source = _CountingKeys(keyring(signer), keyring(signer, other_signer))
    with AuditLog.open(log_path, signer, source) as log:
        log.append("tool.executed", executed("after"))
    assert source.calls == 2
    assert verify_log(log_path, keyring(signer, other_signer)).decision == "intact"


def test_a_key_source_that_still_lacks_the_key_is_refused_with_the_reason(
    log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    _rotate_elsewhere(log_path, signer, other_signer)
    source = _CountingKeys(keyring(signer))
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(log_path, signer, source)
    assert source.calls == 2
    assert err.value.kind == "head-unknown-key"
    assert err.value.detail.startswith("the head checkpoint is refused: ")


def test_a_bad_head_signature_is_refused_without_asking_the_key_source_again(
    log_path: Path, signer: FixedSigner
) -> None:
    AuditLog.open(log_path, signer, signer.keys).close()
    head = log_path.with_name("audit.jsonl.head")
    note = head.read_bytes()
    text, _, signature = note.partition(b"\n\n")
    head.write_bytes(text.replace(b"\n1\n", b"\n2\n") + b"\n\n" + signature)  # size edited
    source = _CountingKeys(keyring(signer))
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(log_path, signer, source)
    assert err.value.kind == "head-signature-invalid"
    assert source.calls == 1


def test_a_rotated_key_does_not_make_a_head_of_another_log_acceptable(
    tmp_path: Path, log_path: Path, signer: FixedSigner, other_signer: FixedSigner
) -> None:
    AuditLog.open(log_path, signer, signer.keys).close()
    other = tmp_path / "other" / "audit.jsonl"
    with AuditLog.open(other, other_signer, other_signer.keys) as log:
        log.append("tool.executed", executed("elsewhere"))
    head = log_path.with_name("audit.jsonl.head")
    head.write_bytes(other.with_name("audit.jsonl.head").read_bytes())
    source = _CountingKeys(keyring(signer), keyring(signer, other_signer))
    with pytest.raises(LogIntegrityError) as err:
        AuditLog.open(log_path, signer, source)
    assert err.value.kind == "head-origin-mismatch"
