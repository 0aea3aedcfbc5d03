"""The tamper matrix: every edit of a real log of a few hundred records is caught.

Each case checks the decision, the fault kind and the first bad line (1-based).
"""

from __future__ import annotations

import base64
import json
import os
import random
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogIntegrityError
from audit.log import AuditLog
from audit.verify import VerifyResult, verify_log
from audit.wire import canonical_json, sha256_prefixed
from tests.audit.audit_testkit import (
    FixedSigner,
    checkpoint_head,
    consumed,
    declined,
    executed,
    keyring,
    legacy_head,
    recorded,
    rejected,
)

RECORDS = 200
OLD_HEAD_SEQ = 80


@dataclass(frozen=True)
class Pristine:
    lines: list[bytes]
    head: bytes
    old_head: bytes
    other_lines: list[bytes]
    other_head: bytes
    signer: FixedSigner


def _build(path: Path, signer: FixedSigner, *, capture: int | None = None) -> bytes:
    """A log of RECORDS lines with a mix of events; returns the head captured at ``capture``."""
    captured = b""
    head = path.with_name(path.name + ".head")
    with AuditLog.open(path, signer, signer.keys) as log:
        seq = 0
        i = 0
        while seq < RECORDS - 1:
            kind = i % 6
            eid = f"oce_{i:022d}"
            if kind == 0:
                rec = log.append("confirmation.recorded", recorded(eid, f"call-{i}", f"cmd {i}"))
            elif kind == 1:
                rec = log.append("evidence.consumed", consumed(f"oce_{i - 1:022d}", f"cmd {i - 1}"))
            elif kind == 2:
                rec = log.append("tool.executed", executed(f"call-{i - 2}", f"cmd {i - 2}"))
            elif kind == 3:
                rec = log.append("confirmation.declined", declined(f"call-{i}", f"cmd {i}"))
            elif kind == 4:
                rec = log.append("evidence.rejected", rejected(f"call-{i}", f"cmd {i}"))
            else:
                rec = log.append(
                    "planner.reported",
                    {
                        "planner": "channel",
                        "decision": "blocked",
                        "reasons": [f"r{i}", "é ü \u2028"],
                    },
                )
            seq = rec.seq
            i += 1
            if seq == capture:
                captured = head.read_bytes()
    return captured


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Pristine:
    signer = FixedSigner(bytes(range(32)))
    base = tmp_path_factory.mktemp("pristine")
    path = base / "audit.jsonl"
    old_head = _build(path, signer, capture=OLD_HEAD_SEQ)
    other = base / "other" / "audit.jsonl"
    _build(other, signer)
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == RECORDS
    return Pristine(
        lines=lines,
        head=path.with_name("audit.jsonl.head").read_bytes(),
        old_head=old_head,
        other_lines=other.read_bytes().splitlines(keepends=True),
        other_head=other.with_name("audit.jsonl.head").read_bytes(),
        signer=signer,
    )


@pytest.fixture
def signer(pristine: Pristine) -> FixedSigner:
    return pristine.signer


@pytest.fixture
def keys(pristine: Pristine) -> dict[str, Ed25519PublicKey]:
    return keyring(pristine.signer)


def _check(
    tmp_path: Path,
    keys: dict[str, Ed25519PublicKey],
    content: bytes,
    head: bytes | None,
) -> VerifyResult:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(content)
    head_path = tmp_path / "audit.jsonl.head"
    if head is None:
        head_path.unlink(missing_ok=True)
    else:
        head_path.write_bytes(head)
    return verify_log(path, keys)


def _expect(result: VerifyResult, fault: str, line: int | None) -> None:
    assert (result.decision, result.fault, result.line) == ("tampered", fault, line), result


