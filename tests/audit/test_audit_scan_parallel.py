"""Checking a log in several processes finds what one pass finds: same fault, same root."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit._checking.scan import Scan, scan_log
from audit.log import AuditLog
from audit.tlog import Frontier, TreeState, leaf_hash
from tests.audit.audit_testkit import FixedSigner, executed

pytestmark = pytest.mark.integration

SIGNER = FixedSigner(b"\x21" * 32)
RECORDS = 300


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("scan") / "audit.jsonl"
    with AuditLog.open(path, SIGNER, SIGNER.keys) as log:
        for i in range(RECORDS - 1):
            log.append("tool.executed", executed(f"call-{i}", f"cmd {i}"))
    return path.read_bytes()


def _scan(path: Path, workers: int, **kwargs: object) -> Scan:
    size = path.stat().st_size
    with path.open("rb") as stream:
        return scan_log(
            stream,
            size,
            workers=workers,
            path=str(path),
            parallel_min_bytes=0,
            **kwargs,  # type: ignore[arg-type]
        )


def _facts(scan: Scan) -> tuple[object, ...]:
    return (
        scan.records,
        scan.fault,
        scan.log_id,
        scan.last_seq,
        scan.last_hash,
        scan.last_line,
        scan.root,
        scan.mark_root,
    )


def _damages(data: bytes) -> dict[str, bytes]:
    lines = data.splitlines(keepends=True)
    return {
        "pristine": data,
        "edit-early": data.replace(b'call-3"', b'call-X"', 1),
        "edit-late": data.replace(b'call-290"', b'call-2X0"', 1),
        "drop-middle": b"".join(lines[:150] + lines[151:]),
        "swap": b"".join([*lines[:100], lines[101], lines[100], *lines[102:]]),
        "torn-end": data[:-7],
        "duplicate": b"".join([*lines[:200], lines[199], *lines[200:]]),
        "garbage-line": b"".join([*lines[:77], b"{}\n", *lines[77:]]),
        "one-line": lines[0],
        "empty": b"",
    }


DAMAGES = [
    "pristine",
    "edit-early",
    "edit-late",
    "drop-middle",
    "swap",
    "torn-end",
    "duplicate",
    "garbage-line",
    "one-line",
    "empty",
]


@pytest.mark.parametrize("damage", DAMAGES)
@pytest.mark.parametrize("workers", [2, 3, 7])
def test_parallel_scan_equals_one_pass(
    pristine: bytes, tmp_path: Path, damage: str, workers: int
) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(_damages(pristine)[damage])
    one = _scan(path, 1, mark=120)
    many = _scan(path, workers, mark=120)
    assert _facts(many) == _facts(one)
    if damage == "pristine":
        assert one.fault is None and one.records == RECORDS
        assert one.root == _root(pristine.splitlines())


def _root(lines: list[bytes]) -> bytes:
    frontier = Frontier()
    for line in lines:
        frontier.append(leaf_hash(line))
    return frontier.root()


@pytest.mark.parametrize("start", [1, 2, 64, 129, 299])
def test_parallel_scan_resumes_from_a_state(pristine: bytes, tmp_path: Path, start: int) -> None:
    path = tmp_path / "audit.jsonl"
    path.write_bytes(pristine)
    lines = pristine.splitlines(keepends=True)
    frontier = Frontier()
    for line in lines[:start]:
        frontier.append(leaf_hash(line[:-1]))
    state = TreeState(sum(len(x) for x in lines[:start]), frontier)
    one = _scan(path, 1, resume=state, mark=start + 1)
    many = _scan(path, 3, resume=state, mark=start + 1)
    assert _facts(many) == _facts(one)
    assert one.root == _root(pristine.splitlines())
    assert one.first_line == start + 1
