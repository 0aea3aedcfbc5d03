"""Fuzzing the audit verifier with arbitrarily mutated logs and heads.

Properties:

* ``verify_log`` never says ``intact`` for a log whose bytes differ from the original;
* for a changed head file it says ``intact`` only if the head still means the same signed
  statement (JSON whitespace around a signed head is not part of what is signed);
* it returns a typed result or raises one of ``audit``'s own errors, nothing else;
* an appender opened on a mutated log never hides the change: either it refuses, or the
  log it leaves behind still fails verification (unless the change only added bytes after
  the last signed record, which crash recovery moves aside and records);
* verify before extending: after random tampering of log *and* head (byte flips, dropped,
  inserted, duplicated lines, re-chaining without the key, forged records appended, an
  older valid head put back, a garbage head or signature, no head), appending never turns
  ``verify`` from not-intact into ``intact``, except by setting aside the one crash-shaped
  tail (a torn final line, or one record chaining from the head's) after a prefix that was
  itself intact. Only ``audit recover`` may go further.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from audit import AuditError, LogFormatError, NoteError
from audit.log import AuditLog
from audit.tlog import Checkpoint, leaf_hash, open_checkpoint, root_of, sign_checkpoint
from audit.verify import read_records, verify_log
from audit.wire import HEAD_DOMAIN, canonical_json, sha256_prefixed
from guard import Guard
from guard.evidence import KeyStore, Signer

SETTINGS = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "150")),
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
            envelope = rec.envelope.model_dump(mode="json")
            guard.consume(envelope, "bash", command, project, tool_call_id=f"c{n}")
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


def same_statement(head: bytes, original: bytes, keys: dict[str, Ed25519PublicKey]) -> bool:
    """Both are checkpoints the keys vouch for, naming the same tree of the same log."""
    try:
        return open_checkpoint(head, keys).checkpoint == open_checkpoint(original, keys).checkpoint
    except NoteError:
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
        assert (decision == "intact") == same_statement(head, original.head, original.keys)


def test_a_missing_head_is_unanchored_never_intact(original: Original, tmp_path: Path) -> None:
    path = write(tmp_path, original.log, None)
    assert verify(path, original.keys, stats=False) == "unanchored"


def _signer(home: Path) -> Signer:
    return KeyStore.open(home).load_signer()


# -- verify before extending -----------------------------------------------------------

_KEYS = frozenset({"seq", "ts", "event", "data", "prev", "hash"})
_PLANNER = {"planner": "x", "decision": "y", "reasons": []}


@dataclass(frozen=True)
class History:
    log: bytes
    heads: list[bytes]  # the head after each record; heads[-1] is the current one
    keys: dict[str, Ed25519PublicKey]
    home: Path


@pytest.fixture(scope="module")
def history(original: Original, tmp_path_factory: pytest.TempPathFactory) -> History:
    path = tmp_path_factory.mktemp("verify-history") / "audit.jsonl"
    signer = _signer(original.home)
    heads = []
    with AuditLog.open(path, signer, original.keys) as log:
        heads.append(log.head_path.read_bytes())
        for n in range(8):
            log.append("planner.reported", {**_PLANNER, "reasons": [f"r{n}"]})
            heads.append(log.head_path.read_bytes())
    return History(path.read_bytes(), heads, original.keys, original.home)


def _rechain(data: bytes) -> bytes:
    """Renumber and re-chain every line that is a record, as a forger without the key can."""
    out: list[bytes] = []
    prev: str | None = None
    seq = 0
    for line in data.splitlines(keepends=True):
        try:
            rec = json.loads(line)
            if type(rec) is not dict or rec.keys() != _KEYS:
                raise ValueError
            prev = rec["prev"] if prev is None else prev
            body = {k: v for k, v in rec.items() if k != "hash"} | {"seq": seq, "prev": prev}
            digest = sha256_prefixed(canonical_json(body))
            out.append(canonical_json({**body, "hash": digest}) + b"\n")
        except (ValueError, AuditError, RecursionError):
            out.append(line)
            continue
        prev = digest
        seq += 1
    return b"".join(out)


def _forge_records(data: bytes, count: int, event_name: str) -> bytes:
    """``count`` well-chained records appended after the last line, without the key."""
    try:
        last = json.loads(data.splitlines()[-1])
        seq, prev = last["seq"] + 1, last["hash"]
    except (ValueError, IndexError, KeyError, TypeError):
        return data
    out = data
    for n in range(count):
        body = {
            "seq": seq + n,
            "ts": "2026-11-22T01:00:00.000Z",
            "event": event_name,
            "data": {**_PLANNER, "reasons": [f"forged{n}"]},
            "prev": prev,
        }
        prev = sha256_prefixed(canonical_json(body))
        out += canonical_json({**body, "hash": prev}) + b"\n"
    return out


def _head_for_last_line(data: bytes, template: bytes, signature: bytes) -> bytes:
    """A checkpoint of ``data`` as it is, with the real key's name and id and ``signature``."""
    origin = template.split(b"\n", 1)[0].decode()
    lines = data.split(b"\n")[:-1]
    checkpoint = Checkpoint(origin, len(lines), root_of([leaf_hash(line) for line in lines]))
    key_id = _template_signature(template)[:4]
    blob = base64.b64encode(key_id + signature)
    return checkpoint.text() + b"\n\xe2\x80\x94 " + origin.encode() + b" " + blob + b"\n"


