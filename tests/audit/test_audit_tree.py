"""The log's Merkle tree: the cache beside the log, old JSON heads, resuming from a checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import LogIntegrityError
from audit.log import AuditLog
from audit.tlog import leaf_hash, open_checkpoint, root_of
from audit.tlog._tree import TreeState, read_tree_state, tree_path_for
from audit.verify import verify_log
from tests.audit.audit_testkit import FixedSigner, executed, legacy_head

SIGNER = FixedSigner(b"\x11" * 32)


def _fill(path: Path, count: int) -> None:
    with AuditLog.open(path, SIGNER, SIGNER.keys) as log:
        for i in range(count):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))


def _root(path: Path) -> bytes:
    return root_of([leaf_hash(line) for line in path.read_bytes().splitlines()])


def _head(path: Path) -> bytes:
    return path.with_name(path.name + ".head").read_bytes()


def test_every_append_signs_the_root_of_the_exact_lines(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    with AuditLog.open(path, SIGNER, SIGNER.keys) as log:
        for i in range(20):
            log.append("tool.executed", executed(f"call-{i}", "ls"))
            checkpoint = open_checkpoint(_head(path), SIGNER.keys).checkpoint
            assert checkpoint.size == i + 2
            assert checkpoint.root == _root(path)


def test_the_cache_holds_the_frontier_before_the_last_record(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 6)
    state = read_tree_state(path)
    assert state is not None
    lines = path.read_bytes().splitlines(keepends=True)
    assert state.frontier.size == len(lines) - 1
    assert state.offset == sum(len(line) for line in lines[:-1])
    assert state.frontier.root() == root_of([leaf_hash(x[:-1]) for x in lines[:-1]])


@pytest.mark.parametrize(
    "damage", ["missing", "garbage", "wrong-frontier", "offset-past-end", "stale"]
)
def test_a_bad_cache_is_never_trusted(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 5)
    cache = tree_path_for(path)
    stale = cache.read_bytes()
    _fill(path, 3)
    if damage == "missing":
        cache.unlink()
    elif damage == "garbage":
        cache.write_bytes(b"{not json")
    elif damage == "wrong-frontier":
        state = TreeState.from_json(cache.read_bytes())
        state.frontier.hashes[0] = b"\x00" * 32
        cache.write_bytes(state.to_json())
    elif damage == "offset-past-end":
        state = TreeState.from_json(cache.read_bytes())
        cache.write_bytes(TreeState(state.offset + 10_000, state.frontier).to_json())
    else:
        cache.write_bytes(stale)
    _fill(path, 2)  # appends rebuild what the cache cannot give
    assert verify_log(path, SIGNER.keys).decision == "intact"
    assert open_checkpoint(_head(path), SIGNER.keys).checkpoint.root == _root(path)


def test_a_changed_record_is_refused_even_with_a_matching_cache(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 4)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[-1] = lines[-1].replace(b"call-3", b"call-9")  # breaks its own hash: a line fault
    path.write_bytes(b"".join(lines))
    with pytest.raises(LogIntegrityError):
        AuditLog.open(path, SIGNER, SIGNER.keys)


def test_an_old_json_head_verifies_and_the_first_append_upgrades_it(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 3)
    head_path = path.with_name(path.name + ".head")
    head_path.write_bytes(legacy_head(path, SIGNER))
    tree_path_for(path).unlink()
    assert verify_log(path, SIGNER.keys).decision == "intact"
    assert json.loads(head_path.read_bytes())["seq"] == 3
    _fill(path, 1)
    checkpoint = open_checkpoint(_head(path), SIGNER.keys).checkpoint
    assert (checkpoint.size, checkpoint.root) == (5, _root(path))
    assert verify_log(path, SIGNER.keys).decision == "intact"


def test_an_old_json_head_naming_another_record_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 3)
    second_last = json.loads(path.read_bytes().splitlines()[-2])
    path.with_name(path.name + ".head").write_bytes(
        legacy_head(path, SIGNER, hash=second_last["hash"])
    )
    with pytest.raises(LogIntegrityError) as refused:
        AuditLog.open(path, SIGNER, SIGNER.keys)
    assert refused.value.kind == "head-mismatch"


def _anchored(path: Path) -> tuple[bytes, TreeState]:
    state = read_tree_state(path)
    assert state is not None
    return _head(path), state


@pytest.fixture
def keys() -> dict[str, Ed25519PublicKey]:
    return SIGNER.keys


def test_resuming_from_a_checkpoint_reads_only_the_new_records(
    tmp_path: Path, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 50)
    note, state = _anchored(path)
    _fill(path, 7)
    full = verify_log(path, keys, against=note)
    resumed = verify_log(path, keys, against=note, resume=state)
    assert full.decision == resumed.decision == "intact"
    assert (full.first_line, full.records) == (1, 58)
    assert (resumed.first_line, resumed.records) == (51, 8)
    assert resumed.root == full.root
    assert resumed.last_hash == full.last_hash


def test_resuming_catches_a_rewritten_old_part(
    tmp_path: Path, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 10)
    note, state = _anchored(path)
    _fill(path, 3)
    # the record the checkpoint ends with is rewritten (a forger re-signing nothing)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[state.frontier.size] = lines[state.frontier.size].replace(b"call-9", b"call-8")
    path.write_bytes(b"".join(lines))
    resumed = verify_log(path, keys, against=note, resume=state)
    assert (resumed.decision, resumed.line) == ("tampered", state.frontier.size + 1)
    # a state whose frontier was changed does not reach the anchored root
    _fill_path = tmp_path / "b" / "audit.jsonl"
    _fill(_fill_path, 10)
    note_b, state_b = _anchored(_fill_path)
    _fill(_fill_path, 2)
    forged = TreeState(state_b.offset, state_b.frontier.copy())
    forged.frontier.hashes[0] = b"\x01" * 32
    result = verify_log(_fill_path, keys, against=note_b, resume=forged)
    assert (result.decision, result.first_line) == ("intact", 1)  # read in full instead


def test_a_state_that_does_not_fit_the_checkpoint_is_ignored(
    tmp_path: Path, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 10)
    note, _ = _anchored(path)
    _fill(path, 4)
    other_state = read_tree_state(path)
    result = verify_log(path, keys, against=note, resume=other_state)
    assert (result.decision, result.first_line) == ("intact", 1)


def test_fork_and_rollback_against_an_anchored_checkpoint(
    tmp_path: Path, keys: dict[str, Ed25519PublicKey]
) -> None:
    path = tmp_path / "audit.jsonl"
    _fill(path, 10)
    note = _head(path)
    pristine = path.read_bytes()
    pristine_head = _head(path)
    _fill(path, 5)
    assert verify_log(path, keys, against=note).decision == "intact"
    # rollback: log and head put back to an older signed state
    lines = pristine.splitlines(keepends=True)
    older_path = tmp_path / "older" / "audit.jsonl"
    _fill(older_path, 1)
    # truncation of log and head to an older consistent state
    path.write_bytes(b"".join(lines[:6]))
    path.with_name(path.name + ".head").write_bytes(pristine_head)
    result = verify_log(path, keys, against=note)
    assert result.decision == "tampered"
    assert result.exit_code == 4
    # a checkpoint of another log is not evidence about this one
    result = verify_log(tmp_path / "older" / "audit.jsonl", keys, against=note)
    assert (result.decision, result.fault) == ("tampered", "checkpoint-untrusted")