def test_pristine_log_is_intact(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    result = _check(tmp_path, keys, b"".join(pristine.lines), pristine.head)
    assert (result.decision, result.fault, result.line) == ("intact", None, None)
    assert result.records == RECORDS
    assert result.exit_code == 0


def _flip_bits(
    path: Path,
    keys: dict[str, Ed25519PublicKey],
    lines: list[bytes],
    line_no: int,
    offsets: range | list[int],
) -> int:
    """Flip every bit of ``offsets`` of line ``line_no`` one at a time; each must be caught."""
    start = sum(len(line) for line in lines[: line_no - 1])
    line = lines[line_no - 1]
    checked = 0
    fd = os.open(path, os.O_RDWR)
    try:
        for index in offsets:
            byte = line[index]
            for bit in range(8):
                os.pwrite(fd, bytes([byte ^ (1 << bit)]), start + index)
                result = verify_log(path, keys)
                is_final_lf = line_no == len(lines) and index == len(line) - 1
                allowed = {"torn-line"} if is_final_lf else {"malformed-line", "hash-mismatch"}
                assert result.decision == "tampered", (index, bit)
                assert result.fault in allowed, (index, bit, result)
                assert result.line == line_no, (index, bit, result)
                checked += 1
            os.pwrite(fd, bytes([byte]), start + index)
    finally:
        os.close(fd)
    return checked


@pytest.mark.slow  # every bit of three lines, a verify each: make test runs it
@pytest.mark.parametrize("line_no", [1, 2, 3])
def test_every_bit_flip_of_the_first_lines_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], line_no: int
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"".join(pristine.lines))
    (tmp_path / "audit.jsonl.head").write_bytes(pristine.head)
    line = pristine.lines[line_no - 1]
    assert _flip_bits(path, keys, pristine.lines, line_no, range(len(line))) == 8 * len(line)


@pytest.mark.slow
@pytest.mark.parametrize("line_no", [RECORDS // 2, RECORDS - 1, RECORDS])
def test_bit_flips_across_later_lines_are_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], line_no: int
) -> None:
    # Every bit of every 13th byte plus the last bytes (closing brace and LF): each verify
    # re-reads the whole prefix, so all bits of all bytes here would take minutes.
    path = tmp_path / "audit.jsonl"
    path.write_bytes(b"".join(pristine.lines))
    (tmp_path / "audit.jsonl.head").write_bytes(pristine.head)
    size = len(pristine.lines[line_no - 1])
    offsets = sorted({*range(line_no % 13, size, 13), size - 3, size - 2, size - 1})
    assert _flip_bits(path, keys, pristine.lines, line_no, offsets) == 8 * len(offsets)


def test_every_bit_flip_of_the_last_line_of_a_short_log_is_caught(
    tmp_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, signer, signer.keys) as log:
        for i in range(5):
            log.append("confirmation.recorded", recorded(f"oce_{i:022d}", f"c{i}", f"cmd {i}"))
    lines = path.read_bytes().splitlines(keepends=True)
    size = len(lines[-1])
    assert _flip_bits(path, keys, lines, len(lines), range(size)) == 8 * size


@pytest.mark.parametrize("line_no", [1, 2, RECORDS // 2, RECORDS - 1, RECORDS])
def test_deleting_any_line_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], line_no: int
) -> None:
    lines = [line for i, line in enumerate(pristine.lines, 1) if i != line_no]
    result = _check(tmp_path, keys, b"".join(lines), pristine.head)
    if line_no == RECORDS:
        _expect(result, "records-missing-at-end", RECORDS)
    else:
        _expect(result, "seq-mismatch", line_no)


def test_deleting_each_line_in_turn_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    rng = random.Random(7)
    for line_no in sorted(rng.sample(range(3, RECORDS - 1), 25)):
        lines = pristine.lines[: line_no - 1] + pristine.lines[line_no:]
        result = _check(tmp_path, keys, b"".join(lines), pristine.head)
        _expect(result, "seq-mismatch", line_no)


@pytest.mark.parametrize("line_no", [1, 2, RECORDS // 2, RECORDS - 1])
def test_swapping_neighbours_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], line_no: int
) -> None:
    lines = list(pristine.lines)
    lines[line_no - 1], lines[line_no] = lines[line_no], lines[line_no - 1]
    _expect(_check(tmp_path, keys, b"".join(lines), pristine.head), "seq-mismatch", line_no)


def test_moving_a_line_far_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    lines = list(pristine.lines)
    moved = lines.pop(150)
    lines.insert(20, moved)
    _expect(_check(tmp_path, keys, b"".join(lines), pristine.head), "seq-mismatch", 21)


@pytest.mark.parametrize("line_no", [1, RECORDS // 2, RECORDS])
def test_duplicating_a_line_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], line_no: int
) -> None:
    lines = list(pristine.lines)
    lines.insert(line_no, lines[line_no - 1])
    _expect(_check(tmp_path, keys, b"".join(lines), pristine.head), "seq-mismatch", line_no + 1)