def _template_signature(template: bytes) -> bytes:
    """Key id and signature bytes of the first signature line of a checkpoint."""
    line = template.partition(b"\n\n")[2].split(b"\n")[0]
    return base64.b64decode(line.split(b" ")[2])


@st.composite
def tampered(draw: st.DrawFn, history: History) -> tuple[bytes, bytes | None, str]:
    data = history.log
    if draw(st.booleans()):
        data = draw(mutated_logs(data))
    if draw(st.booleans()):
        data = _rechain(data)
        event("rechained")
    if draw(st.booleans()):
        data = _forge_records(
            data,
            draw(st.integers(1, 3)),
            draw(st.sampled_from(["planner.reported", "confirmation.recorded"])),
        )
        event("forged records appended")
    if draw(st.booleans()):
        data += draw(st.sampled_from([b'{"data":', b"\x00\x00", b"{}"]))
    op = draw(st.sampled_from(["keep", "older", "garbage", "bad-signature", "resigned", "none"]))
    event(f"head: {op}")
    head: bytes | None
    if op == "keep":
        head = history.heads[-1]
    elif op == "older":
        head = draw(st.sampled_from(history.heads[:-1]))
    elif op == "garbage":
        head = draw(st.binary(max_size=200))
    elif op == "bad-signature":
        head = _head_for_last_line(
            data, history.heads[-1], draw(st.binary(min_size=64, max_size=64))
        )
    elif op == "resigned":
        # the real head's signature over another statement
        sig = _template_signature(history.heads[-1])[4:]
        head = _head_for_last_line(data, history.heads[-1], sig)
    else:
        head = None
    return data, head, op


def _crash_tail_only(
    tmp: Path, mutated: bytes, head: bytes | None, keys: dict[str, Ed25519PublicKey]
) -> bool:
    """Whether the appender only set aside one crash-shaped tail after an intact prefix."""
    torn = sorted(tmp.glob("audit.jsonl.torn-*"))
    if len(torn) != 1:
        return False
    moved = torn[0].read_bytes()
    if not mutated.endswith(moved):
        return False
    if moved.count(b"\n") > 1 or (moved.count(b"\n") == 1 and not moved.endswith(b"\n")):
        return False
    kept = mutated[: len(mutated) - len(moved)]
    if head is None:
        return kept == b""
    check = tmp / "check"
    check.mkdir()
    return verify(write(check, kept, head), keys, stats=False) == "intact"


@SETTINGS
@given(data=st.data())
def test_appending_after_tampering_never_turns_verify_intact(
    history: History, data: st.DataObject
) -> None:
    mutated, head, _ = data.draw(tampered(history))
    with tempfile.TemporaryDirectory() as tmp:
        path = write(Path(tmp), mutated, head)
        head_path = path.with_name("audit.jsonl.head")
        before = verify(path, history.keys, stats=False)
        try:
            with AuditLog.open(path, _signer(history.home), history.keys) as log:
                log.append("planner.reported", _PLANNER)
                log.append(
                    "tool.executed",
                    {
                        "toolCallId": "c",
                        "toolName": "bash",
                        "isError": False,
                        "actionKind": "local-safe",
                        "payloadHash": "sha256:" + "0" * 64,
                    },
                )
        except AuditError:
            event("appender refused")
            assert path.read_bytes() == mutated, "a refusing appender leaves the log alone"
            assert (head_path.read_bytes() if head_path.exists() else None) == head
            assert not list(Path(tmp).glob("audit.jsonl.torn-*"))
            assert verify(path, history.keys, stats=False) == before
            return
        after = verify(path, history.keys, stats=False)
        event(f"appended: {before} -> {after}")
        if mutated == b"" and head is None:
            # No log and no head is a fresh start: the documented rollback limit (log and
            # head rolled back together, here to nothing) needs an external head copy.
            return
        if before != "intact" and after == "intact":
            assert _crash_tail_only(Path(tmp), mutated, head, history.keys), (
                "the appender signed a head over a log that did not verify"
            )


def test_an_older_valid_head_then_append_stays_tampered(history: History, tmp_path: Path) -> None:
    path = write(tmp_path, history.log, history.heads[3])
    assert verify(path, history.keys, stats=False) == "tampered"
    with pytest.raises(AuditError):
        AuditLog.open(path, _signer(history.home), history.keys)
    assert verify(path, history.keys, stats=False) == "tampered"
    assert not list(tmp_path.glob("audit.jsonl.torn-*"))


def _signed(head: bytes, signer: Signer, **changes: object) -> bytes:
    obj = json.loads(head) | changes
    unsigned = {k: v for k, v in obj.items() if k != "signature"}
    sig = signer.sign(HEAD_DOMAIN + canonical_json(unsigned))
    obj["signature"] = base64.urlsafe_b64encode(sig).rstrip(b"=").decode()
    return canonical_json(obj) + b"\n"


def test_the_key_holder_can_still_sign_a_rechained_log(history: History, tmp_path: Path) -> None:
    # The documented limit: whoever holds the signing key can sign any head. A re-chained
    # log with a properly signed head verifies; the property above is about everyone else.
    lines = history.log.splitlines(keepends=True)
    forged = _rechain(b"".join(lines[:3] + lines[4:]))
    signer = _signer(history.home)
    origin = history.heads[-1].split(b"\n", 1)[0].decode()
    tree = [leaf_hash(line) for line in forged.splitlines()]
    head = sign_checkpoint(
        Checkpoint(origin, len(tree), root_of(tree)), signer.public_key, signer.sign
    )
    assert verify(write(tmp_path, forged, head), history.keys, stats=False) == "intact"
