"""What the appender refuses to sign over, and the reason code and words it gives.

After the head's record only one crashed append's leftovers are accepted (a torn line,
or one record that chains from the head's record); the head's record must chain from
the line before it; a log without a head may only hold what a crash while creating it
leaves. Everything else is refused with the log and head left exactly as they were.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogIntegrityError
from audit.log import AuditLog
from audit.verify import read_records, verify_log
from audit.wire import canonical_json, sha256_prefixed
from tests.audit.audit_testkit import FixedSigner, executed


def _head(path: Path) -> Path:
    return path.with_name(path.name + ".head")


def _fill(path: Path, signer: FixedSigner, count: int) -> None:
    with AuditLog.open(path, signer, signer.keys) as log:
        for i in range(count):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _record(**body: Any) -> bytes:
    """A well-formed line (own hash correct) with the given body."""
    return canonical_json({**body, "hash": sha256_prefixed(canonical_json(body))}) + b"\n"


def _after(line: bytes, **changes: Any) -> bytes:
    """A well-formed record that follows ``line`` (seq + 1, chained), with ``changes``."""
    last = json.loads(line)
    body = {
        "seq": last["seq"] + 1,
        "ts": last["ts"],
        "event": "tool.executed",
        "data": executed("forged"),
        "prev": last["hash"],
    }
    body.update(changes)
    return _record(**body)


def _refusal(path: Path, signer: FixedSigner) -> LogIntegrityError:
    content = path.read_bytes()
    head = _head(path).read_bytes() if _head(path).exists() else None
    with pytest.raises(LogIntegrityError) as refused:
        AuditLog.open(path, signer, signer.keys)
    assert refused.value.path == str(path)
    assert path.read_bytes() == content
    assert (_head(path).read_bytes() if _head(path).exists() else None) == head
    assert sorted(path.parent.glob(path.name + ".torn-*")) == []
    return refused.value


# -- what follows the head's record -----------------------------------------------------


def test_a_damaged_complete_line_after_the_head_says_so(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 3)
    last = _lines(log_path)[-1]
    with log_path.open("ab") as handle:
        handle.write(_after(last).replace(b"forged", b"edited"))  # its hash no longer fits
    err = _refusal(log_path, signer)
    assert err.kind == "hash-mismatch"
    assert err.detail == (
        "the line after the head's record is damaged: the stored hash does not match the record"
    )


def test_a_record_and_a_torn_line_after_the_head_are_refused(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 3)
    last = _lines(log_path)[-1]
    with log_path.open("ab") as handle:
        handle.write(_after(last) + b'{"data":')
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "records-after-head",
        "a record and a torn line follow the head's record: no single crash leaves both",
    )


@pytest.mark.parametrize("seq", [2, 5, 8])
def test_a_record_after_the_head_with_another_seq_is_refused(
    log_path: Path, signer: FixedSigner, seq: int
) -> None:
    _fill(log_path, signer, 3)  # the head names record 3
    last = _lines(log_path)[-1]
    with log_path.open("ab") as handle:
        handle.write(_after(last, seq=seq))
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "seq-mismatch",
        f"the record after the head's record has seq {seq}, not 4",
    )


def test_a_record_after_the_head_that_does_not_chain_from_it_is_refused(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 3)
    last = _lines(log_path)[-1]
    with log_path.open("ab") as handle:
        handle.write(_after(last, prev="sha256:" + "0" * 64))
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "prev-mismatch",
        "the record after the head's record does not chain from it",
    )


def test_one_record_chained_after_the_head_is_quarantined_as_unsigned(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    _fill(log_path, signer, 3)
    last = _lines(log_path)[-1]
    unsigned = _after(last)
    with log_path.open("ab") as handle:
        handle.write(unsigned)
    AuditLog.open(log_path, signer, signer.keys).close()
    recovered = list(read_records(log_path))[-1]
    assert (recovered.seq, recovered.event) == (4, "log.recovered")
    assert recovered.data["reason"] == "unsigned-tail"
    assert recovered.data["bytes"] == len(unsigned)
    assert verify_log(log_path, keys).decision == "intact"


# -- the line before the head's record --------------------------------------------------


def test_a_copy_of_the_heads_record_after_it_does_not_chain_from_the_one_before(
    log_path: Path, signer: FixedSigner
) -> None:
    _fill(log_path, signer, 3)
    with log_path.open("ab") as handle:
        handle.write(_lines(log_path)[-1])
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "head-mismatch",
        "the record the head names (seq 3) does not chain from the one before",
    )


@pytest.mark.parametrize("before", ["other-record", "damaged", "missing", "nothing"])
def test_the_heads_record_must_chain_from_the_line_before_it(
    log_path: Path, signer: FixedSigner, before: str
) -> None:
    _fill(log_path, signer, 3)
    lines = _lines(log_path)
    if before == "other-record":  # a well-formed record 2, but not the one record 3 names
        lines[2] = _after(lines[1], data=executed("other"))
    elif before == "damaged":
        lines[2] = lines[2].replace(b"call-1", b"call-7")
    elif before == "missing":
        del lines[2]
    else:  # the head's record is the first line
        del lines[:3]
    log_path.write_bytes(b"".join(lines))
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "head-mismatch",
        "the record the head names (seq 3) does not chain from the one before",
    )


def test_a_head_naming_record_0_needs_no_line_before(
    log_path: Path, signer: FixedSigner, keys: dict[str, Ed25519PublicKey]
) -> None:
    AuditLog.open(log_path, signer, signer.keys).close()  # only record 0, the head names it
    _fill(log_path, signer, 1)
    assert [r.seq for r in read_records(log_path)] == [0, 1]
    assert verify_log(log_path, keys).decision == "intact"


# -- the log itself ---------------------------------------------------------------------


def test_an_empty_log_under_a_head_is_refused(log_path: Path, signer: FixedSigner) -> None:
    _fill(log_path, signer, 3)
    log_path.write_bytes(b"")
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "records-missing-at-end",
        "the log is empty but its head names record 3",
    )


def test_a_log_removed_while_open_is_refused(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        log_path.unlink()
        with pytest.raises(LogIntegrityError) as err:
            log.append("tool.executed", executed("c"))
    assert (err.value.kind, err.value.detail) == ("log-replaced", "the log file was removed")
    assert err.value.path == str(log_path)
    assert not log_path.exists()


def test_a_log_replaced_while_open_is_refused(log_path: Path, signer: FixedSigner) -> None:
    with AuditLog.open(log_path, signer, signer.keys) as log:
        os.replace(log_path, log_path.with_name("moved.jsonl"))
        log_path.write_bytes(b"")
        with pytest.raises(LogIntegrityError) as err:
            log.append("tool.executed", executed("c"))
    assert (err.value.kind, err.value.detail) == (
        "log-replaced",
        "the log file was replaced while open",
    )
    assert log_path.read_bytes() == b""


# -- a log without a head ---------------------------------------------------------------


@pytest.mark.parametrize(
    "lines",
    [
        ["genesis", "record"],  # a complete log that lost its head
        ["genesis", "torn"],
        ["record"],  # one complete line, but not a genesis record
        ["garbage"],
        ["genesis", "record", "record2"],
        ["newline"],  # a single byte, but a complete line
    ],
)
def test_records_without_a_head_are_refused(
    tmp_path: Path, log_path: Path, signer: FixedSigner, lines: list[str]
) -> None:
    source = tmp_path / "source" / "audit.jsonl"
    _fill(source, signer, 2)
    genesis, first, second = _lines(source)
    pieces = {
        "genesis": genesis,
        "record": first,
        "record2": second,
        "torn": b'{"data":',
        "garbage": b"not json\n",
        "newline": b"\n",
    }
    content = b"".join(pieces[kind] for kind in lines)
    log_path.parent.mkdir()
    log_path.write_bytes(content)
    err = _refusal(log_path, signer)
    assert (err.kind, err.detail) == (
        "head-missing",
        "the log has records but its signed head is missing",
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("genesis", "unsigned-tail"),
        ("torn", "torn-line"),
        ("torn-genesis", "torn-line"),
        ("one-byte", "torn-line"),
    ],
)
def test_what_a_crash_while_creating_the_log_leaves_is_quarantined(
    tmp_path: Path,
    log_path: Path,
    signer: FixedSigner,
    keys: dict[str, Ed25519PublicKey],
    content: str,
    reason: str,
) -> None:
    source = tmp_path / "source" / "audit.jsonl"
    AuditLog.open(source, signer, signer.keys).close()
    genesis = source.read_bytes()
    left = {
        "genesis": genesis,
        "torn": b'{"data":{"logId"',
        "torn-genesis": genesis[:-1],
        "one-byte": b"{",
    }[content]
    log_path.parent.mkdir()
    log_path.write_bytes(left)
    AuditLog.open(log_path, signer, signer.keys).close()

    created, recovered = list(read_records(log_path))
    assert created.event == "log.created"
    assert created.data["logId"] != json.loads(genesis)["data"]["logId"]
    assert recovered.event == "log.recovered"
    (torn,) = sorted(log_path.parent.glob("audit.jsonl.torn-*"))
    assert recovered.data == {"quarantinedTo": torn.name, "bytes": len(left), "reason": reason}
    assert torn.read_bytes() == left
    assert verify_log(log_path, keys).decision == "intact"
