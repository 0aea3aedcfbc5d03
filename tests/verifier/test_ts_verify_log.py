"""``verify-log`` of the TypeScript verifier against ``pi-guard audit verify``, log by log.

A real guard home (``pi-guard`` processes) keeps a log; each case below damages a copy of it
(or its head) one way, and both verifiers must reach the same decision, the same first fault
on the same line, the same reasons, and the same counts, chain position and Merkle root.
"""

from __future__ import annotations

import base64
import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    PublicFormat,
    load_pem_private_key,
)

from audit.tlog import Checkpoint, leaf_hash, origin_for, root_of, sign_checkpoint
from audit.verify import verify_log
from audit.wire import canonical_json, sha256_prefixed
from guard._evidence.keys import PublicKeyring
from tests.cli_runner import Result, invoke
from tools.pi.harness import ensure_pi

# Node >= 22 comes from npm (.cache/node) when the machine's is older: not in make check.
pytestmark = pytest.mark.npm

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "verifier" / "src" / "cli.ts"
FIELDS = ("decision", "fault", "line", "reasons", "records", "logId", "lastSeq", "lastHash",
          "headSeq", "treeSize", "root")  # fmt: skip

Lines = list[bytes]


_ENV = {**os.environ, "PI_OPERATOR_GUARD_ANCHOR_DIR": ""}


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*args], capture_output=True, text=True, timeout=60, check=False,
                          env=_ENV)  # fmt: skip


def _guard(home: Path, *args: str) -> Result:
    """``pi-guard --home HOME ARGS``, run in this process (the verifier is the subject here)."""
    return invoke(*args, home=home, env=_ENV)


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("verify-log") / "home"
    work = home.parent / "work"
    work.mkdir()
    assert _guard(home, "keygen").returncode == 0
    for n, answer in enumerate(["--confirmed", "--declined", "--confirmed", "--confirmed"]):
        tool_input = json.dumps({"command": f"rm -rf build{n}"})
        done = _guard(home, "record", "--tool", "bash", "--input", tool_input,
                      "--cwd", str(work), answer)  # fmt: skip
        assert done.returncode == 0, done.stderr
    return home


def _records(lines: Lines) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def _rechain(recs: list[dict[str, Any]], start: int) -> Lines:
    """Rehash records ``start..`` and relink their ``prev``: what a forger without the key can do."""
    for i in range(start, len(recs)):
        if i > 0 and i != start:
            recs[i]["prev"] = recs[i - 1]["hash"]
        body = {k: v for k, v in recs[i].items() if k != "hash"}
        recs[i]["hash"] = sha256_prefixed(canonical_json(body))
    return [canonical_json(r) for r in recs]