def test_inserting_a_forged_record_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    # The forger computes a correct hash and prev: the chain still breaks after it.
    at = 120  # the forged record becomes line 121 with seq 120
    previous = pristine.lines[at - 1]
    prev_hash = json.loads(previous)["hash"]
    body = {
        "seq": at,
        "ts": "2026-11-22T01:00:00.000Z",
        "event": "tool.executed",
        "data": executed("forged"),
        "prev": prev_hash,
    }
    forged = canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"
    lines = [*pristine.lines[:at], forged, *pristine.lines[at:]]
    _expect(_check(tmp_path, keys, b"".join(lines), pristine.head), "seq-mismatch", at + 2)


def test_replacing_a_line_with_one_from_another_log_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    lines = list(pristine.lines)
    lines[149] = pristine.other_lines[149]
    _expect(_check(tmp_path, keys, b"".join(lines), pristine.head), "prev-mismatch", 150)
    lines = list(pristine.lines)
    lines[0] = pristine.other_lines[0]  # a valid genesis of another log: caught on line 2
    _expect(_check(tmp_path, keys, b"".join(lines), pristine.head), "prev-mismatch", 2)


@pytest.mark.slow
def test_truncating_at_every_offset_of_the_last_two_lines_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    content = b"".join(pristine.lines)
    a = len(content) - len(pristine.lines[-1]) - len(pristine.lines[-2])
    b = len(content) - len(pristine.lines[-1])
    path = tmp_path / "audit.jsonl"
    path.write_bytes(content)
    (tmp_path / "audit.jsonl.head").write_bytes(pristine.head)
    for cut in range(len(content) - 1, a - 1, -1):
        os.truncate(path, cut)
        result = verify_log(path, keys)
        if cut == a:
            _expect(result, "records-missing-at-end", RECORDS - 1)
        elif cut < b:
            _expect(result, "torn-line", RECORDS - 1)
        elif cut == b:
            _expect(result, "records-missing-at-end", RECORDS)
        else:
            _expect(result, "torn-line", RECORDS)


def test_truncating_to_nothing_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    _expect(_check(tmp_path, keys, b"", pristine.head), "records-missing-at-end", 1)


def test_an_older_head_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    result = _check(tmp_path, keys, b"".join(pristine.lines), pristine.old_head)
    _expect(result, "records-after-head", OLD_HEAD_SEQ + 2)
    assert result.head_seq == OLD_HEAD_SEQ


def test_a_head_of_another_log_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    result = _check(tmp_path, keys, b"".join(pristine.lines), pristine.other_head)
    _expect(result, "head-origin-mismatch", None)


def test_appending_a_line_with_a_wrong_hash_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    last = json.loads(pristine.lines[-1])
    body = {**last, "seq": RECORDS, "prev": last["hash"], "hash": "sha256:" + "0" * 64}
    extra = canonical_json(body) + b"\n"
    result = _check(tmp_path, keys, b"".join(pristine.lines) + extra, pristine.head)
    _expect(result, "hash-mismatch", RECORDS + 1)


def test_appending_a_well_formed_record_without_the_key_is_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    last = json.loads(pristine.lines[-1])
    body = {k: v for k, v in last.items() if k != "hash"}
    body.update(seq=RECORDS, prev=last["hash"])
    extra = canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"
    result = _check(tmp_path, keys, b"".join(pristine.lines) + extra, pristine.head)
    _expect(result, "records-after-head", RECORDS + 1)


def _swap_signature(note: bytes, other: bytes) -> bytes:
    """``note``'s text under ``other``'s signature lines."""
    return note.partition(b"\n\n")[0] + b"\n\n" + other.partition(b"\n\n")[2]


def test_forged_heads_are_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], signer: FixedSigner
) -> None:
    content = b"".join(pristine.lines)
    path = tmp_path / "audit.jsonl"
    path.write_bytes(content)
    mallory = FixedSigner(b"\x42" * 32)
    # signed by a key nobody trusts
    forged = checkpoint_head(path, mallory)
    _expect(_check(tmp_path, keys, content, forged), "head-unknown-key", None)
    # claims the trusted key's name and id, signed by another key
    ours = checkpoint_head(path, signer)
    text, _, sig_line = ours.partition(b"\n\n")
    key_id = base64.b64decode(sig_line.split(b" ")[2])[:4]
    bad = base64.b64encode(key_id + mallory.sign(text + b"\n"))
    forged = text + b"\n\n" + b" ".join([*sig_line.split(b" ")[:2], bad]) + b"\n"
    _expect(_check(tmp_path, keys, content, forged), "head-signature-invalid", None)
    # another size under the original signature
    forged = _swap_signature(checkpoint_head(path, mallory, size=RECORDS - 1), pristine.head)
    _expect(_check(tmp_path, keys, content, forged), "head-signature-invalid", None)
    # a head re-pointed at a truncated log, signature kept
    truncated = b"".join(pristine.lines[:-1])
    path.write_bytes(truncated)
    forged = _swap_signature(checkpoint_head(path, mallory), pristine.head)
    _expect(_check(tmp_path, keys, truncated, forged), "head-signature-invalid", None)
    # not a head at all
    _expect(_check(tmp_path, keys, content, b"[]"), "head-malformed", None)
    _expect(_check(tmp_path, keys, content, b"x" * 70_000), "head-malformed", None)


