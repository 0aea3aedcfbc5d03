"""Why the appender refuses a log whose signed head names no record it can find.

Each case pins the reason code and the words an operator reads: a damaged head record,
more than one record after the head, a log that ends before the head's record, and a
head that matches nothing at all. A refusing appender leaves the log and head alone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit import LogIntegrityError
from audit.log import AuditLog
from audit.wire import canonical_json, sha256_prefixed
from tests.audit.audit_testkit import FixedSigner, executed, legacy_head


def _head(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def _fill(path: Path, signer: FixedSigner, count: int) -> None:
    with AuditLog.open(path, signer, signer.keys) as log:
        for i in range(count):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _refusal(path: Path, signer: FixedSigner) -> LogIntegrityError:
    """Open the log and return the refusal; the log and its head must be left as they were."""
    content = path.read_bytes()
    head = _head(path).read_bytes()
    with pytest.raises(LogIntegrityError) as refused:
        AuditLog.open(path, signer, signer.keys)
    assert path.read_bytes() == content
    assert _head(path).read_bytes() == head
    assert sorted(path.parent.glob(path.name + ".torn-*")) == []
    return refused.value


def _rehashed(line: bytes) -> bytes:
    """The record of ``line`` with its hash recomputed: well-formed, whatever was edited."""
    record = json.loads(line)
    body = {k: v for k, v in record.items() if k != "hash"}
    return canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"


def test_a_damaged_head_record_is_missing_or_differs(log_path: Path, signer: FixedSigner) -> None:
    _fill(log_path, signer, 3)  # records 0..3, the head names record 3
    lines = _lines(log_path)
    log_path.write_bytes(b"".join(lines[:-1]) + lines[-1].replace(b"call-2", b"call-9"))
    err = _refusal(log_path, signer)
    assert err.kind == "head-mismatch"
    assert err.detail == "the record the head names (seq 3) is missing or differs"
    assert err.path == str(log_path)
    assert str(err) == (
        f"{log_path}: refusing to append (head-mismatch): "
        "the record the head names (seq 3) is missing or differs"
    )


def test_a_well_formed_record_of_the_heads_seq_but_not_its_hash_differs(
    log_path: Path, signer: FixedSigner
) -> None:
    # A head of the format before checkpoints names the record's hash as well as its seq.
    _fill(log_path, signer, 3)
    _head(log_path).write_bytes(legacy_head(log_path, signer))
    lines = _lines(log_path)
    forged = _rehashed(lines[-1].replace(b"call-2", b"call-9"))
    log_path.write_bytes(b"".join(lines[:-1]) + forged)
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "head-mismatch",
        "the record the head names (seq 3) is missing or differs",
    )


@pytest.mark.parametrize("extra", [2, 3])
def test_more_than_one_record_after_the_head_is_refused(
    log_path: Path, signer: FixedSigner, extra: int
) -> None:
    # An older head put back (or records added without the key): no single crash leaves this.
    _fill(log_path, signer, 1)  # the head names record 1
    old_head = _head(log_path).read_bytes()
    _fill(log_path, signer, extra)
    _head(log_path).write_bytes(old_head)
    err = _refusal(log_path, signer)
    assert err.kind == "records-after-head"
    assert err.detail == (
        "more than one record follows the head's record (seq 1): "
        "an older head was put back, or records were added without the key"
    )


@pytest.mark.parametrize(("keep", "last"), [(3, 2), (2, 1), (1, 0)])
def test_a_log_shorter_than_its_head_names_where_it_ends(
    log_path: Path, signer: FixedSigner, keep: int, last: int
) -> None:
    _fill(log_path, signer, 3)  # the head names record 3
    log_path.write_bytes(b"".join(_lines(log_path)[:keep]))
    err = _refusal(log_path, signer)
    assert err.kind == "records-missing-at-end"
    assert err.detail == f"the head names record 3 but the log ends at record {last}"


def test_a_log_ending_past_a_gap_matches_no_record(log_path: Path, signer: FixedSigner) -> None:
    # Records 0, 1, 2 then 5 under a head naming record 3: the last record is past the
    # head, the one before it short of it. Neither "after the head" nor "ends early".
    _fill(log_path, signer, 3)
    head_of_3 = _head(log_path).read_bytes()
    _fill(log_path, signer, 3)  # records 0..6
    lines = _lines(log_path)
    log_path.write_bytes(b"".join([*lines[:3], lines[5]]))
    _head(log_path).write_bytes(head_of_3)
    err = _refusal(log_path, signer)
    assert err.kind == "head-mismatch"
    assert err.detail == "no record in the log matches the head (seq 3)"
    assert err.path == str(log_path)


def test_a_log_of_only_a_torn_line_matches_no_record(log_path: Path, signer: FixedSigner) -> None:
    _fill(log_path, signer, 3)
    log_path.write_bytes(b'{"data":{"logId":"log_')
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "head-mismatch",
        "no record in the log matches the head (seq 3)",
    )


@pytest.mark.parametrize(("edit", "lines_before"), [("duplicate", 5), ("delete", 3)])
def test_a_head_record_at_the_wrong_line_is_refused(
    log_path: Path, signer: FixedSigner, edit: str, lines_before: int
) -> None:
    # Record 1 duplicated or deleted: the head's record still chains from the line
    # before it, but it is not the 4th line of the log.
    _fill(log_path, signer, 3)
    lines = _lines(log_path)
    if edit == "duplicate":
        lines.insert(1, lines[1])
    else:
        del lines[1]
    log_path.write_bytes(b"".join(lines))
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "head-mismatch",
        f"the head names 4 records but {lines_before} lines lead to its record",
    )


def test_an_earlier_record_rewritten_consistently_does_not_hash_to_the_signed_root(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 3)
    lines = _lines(log_path)
    lines[1] = _rehashed(lines[1].replace(b"call-0", b"call-X"))
    log_path.write_bytes(b"".join(lines))
    # Without its Merkle cache the appender hashes every record up to the head's.
    log_path.with_name("audit.jsonl.tree").unlink()
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "root-mismatch",
        "the records do not hash to the root the signed checkpoint names: a record was changed",
    )
