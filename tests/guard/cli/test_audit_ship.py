"""``audit ship --to`` and ``audit verify --from`` against a real PostgreSQL server.

``pi-guard`` runs in process (:func:`tests.cli_runner.invoke`), except where processes are
the subject: ship is killed with SIGKILL at random points and run again (the store must
equal the log, with no gap and no duplicate), and two ships run at once.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from audit._records.chain import head_path_for
from guard import Guard
from tests.cli_runner import Result, invoke

pytestmark = pytest.mark.integration

CALL = {"command": "rm -rf 'bü ild/日本語 ✓'"}


def run(home: Path, *args: str) -> Result:
    env = {k: v for k, v in os.environ.items() if k != "PI_OPERATOR_GUARD_DEBUG"}
    return invoke(*args, home=home, env=env)


def one_line_error(proc: Result) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def grow(home: Path, project: Path, records: int) -> Path:
    """Append confirmations (their previews carry non-ASCII text) until ``records`` more."""
    with Guard.open(home) as g:
        log = g.audit.path
        start = _lines(log)
        while _lines(log) < start + records:
            g.record("bash", CALL, project, confirmed=True)
    return log


def _lines(log: Path) -> list[bytes] | Any:
    return len(log.read_bytes().splitlines()) if log.exists() else 0


def stored(url: str) -> dict[str, list[tuple[int, bytes]]]:
    with psycopg.connect(url) as db:
        if db.execute("SELECT to_regclass('pi_guard.audit_records')").fetchone() == (None,):
            return {}  # no ship has created the schema yet
        rows = db.execute(
            "SELECT source, seq, line FROM pi_guard.audit_records ORDER BY source, seq"
        ).fetchall()
    out: dict[str, list[tuple[int, bytes]]] = {}
    for source, seq, line in rows:
        out.setdefault(source, []).append((int(seq), bytes(line)))
    return out


def log_id(log: Path) -> str:
    first = json.loads(log.read_bytes().split(b"\n", 1)[0])
    return str(first["data"]["logId"])


def assert_store_equals_log(url: str, log: Path) -> None:
    lines = log.read_bytes().splitlines()
    rows = stored(url)[log_id(log)]
    assert [seq for seq, _ in rows] == list(range(len(lines)))
    assert [line for _, line in rows] == lines


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def test_ship_then_verify_from_the_store(home: Path, tmp_path: Path, pg_url: str) -> None:
    log = grow(home, tmp_path, 12)
    assert any(max(line) > 0x7F for line in log.read_bytes().splitlines())  # non-ASCII
    shipped = run(home, "audit", "ship", "--to", pg_url, "--json")
    assert shipped.returncode == 0, shipped.stderr
    result = json.loads(shipped.stdout)
    lines = len(log.read_bytes().splitlines())
    assert (result["source"], result["records"], result["shipped"]) == (log_id(log), lines, lines)
    assert "@" in result["store"] and _password(pg_url) not in shipped.stdout
    assert_store_equals_log(pg_url, log)
    # The head went in as opaque bytes.
    with psycopg.connect(pg_url) as db:
        (head,) = db.execute("SELECT head FROM pi_guard.audit_heads").fetchone() or (None,)
    assert bytes(head) == head_path_for(log).read_bytes()
    # Idempotent: nothing new the second time.
    again = json.loads(run(home, "audit", "ship", "--to", pg_url, "--json").stdout)
    assert (again["records"], again["shipped"]) == (lines, 0)
    # Verify from the store prints exactly what verify on the file prints.
    from_file = run(home, "audit", "verify", "--json")
    from_store = run(home, "audit", "verify", "--from", pg_url, "--source", log_id(log), "--json")
    assert from_store.returncode == from_file.returncode == 0, from_store.stderr
    assert json.loads(from_store.stdout) == json.loads(from_file.stdout)
    text = run(home, "audit", "verify", "--from", pg_url, "--source", log_id(log))
    assert text.stdout.startswith("intact: ")


def test_ship_resumes_after_new_records(home: Path, tmp_path: Path, pg_url: str) -> None:
    log = grow(home, tmp_path, 5)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    before = len(log.read_bytes().splitlines())
    grow(home, tmp_path, 7)
    proc = run(home, "audit", "ship", "--to", pg_url, "--json")
    result = json.loads(proc.stdout)
    assert result["shipped"] == len(log.read_bytes().splitlines()) - before
    assert_store_equals_log(pg_url, log)
    verify = run(home, "audit", "verify", "--from", pg_url, "--source", log_id(log))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    # Two heads are stored now; verify uses the newest (it covers every record).
    with psycopg.connect(pg_url) as db:
        assert db.execute("SELECT count(*) FROM pi_guard.audit_heads").fetchone() == (2,)


@pytest.mark.slow
def test_ship_killed_at_random_points_leaves_a_prefix_and_then_the_whole_log(
    home: Path, tmp_path: Path, pg_url: str
) -> None:
    log = grow(home, tmp_path, 400)
    source = log_id(log)
    total = len(log.read_bytes().splitlines())
    rng = random.Random(15)
    cmd = [sys.executable, "-m", "guard", "--home", str(home), "audit", "ship"]
    cmd += ["--to", pg_url, "--batch", "3"]
    midway = 0
    for _ in range(6):
        before = len(stored(pg_url).get(source, []))
        # Kill this run at a random point of its shipping: once the store holds a random
        # number of its rows, at most half of what is left (a timed sleep let a fast
        # machine finish first, and then nothing was killed midway).
        target = before + rng.randint(1, max(1, (total - before) // 2))
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if len(stored(pg_url).get(source, [])) >= target:
                break
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        rows = stored(pg_url).get(source, [])
        seqs = [seq for seq, _ in rows]
        assert seqs == list(range(len(seqs))), "a killed ship left a gap"
        assert [line for _, line in rows] == log.read_bytes().splitlines()[: len(rows)]
        midway += proc.returncode == -signal.SIGKILL and 0 < len(rows) < total
    assert midway > 0, "no ship was killed while shipping"
    final = run(home, "audit", "ship", "--to", pg_url)
    assert final.returncode == 0, final.stderr
    assert_store_equals_log(pg_url, log)
    verify = run(home, "audit", "verify", "--from", pg_url, "--source", source)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_two_ships_at_once_neither_duplicate_nor_skip(
    home: Path, tmp_path: Path, pg_url: str
) -> None:
    log = grow(home, tmp_path, 150)
    cmd = [sys.executable, "-m", "guard", "--home", str(home), "audit", "ship"]
    cmd += ["--to", pg_url, "--batch", "4", "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in "ab"]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    shipped = [json.loads(out)["shipped"] for out, _ in outs]
    assert sum(shipped) == len(log.read_bytes().splitlines())
    assert_store_equals_log(pg_url, log)


def _owner_edit(url: str, sql: str, *params: Any) -> None:
    with psycopg.connect(url, autocommit=True) as db, db.transaction():
        db.execute("ALTER TABLE pi_guard.audit_records DISABLE TRIGGER USER")
        db.execute(sql, params)  # type: ignore[arg-type]
        db.execute("ALTER TABLE pi_guard.audit_records ENABLE TRIGGER USER")


def test_the_store_is_append_only(home: Path, tmp_path: Path, pg_url: str) -> None:
    grow(home, tmp_path, 3)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    with psycopg.connect(pg_url, autocommit=True) as db:
        for attack in (
            "UPDATE pi_guard.audit_records SET line = 'x'",
            "DELETE FROM pi_guard.audit_records",
            "TRUNCATE pi_guard.audit_records",
            "UPDATE pi_guard.audit_heads SET head = 'x'",
            "DELETE FROM pi_guard.audit_heads",
        ):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                db.execute(attack)


@pytest.mark.parametrize("edit", ["byte", "delete", "reorder"])
def test_a_tampered_store_fails_verify_with_exit_4(
    home: Path, tmp_path: Path, pg_url: str, edit: str
) -> None:
    log = grow(home, tmp_path, 6)
    source = log_id(log)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    if edit == "byte":
        _owner_edit(
            pg_url,
            "UPDATE pi_guard.audit_records SET line = overlay(line placing 'X' from 12 for 1) "
            "WHERE source = %s AND seq = 3",
            source,
        )
    elif edit == "delete":
        _owner_edit(
            pg_url, "DELETE FROM pi_guard.audit_records WHERE source = %s AND seq = 2", source
        )
    else:
        _owner_edit(
            pg_url,
            "UPDATE pi_guard.audit_records r SET line = o.line FROM pi_guard.audit_records o "
            "WHERE r.source = %s AND o.source = r.source AND r.seq IN (2, 3) "
            "AND o.seq = 5 - r.seq",
            source,
        )
    proc = run(home, "audit", "verify", "--from", pg_url, "--source", source)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert proc.stdout.startswith("tampered: ")


def test_a_log_rewritten_after_shipping_is_refused_with_exit_4(
    home: Path, tmp_path: Path, pg_url: str
) -> None:
    log = grow(home, tmp_path, 4)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    last = len(log.read_bytes().splitlines()) - 1
    _owner_edit(
        pg_url,
        "UPDATE pi_guard.audit_records SET line = line || ' '::bytea WHERE seq = %s",
        last,
    )
    grow(home, tmp_path, 2)
    proc = run(home, "audit", "ship", "--to", pg_url)
    assert proc.returncode == 4
    assert f"record seq {last}: differs from the log" in one_line_error(proc)


def test_a_cut_log_is_refused_with_exit_4(home: Path, tmp_path: Path, pg_url: str) -> None:
    log = grow(home, tmp_path, 6)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-2]))
    head_path_for(log).unlink()
    proc = run(home, "audit", "ship", "--to", pg_url)
    assert proc.returncode == 4
    assert "the log was cut or replaced" in one_line_error(proc)


def test_records_relabelled_as_another_source_fail_verify(
    home: Path, tmp_path: Path, pg_url: str
) -> None:
    log = grow(home, tmp_path, 3)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute(
            "INSERT INTO pi_guard.audit_records (source, seq, line) "
            "SELECT 'someone-else', seq, line FROM pi_guard.audit_records"
        )
        db.execute(
            "INSERT INTO pi_guard.audit_heads (source, sha256, records, head) "
            "SELECT 'someone-else', sha256, records, head FROM pi_guard.audit_heads"
        )
    proc = run(home, "audit", "verify", "--from", pg_url, "--source", "someone-else")
    assert proc.returncode == 4
    assert "not this source" in one_line_error(proc)
    assert log.exists()


def test_unknown_source_is_exit_2(home: Path, tmp_path: Path, pg_url: str) -> None:
    grow(home, tmp_path, 1)
    proc = run(home, "audit", "verify", "--from", pg_url, "--source", "nope")
    assert proc.returncode == 2
    assert "no records or heads" in one_line_error(proc)


def test_unreachable_store_is_exit_6_without_the_password(home: Path, tmp_path: Path) -> None:
    grow(home, tmp_path, 1)
    url = "postgresql://guard:p4ss-w0rd@127.0.0.1:1/guard?connect_timeout=2"
    for args in (("ship", "--to", url), ("verify", "--from", url, "--source", "x")):
        proc = run(home, "audit", *args)
        assert proc.returncode == 6, proc.stderr
        line = one_line_error(proc)
        assert "p4ss-w0rd" not in line and "audit store" in line


def test_bad_arguments_are_exit_2(home: Path, tmp_path: Path, pg_url: str) -> None:
    grow(home, tmp_path, 1)
    for args in (
        ("ship", "--to", "mysql://x@y/z"),
        ("verify", "--from", pg_url),
        ("verify", "--source", "abc"),
    ):
        proc = run(home, "audit", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        one_line_error(proc)


def _password(url: str) -> str:
    return url.split("://", 1)[1].split("@", 1)[0].split(":", 1)[1]


def test_writer_ships_and_auditor_verifies_with_the_guides_grants(
    home: Path, tmp_path: Path, pg_role: Any
) -> None:
    log = grow(home, tmp_path, 5)
    writer, auditor = pg_role("writer"), pg_role("auditor")
    assert run(home, "audit", "ship", "--to", writer).returncode == 0
    proc = run(home, "audit", "verify", "--from", auditor, "--source", log_id(log))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The auditor reads only; the writer cannot rewrite what it shipped.
    refused = run(home, "audit", "ship", "--to", auditor)
    assert refused.returncode == 6
    assert "permission denied" in one_line_error(refused)
    with psycopg.connect(writer, autocommit=True) as db:
        for attack in (
            "UPDATE pi_guard.audit_records SET line = 'x'",
            "DELETE FROM pi_guard.audit_records",
            "DELETE FROM pi_guard.audit_heads",
            "ALTER TABLE pi_guard.audit_records DISABLE TRIGGER USER",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                db.execute(attack.encode())


def test_verify_from_honours_against_a_later_checkpoint(
    home: Path, tmp_path: Path, pg_url: str
) -> None:
    """Rolling the store back (its newest head and records gone) still verifies on its own,
    as a rolled-back file does; against a checkpoint the auditor kept it is exit 4."""
    log = grow(home, tmp_path, 4)
    source = log_id(log)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    kept = len(stored(pg_url)[source])
    grow(home, tmp_path, 4)
    assert run(home, "audit", "ship", "--to", pg_url).returncode == 0
    later = run(home, "audit", "checkpoint")
    assert later.returncode == 0, later.stderr
    (tmp_path / "later.ckpt").write_text(later.stdout)
    ok = run(home, "audit", "verify", "--from", pg_url, "--source", source,
             "--against", str(tmp_path / "later.ckpt"))  # fmt: skip
    assert ok.returncode == 0, ok.stdout + ok.stderr
    with psycopg.connect(pg_url, autocommit=True) as db, db.transaction():
        db.execute("ALTER TABLE pi_guard.audit_records DISABLE TRIGGER USER")
        db.execute("ALTER TABLE pi_guard.audit_heads DISABLE TRIGGER USER")
        db.execute("DELETE FROM pi_guard.audit_records WHERE seq >= %s", (kept,))
        db.execute("DELETE FROM pi_guard.audit_heads WHERE records > %s", (kept,))
        db.execute("ALTER TABLE pi_guard.audit_records ENABLE TRIGGER USER")
        db.execute("ALTER TABLE pi_guard.audit_heads ENABLE TRIGGER USER")
    alone = run(home, "audit", "verify", "--from", pg_url, "--source", source)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    rolled = run(home, "audit", "verify", "--from", pg_url, "--source", source,
                 "--against", str(tmp_path / "later.ckpt"))  # fmt: skip
    assert rolled.returncode == 4, rolled.stdout + rolled.stderr


def test_rows_a_writer_appends_are_never_vouched_for(
    home: Path, tmp_path: Path, pg_role: Any
) -> None:
    """Another host's writer login appends a record, then a head, under this source."""
    log = grow(home, tmp_path, 3)
    source = log_id(log)
    writer = pg_role("writer")
    assert run(home, "audit", "ship", "--to", writer).returncode == 0
    n = len(log.read_bytes().splitlines())
    forged = log.read_bytes().splitlines()[-1].replace(b'"seq":', b'"seq": ', 1)
    with psycopg.connect(writer, autocommit=True) as db:
        db.execute(
            "INSERT INTO pi_guard.audit_records (source, seq, line) VALUES (%s, %s, %s)",
            (source, n, forged),
        )
    proc = run(home, "audit", "verify", "--from", writer, "--source", source)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 stored records after the newest shipped head" in proc.stderr
    with psycopg.connect(writer, autocommit=True) as db:
        db.execute(
            "INSERT INTO pi_guard.audit_heads (source, sha256, records, head) "
            "VALUES (%s, %s, %s, %s)",
            (source, "f" * 64, n + 1, b"forged head\n"),
        )
    proc = run(home, "audit", "verify", "--from", writer, "--source", source)
    assert proc.returncode == 4, proc.stdout + proc.stderr
    # The real guard's next ship sees the foreign row and stops.
    grow(home, tmp_path, 1)
    proc = run(home, "audit", "ship", "--to", writer)
    assert proc.returncode == 4
    assert f"record seq {n}: differs from the log" in one_line_error(proc)
