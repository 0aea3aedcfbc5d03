"""Fuzzing the audit verifier with arbitrarily mutated logs and heads.

Properties:

* ``verify_log`` never says ``intact`` for a log whose bytes differ from the original;
* for a changed head file it says ``intact`` only if the head still means the same signed
  statement (JSON whitespace around a signed head is not part of what is signed);
* it returns a typed result or raises one of ``audit``'s own errors, nothing else;
* an appender opened on a mutated log never hides the change: either it refuses, or the
  log it leaves behind still fails verification (unless the change only added bytes after
  the last signed record, which crash recovery moves aside and records).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from audit import AuditError, AuditHead, AuditLog, LogFormatError, read_records, verify_log
from guard import Guard, KeyStore, Signer

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass(frozen=True)
class Original:
    log: bytes
    head: bytes
    keys: dict[str, Ed25519PublicKey]
    home: Path


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Original]:
    root = tmp_path_factory.mktemp("verify-fuzz")
    project = root / "project"
    (project / "build").mkdir(parents=True)
    command = {"command": "rm -rf build"}
    with Guard.open(root / "home") as guard:
        for n in range(4):
            rec = guard.record("bash", command, project, confirmed=True, tool_call_id=f"c{n}")
            assert rec.envelope is not None
            guard.consume(rec.envelope.model_dump(mode="json"), "bash", command, project)
            guard.tool_executed(f"c{n}", "bash", command, project, False, rec.evidence_id)
        guard.record("bash", command, project, confirmed=False)
        log, head = guard.audit.path.read_bytes(), guard.audit.head_path.read_bytes()
        yield Original(log, head, guard.public_keyring().public_keys(), root / "home")


@st.composite
def mutated_logs(draw: st.DrawFn, log: bytes) -> bytes:
    data = log
    for _ in range(draw(st.integers(1, 3))):
        lines = data.splitlines(keepends=True)
        op = draw(
            st.sampled_from(
                [
                    "flip-bit",
                    "set-byte",
                    "insert",
                    "delete-range",
                    "truncate",
                    "append",
                    "drop-line",
                    "dup-line",
                    "swap-lines",
                    "replace-line",
                ]
            )
        )
        event(op)
        size = max(len(data), 1)
        at = draw(st.integers(0, size - 1))
        if op == "flip-bit" and data:
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1 :]
        elif op == "set-byte" and data:
            data = data[:at] + bytes([draw(st.integers(0, 255))]) + data[at + 1 :]
        elif op == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
        elif op == "delete-range":
            data = data[:at] + data[at + draw(st.integers(1, 64)) :]
        elif op == "truncate":
            data = data[:at]
        elif op == "append":
            data = data + draw(st.binary(min_size=1, max_size=64))
        elif lines and op in ("drop-line", "dup-line", "swap-lines", "replace-line"):
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if op == "drop-line":
                del lines[i]
            elif op == "dup-line":
                lines.insert(j, lines[i])
            elif op == "swap-lines":
                lines[i], lines[j] = lines[j], lines[i]
            else:
                lines[i] = lines[j]
            data = b"".join(lines)
    return data


def write(directory: Path, log: bytes, head: bytes | None) -> Path:
    path = directory / "audit.jsonl"
    path.write_bytes(log)
    if head is not None:
        path.with_name("audit.jsonl.head").write_bytes(head)
    return path


def verify(path: Path, keys: dict[str, Ed25519PublicKey], *, stats: bool = True) -> str:
    try:
        result = verify_log(path, keys)
    except AuditError:
        return "error"
    if stats:
        event(f"{result.decision}: {result.fault}")
    if result.decision != "intact":
        assert result.fault is not None and result.reasons
        assert result.exit_code == 4
    return result.decision


@SETTINGS
@given(data=st.data())
def test_a_changed_log_never_verifies_intact(original: Original, data: st.DataObject) -> None:
    mutated = data.draw(mutated_logs(original.log))
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), mutated, original.head)
        decision = verify(path, original.keys)
        if mutated == original.log:
            assert decision == "intact"
            return
        assert decision != "intact"
        try:
            for _ in read_records(path):
                pass
        except LogFormatError:
            pass


@SETTINGS
@given(data=st.data())
def test_the_appender_never_signs_over_a_change(original: Original, data: st.DataObject) -> None:
    mutated = data.draw(mutated_logs(original.log))
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), mutated, original.head)
        signer = _signer(original.home)
        try:
            with AuditLog.open(path, signer, original.keys) as log:
                log.append("planner.reported", {"planner": "x", "decision": "y", "reasons": []})
        except AuditError:
            assert path.read_bytes() == mutated, "a refusing appender must leave the log alone"
            event("appender refused")
            return
        decision = verify(path, original.keys)
        if mutated.startswith(original.log):
            # Only bytes after the last signed record changed: recovery moved them aside.
            assert decision == "intact"
            assert any(Path(tmp).glob("audit.jsonl.torn-*")) or mutated == original.log
        else:
            assert decision != "intact", "the appender signed a head over a changed log"


@st.composite
def mutated_heads(draw: st.DrawFn, head: bytes) -> bytes:
    op = draw(st.sampled_from(["flip-bit", "insert", "delete", "whitespace", "replace"]))
    at = draw(st.integers(0, len(head) - 1))
    if op == "flip-bit":
        return head[:at] + bytes([head[at] ^ (1 << draw(st.integers(0, 7)))]) + head[at + 1 :]
    if op == "insert":
        return head[:at] + draw(st.binary(min_size=1, max_size=4)) + head[at:]
    if op == "delete":
        return head[:at] + head[at + draw(st.integers(1, 16)) :]
    if op == "whitespace":
        return draw(st.sampled_from([b" ", b"\n", b"\t"])) + head
    return draw(st.binary(max_size=300))


def same_statement(head: bytes, original: bytes) -> bool:
    try:
        return AuditHead.model_validate_json(head) == AuditHead.model_validate_json(original)
    except ValueError:
        return False


@SETTINGS
@given(data=st.data())
def test_a_changed_head_verifies_only_if_it_says_the_same(
    original: Original, data: st.DataObject
) -> None:
    head = data.draw(mutated_heads(original.head))
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), original.log, head)
        decision = verify(path, original.keys)
        assert (decision == "intact") == same_statement(head, original.head)


def test_a_missing_head_is_unanchored_never_intact(original: Original, tmp_path: Path) -> None:
    path = write(tmp_path, original.log, None)
    assert verify(path, original.keys, stats=False) == "unanchored"


def _signer(home: Path) -> Signer:
    return KeyStore.open(home).load_signer()