def test_forged_old_format_heads_are_caught(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], signer: FixedSigner
) -> None:
    content = b"".join(pristine.lines)
    path = tmp_path / "audit.jsonl"
    path.write_bytes(content)
    assert _check(tmp_path, keys, content, legacy_head(path, signer)).decision == "intact"
    mallory = FixedSigner(b"\x42" * 32)
    forged = legacy_head(path, mallory)
    _expect(_check(tmp_path, keys, content, forged), "head-unknown-key", None)
    forged = legacy_head(path, mallory, keyId=signer.key_id)
    _expect(_check(tmp_path, keys, content, forged), "head-signature-invalid", None)
    obj = json.loads(legacy_head(path, signer))
    obj["ts"] = "2030-01-01T00:00:00.000Z"
    _expect(_check(tmp_path, keys, content, canonical_json(obj)), "head-signature-invalid", None)


def test_a_line_fault_is_reported_before_a_head_fault(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    lines = list(pristine.lines)
    del lines[10]
    result = _check(tmp_path, keys, b"".join(lines), b"garbage")
    _expect(result, "seq-mismatch", 11)
    assert result.reasons == ("seq-mismatch", "head-malformed")


def test_a_missing_head_is_unanchored_never_intact(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    result = _check(tmp_path, keys, b"".join(pristine.lines), None)
    assert (result.decision, result.fault, result.line) == ("unanchored", "head-missing", None)
    assert result.exit_code == 4
    allowed = verify_log(tmp_path / "audit.jsonl", keys, allow_unanchored=True)
    assert (allowed.decision, allowed.exit_code) == ("unanchored", 0)
    # unanchored does not hide damage in the lines
    lines = pristine.lines[:5] + pristine.lines[6:]
    result = _check(tmp_path, keys, b"".join(lines), None)
    _expect(result, "seq-mismatch", 6)


def test_rollback_of_log_and_head_together_is_caught_against_a_kept_checkpoint(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey]
) -> None:
    # An older, consistent (log, head) pair verifies as intact on its own; a checkpoint
    # kept elsewhere (an anchor) reveals the rollback.
    older = b"".join(pristine.lines[: OLD_HEAD_SEQ + 1])
    result = _check(tmp_path, keys, older, pristine.old_head)
    assert result.decision == "intact"
    rolled = verify_log(tmp_path / "audit.jsonl", keys, against=pristine.head)
    _expect(rolled, "rolled-back", None)
    assert rolled.against_size == RECORDS
    assert rolled.exit_code == 4
    # and the full log extends both its old and its current checkpoint
    full = b"".join(pristine.lines)
    for kept in (pristine.old_head, pristine.head):
        path = tmp_path / "audit.jsonl"
        path.write_bytes(full)
        (tmp_path / "audit.jsonl.head").write_bytes(pristine.head)
        assert verify_log(path, keys, against=kept).decision == "intact"


def test_the_appender_refuses_a_copy_of_the_head_record_after_it(
    tmp_path: Path, pristine: Pristine, keys: dict[str, Ed25519PublicKey], signer: FixedSigner
) -> None:
    # Found by the fuzz test: a duplicated last line was taken for the head's record,
    # and the next append signed a head over a log with two records of one seq.
    content = b"".join([*pristine.lines, pristine.lines[-1]])
    path = tmp_path / "audit.jsonl"
    _check(tmp_path, keys, content, pristine.head)
    with pytest.raises(LogIntegrityError) as refused:
        AuditLog.open(path, signer, signer.keys)
    assert refused.value.kind == "head-mismatch"
    assert path.read_bytes() == content, "a refusing appender leaves the log alone"
    assert verify_log(path, keys).decision == "tampered"