def _signer(home: Path) -> Ed25519PrivateKey:
    key = load_pem_private_key((home / "signing.key").read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    return key


def _resign(home: Path, lines: Lines, key: Ed25519PrivateKey, origin: str | None = None) -> bytes:
    log_id = json.loads(lines[0])["data"]["logId"]
    cp = Checkpoint(
        origin or origin_for(log_id), len(lines), root_of([leaf_hash(x) for x in lines])
    )
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return sign_checkpoint(cp, public, key.sign)


def _forged_next(lines: Lines) -> bytes:
    last = json.loads(lines[-1])
    rec = {"seq": last["seq"] + 1, "ts": last["ts"], "event": "tool.executed",
           "data": {"note": "appended without the key"}, "prev": last["hash"]}  # fmt: skip
    rec["hash"] = sha256_prefixed(canonical_json(rec))
    return canonical_json(rec)


# Each case: (log lines, head bytes) -> (log bytes, head bytes or None).
Case = Callable[[Path, Lines, bytes], tuple[bytes, bytes | None]]


def _join(lines: Lines) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _edit(i: int, old: bytes, new: bytes) -> Case:
    def case(home: Path, lines: Lines, head: bytes) -> tuple[bytes, bytes | None]:
        edited = [*lines]
        assert old in edited[i]
        edited[i] = edited[i].replace(old, new, 1)
        return _join(edited), head

    return case


def _rewritten(i: int, event: str | None = None, prev: str | None = None) -> Case:
    def case(home: Path, lines: Lines, head: bytes) -> tuple[bytes, bytes | None]:
        recs = _records(lines)
        if event is not None:
            recs[i]["event"] = event
        if prev is not None:
            recs[i]["prev"] = prev
        recs[i]["data"] = {**recs[i]["data"], "rewritten": True}
        return _join(_rechain(recs, i)), head

    return case


CASES: dict[str, Case] = {
    "intact": lambda home, lines, head: (_join(lines), head),
    "value-edited": _edit(3, b'"bash"', b'"bosh"'),
    "not-canonical": _edit(1, b'{"', b'{ "'),
    "line-deleted": lambda home, lines, head: (_join([*lines[:2], *lines[3:]]), head),
    "lines-swapped": lambda home, lines, head: (
        _join([lines[0], lines[2], lines[1], *lines[3:]]),
        head,
    ),
    "last-line-duplicated": lambda home, lines, head: (_join([*lines, lines[-1]]), head),
    "torn-tail": lambda home, lines, head: (_join(lines)[:-1], head),
    "last-line-cut": lambda home, lines, head: (_join(lines[:-1]), head),
    "everything-cut": lambda home, lines, head: (b"", head),
    "appended-without-key": lambda home, lines, head: (_join([*lines, _forged_next(lines)]), head),
    "rewritten-and-rechained": _rewritten(2),
    "genesis-rewritten": _rewritten(0, event="log.opened"),
    "prev-forged": _rewritten(3, prev="sha256:" + "0" * 64),
    "head-missing": lambda home, lines, head: (_join(lines), None),
    "head-size-edited": lambda home, lines, head: (
        _join(lines),
        head.replace(b"\n%d\n" % len(lines), b"\n%d\n" % (len(lines) - 1), 1),
    ),
    "head-by-another-key": lambda home, lines, head: (
        _join(lines),
        _resign(home, lines, Ed25519PrivateKey.from_private_bytes(bytes(32))),
    ),
    "head-of-another-log": lambda home, lines, head: (
        _join(lines),
        _resign(home, lines, _signer(home), origin_for("log_" + "A" * 24)),
    ),
    # Log and head rolled back together: undetectable without an anchor (the guide says so).
    "rolled-back-with-its-head": lambda home, lines, head: (
        _join(lines[:-1]),
        _resign(home, lines[:-1], _signer(home)),
    ),
    "head-not-a-note": lambda home, lines, head: (_join(lines), b"not a checkpoint\n"),
}


EXPECTED = {
    "value-edited": "hash-mismatch",
    "not-canonical": "malformed-line",
    "line-deleted": "seq-mismatch",
    "lines-swapped": "seq-mismatch",
    "last-line-duplicated": "seq-mismatch",
    "torn-tail": "torn-line",
    "last-line-cut": "records-missing-at-end",
    "everything-cut": "records-missing-at-end",
    "appended-without-key": "records-after-head",
    "rewritten-and-rechained": "root-mismatch",
    "genesis-rewritten": "genesis-invalid",
    "prev-forged": "prev-mismatch",
    "head-missing": "head-missing",
    "head-size-edited": "head-signature-invalid",
    "head-by-another-key": "head-unknown-key",
    "head-of-another-log": "head-origin-mismatch",
    "head-not-a-note": "head-malformed",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_both_verifiers_agree(original: Path, tmp_path: Path, name: str) -> None:
    lines = (original / "audit.jsonl").read_bytes().splitlines()
    head = (original / "audit.jsonl.head").read_bytes()
    log_bytes, head_bytes = CASES[name](original, lines, head)
    log = tmp_path / "audit.jsonl"
    log.write_bytes(log_bytes)
    if head_bytes is not None:
        (tmp_path / "audit.jsonl.head").write_bytes(head_bytes)
    keyring = tmp_path / "keyring.json"
    shutil.copy(original / "keyring.json", keyring)
    python = _guard(tmp_path / "nohome", "audit", "verify", str(log), "--keyring", str(keyring),
                    "--json")  # fmt: skip
    node = ensure_pi(REPO, "current").node
    typescript = _run(str(node), str(CLI), "verify-log", str(log), "--keyring", str(keyring))
    py, ts = json.loads(python.stdout), json.loads(typescript.stdout)
    assert {k: py[k] for k in FIELDS} == {k: ts[k] for k in FIELDS}
    intact = name in {"intact", "rolled-back-with-its-head"}
    assert python.returncode == typescript.returncode == (0 if intact else 4)
    assert (py["decision"] == "intact") is intact
    assert py["fault"] == EXPECTED.get(name), py["fault"]


def _mutants(lines: Lines, head: bytes, count: int) -> list[tuple[bytes, bytes | None]]:
    rng = random.Random(14)
    log = _join(lines)
    alphabet = [
        b"\n",
        b" ",
        b'"',
        b"{",
        b"}",
        b",",
        b":",
        b"0",
        b"1",
        b"a",
        b"\\",
        b"\xff",
        b"\xc3\xa9",
    ]
    out: list[tuple[bytes, bytes | None]] = []
    for _ in range(count):
        data, note = log, head
        target = rng.random()
        for _ in range(rng.randrange(1, 3)):
            blob = note if target < 0.2 else data
            i = rng.randrange(len(blob))
            op = rng.randrange(3)
            if op == 0:
                blob = blob[:i] + blob[i + 1 :]
            elif op == 1:
                blob = blob[:i] + rng.choice(alphabet) + blob[i:]
            else:
                blob = blob[:i] + rng.choice(alphabet) + blob[i + 1 :]
            if target < 0.2:
                note = blob
            else:
                data = blob
        out.append((data, note))
    return out


def test_both_verifiers_agree_on_random_damage(original: Path, tmp_path: Path) -> None:
    lines = (original / "audit.jsonl").read_bytes().splitlines()
    head = (original / "audit.jsonl.head").read_bytes()
    keyring = json.loads((original / "keyring.json").read_text())
    keys = PublicKeyring.load(original / "keyring.json").public_keys()
    mutants = _mutants(lines, head, 300)
    cases = [
        {
            "type": "log",
            "logBase64": base64.b64encode(data).decode(),
            "headBase64": None if note is None else base64.b64encode(note).decode(),
            "keyring": keyring,
        }
        for data, note in mutants
    ]
    node = ensure_pi(REPO, "current").node
    done = subprocess.run(
        [str(node), "verifier/test/answer.ts"],
        cwd=REPO,
        input=json.dumps({"keyring": keyring, "cases": cases}),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    answers = json.loads(done.stdout)
    faults: set[str | None] = set()
    for n, ((data, note), ts) in enumerate(zip(mutants, answers, strict=True)):
        log = tmp_path / f"{n}.jsonl"
        log.write_bytes(data)
        if note is not None:
            log.with_name(log.name + ".head").write_bytes(note)
        py = verify_log(log, keys).model_dump(mode="json", by_alias=True)
        assert {k: py[k] for k in FIELDS} == {k: ts[k] for k in FIELDS}, (n, data[:300], note)
        faults.add(py["fault"])
    assert len(faults) >= 5, faults


def _forked(lines: Lines) -> Lines:
    """Record 2 rewritten and everything after it rechained (by whoever holds the key)."""
    recs = _records(lines)
    recs[2]["data"] = {**recs[2]["data"], "rewritten": True}
    return _rechain(recs, 2)


# Against an earlier signed checkpoint (an anchor): (log lines, head) -> (log, head, against).
Anchored = Callable[[Path, Lines, bytes], tuple[bytes, bytes | None, bytes]]

ANCHORED: dict[str, tuple[Anchored, str | None]] = {
    "extends-an-earlier-checkpoint": (
        lambda home, lines, head: (_join(lines), head, _resign(home, lines[:3], _signer(home))),
        None,
    ),
    "rolled-back-with-its-head": (
        lambda home, lines, head: (
            _join(lines[:3]),
            _resign(home, lines[:3], _signer(home)),
            head,
        ),
        "rolled-back",
    ),
    "rolled-back-head-deleted": (
        lambda home, lines, head: (_join(lines[:3]), None, head),
        "rolled-back",
    ),
    "rewritten-and-re-signed": (
        lambda home, lines, head: (
            _join(_forked(lines)),
            _resign(home, _forked(lines), _signer(home)),
            head,
        ),
        "checkpoint-fork",
    ),
    "anchor-of-another-log": (
        lambda home, lines, head: (
            _join(lines),
            head,
            _resign(home, lines, _signer(home), origin_for("log_" + "B" * 24)),
        ),
        "checkpoint-untrusted",
    ),
    "anchor-by-another-key": (
        lambda home, lines, head: (
            _join(lines),
            head,
            _resign(home, lines, Ed25519PrivateKey.from_private_bytes(bytes(32))),
        ),
        "checkpoint-untrusted",
    ),
}


@pytest.mark.parametrize("name", sorted(ANCHORED))
def test_both_verifiers_agree_against_an_anchor(original: Path, tmp_path: Path, name: str) -> None:
    lines = (original / "audit.jsonl").read_bytes().splitlines()
    head = (original / "audit.jsonl.head").read_bytes()
    case, fault = ANCHORED[name]
    log_bytes, head_bytes, against = case(original, lines, head)
    log = tmp_path / "audit.jsonl"
    log.write_bytes(log_bytes)
    if head_bytes is not None:
        (tmp_path / "audit.jsonl.head").write_bytes(head_bytes)
    anchor = tmp_path / "earlier.checkpoint"
    anchor.write_bytes(against)
    keyring = tmp_path / "keyring.json"
    shutil.copy(original / "keyring.json", keyring)
    python = _run(
        sys.executable,
        "-m",
        "guard",
        "--home",
        str(tmp_path / "nohome"),
        "audit",
        "verify",
        str(log),
        "--keyring",
        str(keyring),
        "--against",
        str(anchor),
        "--json",
    )
    node = ensure_pi(REPO, "current").node
    typescript = _run(
        str(node),
        str(CLI),
        "verify-log",
        str(log),
        "--keyring",
        str(keyring),
        "--against",
        str(anchor),
    )
    py, ts = json.loads(python.stdout), json.loads(typescript.stdout)
    fields = (*FIELDS, "againstSize")
    assert {k: py[k] for k in fields} == {k: ts[k] for k in fields}
    assert py["fault"] == fault
    assert python.returncode == typescript.returncode == (0 if fault is None else 4)
