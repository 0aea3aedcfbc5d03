"""The CLI end to end: outputs and every exit code.

In process (:func:`tests.cli_runner.invoke`), with a real subprocess where the process is
the subject: ``python -m guard`` itself, binary stdin, the bytes on the real stdout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guard import Guard
from tests.cli_runner import Result, invoke

RM = json.dumps({"command": "rm -rf build"})


def run(
    home: Path, *args: str, stdin: str | bytes | None = None, cwd: Path | None = None
) -> Result:
    env = {k: v for k, v in os.environ.items() if k != "PI_OPERATOR_GUARD_DEBUG"}
    return invoke(*args, home=home, env=env, stdin=stdin, cwd=cwd)


def one_line_error(proc: Result | subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "project"
    p.mkdir()
    return p


def record(home: Path, project: Path, *extra: str) -> dict[str, Any]:
    proc = run(
        home,
        "record",
        "--tool",
        "bash",
        "--input",
        RM,
        "--cwd",
        str(project),
        "--confirmed",
        *extra,
    )
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_keygen_keys_list_rotate(home: Path) -> None:
    first = run(home, "keygen")
    assert first.returncode == 0, first.stderr
    made = json.loads(first.stdout)
    assert made["created"] is True and made["keyId"].startswith("ed25519:")
    again = json.loads(run(home, "keygen").stdout)
    assert again == {**made, "created": False}
    rotated = json.loads(run(home, "keys", "rotate").stdout)
    assert rotated["oldKeyId"] == made["keyId"] and rotated["newKeyId"] != made["keyId"]
    ring = json.loads(run(home, "keys", "list").stdout)
    assert [(k["keyId"], k["status"]) for k in ring["keys"]] == [
        (made["keyId"], "retired"),
        (rotated["newKeyId"], "active"),
    ]


def test_evaluate_record_consume_replay(home: Path, project: Path) -> None:
    ev = run(home, "evaluate", "--tool", "bash", "--input", RM, "--cwd", str(project))
    assert ev.returncode == 0
    evaluation = json.loads(ev.stdout)
    assert evaluation["actionKind"] == "destructive" and evaluation["requiresConfirmation"]
    assert evaluation["dispatchAllowed"] is False
    rec = record(home, project, "--ttl", "60", "--tool-call-id", "call_7")
    details = rec["envelope"]["details"]
    assert details["origin"] == "operator-contract-review"
    assert details["toolCallId"] == "call_7"
    env_file = project / "env.json"
    env_file.write_text(json.dumps(rec["envelope"]))
    args = (
        "consume",
        "--envelope",
        str(env_file),
        "--tool",
        "bash",
        "--input",
        RM,
        "--cwd",
        str(project),
        "--tool-call-id",
        "call_7",
    )
    ok = run(home, *args)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["decision"] == "consumed"
    replay = run(home, *args)
    assert replay.returncode == 3
    assert json.loads(replay.stdout)["match"] == {"decision": "consumed", "reasons": ["replay"]}


def test_consume_from_stdin_and_mismatch_exit_3(home: Path, project: Path) -> None:
    rec = record(home, project)
    proc = run(
        home,
        "consume",
        "--envelope",
        "-",
        "--tool",
        "bash",
        "--input",
        json.dumps({"command": "rm -rf src"}),
        "--cwd",
        str(project),
        stdin=json.dumps(rec["envelope"]),
    )
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["match"]["reasons"] == ["payload-hash-mismatch"]


def test_tampered_envelope_exit_3(home: Path, project: Path) -> None:
    rec = record(home, project)
    rec["envelope"]["details"]["expiresAtIso"] = "2099-01-01T00:00:00.000Z"
    proc = run(
        home,
        "consume",
        "--envelope",
        "-",
        "--tool",
        "bash",
        "--input",
        RM,
        "--cwd",
        str(project),
        stdin=json.dumps(rec["envelope"]),
    )
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["reasons"] == ["signature-invalid"]


def test_garbage_envelope_is_rejected_not_a_crash(home: Path, project: Path) -> None:
    proc = run(
        home,
        "consume",
        "--envelope",
        "-",
        "--tool",
        "bash",
        "--input",
        RM,
        "--cwd",
        str(project),
        stdin="{not json",
    )
    assert proc.returncode == 3
    assert json.loads(proc.stdout)["match"]["decision"] == "malformed"


def test_declined_and_local_safe(home: Path, project: Path) -> None:
    declined = run(
        home, "record", "--tool", "bash", "--input", RM, "--cwd", str(project), "--declined"
    )
    assert declined.returncode == 0
    out = json.loads(declined.stdout)
    assert out["decision"] == "declined" and out["envelope"] is None
    safe = run(
        home,
        "record",
        "--tool",
        "bash",
        "--input",
        '{"command": "ls"}',
        "--cwd",
        str(project),
        "--confirmed",
    )
    assert safe.returncode == 2
    assert json.loads(safe.stdout)["reasons"] == ["action-not-protected"]
    assert "action-not-protected" in one_line_error(safe)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("record", "--tool", "bash", "--input", RM, "--confirmed", "--ttl", "0"), "ttl"),
        (("record", "--tool", "bash", "--input", RM, "--confirmed", "--ttl", "601"), "ttl"),
        (("record", "--tool", "bash", "--input", RM, "--confirmed", "--ttl", "abc"), "--ttl"),
        (("evaluate", "--tool", "bash", "--input", "{bad"), "invalid JSON"),
        (("evaluate", "--tool", "bash", "--input", "[1]"), "JSON object"),
        (("evaluate", "--tool", "bash", "--input", '{"a":1,"a":2}'), "duplicate key"),
        (("evaluate", "--tool", "bash", "--input", '{"a":NaN}'), "NaN"),
        (("evaluate", "--tool", "bash", "--input", '{"a":9007199254740993}'), "canonical"),
        (("evaluate", "--tool", "", "--input", "{}"), "tool name"),
        (("evaluate", "--tool", "bash"), "required"),
        (("nonsense",), "invalid choice"),
        (
            ("consume", "--envelope", "/nonexistent/env.json", "--tool", "bash", "--input", RM),
            "cannot read",
        ),
        (("plan", "channel", "--input", '{"noSuchField": true}'), "noSuchField"),
    ],
)
def test_bad_input_exit_2_with_one_line(
    home: Path, project: Path, args: tuple[str, ...], message: str
) -> None:
    proc = run(home, *args, cwd=project)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert message in one_line_error(proc)


def test_non_utf8_stdin_is_exit_2(home: Path, project: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "guard",
            "--home",
            str(home),
            "evaluate",
            "--tool",
            "bash",
            "--input",
            "-",
            "--cwd",
            str(project),
        ],
        input=b'{"command": "\xff"}',
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert b"UTF-8" in proc.stderr and b"Traceback" not in proc.stderr


def test_world_readable_key_is_exit_6_state(home: Path, project: Path) -> None:
    assert run(home, "keygen").returncode == 0
    (home / "signing.key").chmod(0o644)
    proc = run(
        home, "record", "--tool", "bash", "--input", RM, "--cwd", str(project), "--confirmed"
    )
    assert proc.returncode == 6  # the guard's own state, not the caller's input
    assert "lets others read it" in one_line_error(proc)


def test_corrupted_keyring_is_exit_6_state(home: Path, project: Path) -> None:
    assert run(home, "keygen").returncode == 0
    (home / "keyring.json").write_text("{")
    proc = run(home, "evaluate", "--tool", "bash", "--input", RM, "--cwd", str(project))
    assert proc.returncode == 6  # the guard's own state, not the caller's input
    assert "keyring" in one_line_error(proc)


def test_unopenable_ledger_is_exit_6_state(home: Path, project: Path) -> None:
    assert run(home, "keygen").returncode == 0
    for suffix in ("", "-wal", "-shm"):
        (home / f"ledger.sqlite3{suffix}").unlink(missing_ok=True)
    (home / "ledger.sqlite3").mkdir()
    proc = run(home, "evaluate", "--tool", "bash", "--input", RM, "--cwd", str(project))
    assert proc.returncode == 6  # the guard's own state, not the caller's input
    assert "ledger" in one_line_error(proc)


def test_internal_error_is_exit_1_without_traceback(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An unplanned exception inside a command (simulated by breaking Guard.open) must
    # become one line and exit 1, never a traceback.
    import guard._facade.guard as g

    def boom(*a: object, **k: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(g.Guard, "open", classmethod(boom))
    proc = run(home, "keygen")
    assert proc.returncode == 1
    assert one_line_error(proc) == "pi-guard: internal error: RuntimeError: disk on fire"


def test_plan_prints_report_only_json_and_creates_nothing(home: Path) -> None:
    proc = run(
        home,
        "plan",
        "channel",
        "--input",
        '{"preferredChannel": "guard-owned", "guardCanOwnDialog": true}',
    )
    assert proc.returncode == 0, proc.stderr
    plan = json.loads(proc.stdout)
    assert plan["dispatchAllowed"] is False and plan["authorization"] == "none"
    assert plan["channel"] == "guard-owned-report-only"
    assert not home.exists()


def test_plan_is_audited_when_the_log_exists(home: Path) -> None:
    assert run(home, "keygen").returncode == 0
    assert run(home, "plan", "signal-source", "--input", "-", stdin="{}").returncode == 0
    shown = run(home, "audit", "show", "--json", "--event", "planner.reported")
    assert shown.returncode == 0, shown.stderr
    records = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [r["data"]["planner"] for r in records] == ["signal-source"]


def test_show_refuses_an_event_or_tool_it_cannot_show_and_names_the_valid_ones(
    home: Path, project: Path
) -> None:
    record(home, project)
    for args, what in (
        (("--event", "nonsense"), "--event"),
        (("--event", "tool"), "--event"),  # a prefix must end in "."
        (("--tool", "bsah"), "--tool"),
    ):
        shown = run(home, "audit", "show", *args)
        assert shown.returncode == 2, (args, shown.stdout, shown.stderr)
        assert shown.stdout == ""
        (line,) = shown.stderr.strip().splitlines()
        assert "Traceback" not in line
        if what == "--event":
            assert "confirmation.recorded" in line and "tool.executed" in line
        else:
            assert "it has: bash" in line
    for args in (("--event", "confirmation."), ("--event", "log.created"), ("--tool", "bash")):
        assert run(home, "audit", "show", *args).returncode == 0, args


def test_a_home_under_a_file_is_bad_input_and_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for home in (Path("/dev/null/x"), blocker / "home"):
        proc = run(home, "keygen")
        assert proc.returncode == 2, proc.stderr
        (line,) = proc.stderr.strip().splitlines()
        assert "Not a directory" in line and str(home) in line


def test_help_exits_0(home: Path) -> None:
    proc = run(home, "--help")
    assert proc.returncode == 0 and "keygen" in proc.stdout


def test_audit_verify_exit_codes(home: Path, project: Path) -> None:
    record(home, project)
    intact = run(home, "audit", "verify")
    assert intact.returncode == 0, intact.stdout + intact.stderr
    assert intact.stdout.startswith("intact:")
    as_json = run(home, "audit", "verify", "--json")
    assert json.loads(as_json.stdout)["decision"] == "intact"
    log = home / "audit.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"seq":1', b'"seq":7')
    log.write_bytes(b"".join(lines))
    tampered = run(home, "audit", "verify")
    assert tampered.returncode == 4
    assert "line 2" in tampered.stdout
    (home / "audit.jsonl.head").unlink()
    log.write_bytes(b"".join(lines[:1]))
    unanchored = run(home, "audit", "verify")
    assert unanchored.returncode == 4
    assert unanchored.stdout.startswith("unanchored")
    assert run(home, "audit", "verify", "--allow-unanchored").returncode == 0


def test_audit_verify_with_only_log_head_and_keyring(
    home: Path, project: Path, tmp_path: Path
) -> None:
    record(home, project)
    auditor = tmp_path / "auditor"
    auditor.mkdir()
    for name in ("audit.jsonl", "audit.jsonl.head", "keyring.json"):
        (auditor / name).write_bytes((home / name).read_bytes())
    proc = run(
        tmp_path / "no-home",
        "audit",
        "verify",
        str(auditor / "audit.jsonl"),
        "--keyring",
        str(auditor / "keyring.json"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "no-home").exists()


def test_audit_report_exit_5_on_gaps_and_show_filters(home: Path, project: Path) -> None:
    rec = record(home, project, "--tool-call-id", "call_1")
    clean = run(home, "audit", "report", "--json")
    assert clean.returncode == 0, clean.stdout
    g = Guard.open(home)
    g.tool_executed(
        "call_1", "bash", {"command": "rm -rf build"}, project, False, rec["evidenceId"]
    )
    g.tool_executed("call_2", "bash", {"command": "rm -rf src"}, project, False)
    g.close()
    report = run(home, "audit", "report", "--json")
    assert report.returncode == 5
    rows = {r["toolCallId"]: r for r in json.loads(report.stdout)["rows"]}
    assert rows["call_1"]["classification"] == "auditable"
    assert (rows["call_2"]["classification"], rows["call_2"]["reason"]) == (
        "audit-gap",
        "no-evidence",
    )
    table = run(home, "audit", "report")
    assert table.returncode == 5 and "GAP no-evidence" in table.stdout
    assert max(len(line) for line in table.stdout.splitlines()) <= 120
    wide = run(home, "audit", "report", "--wide")
    assert wide.returncode == 5 and "audit-gap" in wide.stdout and "call_2" in wide.stdout
    shown = run(home, "audit", "show", "--json", "--evidence", rec["evidenceId"])
    events = [json.loads(line)["event"] for line in shown.stdout.splitlines()]
    assert "confirmation.recorded" in events and "tool.executed" in events


def test_empty_home_is_refused_not_the_current_directory(tmp_path: Path) -> None:
    proc = invoke("--home", "", "keygen", cwd=tmp_path)
    assert proc.returncode == 2
    assert "--home must not be empty" in proc.stderr
    assert list(tmp_path.iterdir()) == [], "nothing may be created in the current directory"


def test_audit_show_json_prints_the_log_lines_byte_for_byte(home: Path, project: Path) -> None:
    assert (
        run(
            home, "record", "--tool", "bash", "--input", RM, "--cwd", str(project), "--confirmed"
        ).returncode
        == 0
    )
    proc = subprocess.run(
        [sys.executable, "-m", "guard", "--home", str(home), "audit", "show", "--json"],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout == (home / "audit.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ("BadInputError('x', 'bad')", 2),
        ("LedgerError('ledger.sqlite3', 'locked')", 6),
        ("KeyFileError('signing.key', 'missing')", 6),
        ("HomeError('home', 'not a directory')", 6),
        ("ConfigError('operator-guard.toml', 'bad key')", 2),
        ("LogFormatError('audit.jsonl', 3, 'hash-mismatch', 'x')", 4),
        ("LogNotFoundError('audit.jsonl')", 2),
        ("PlanInputError('channel', 'bad')", 2),
        ("GuardError('bug')", 1),
    ],
)
def test_one_table_maps_each_error_to_its_exit_code(error: str, code: int) -> None:
    import audit
    import guard._errors
    import planning
    from guard._cli.exits import exit_for

    # The faces import their names on first use: ask for each rather than reading vars().
    faces = {n: getattr(face, n) for face in (audit, planning) for n in face.__all__}
    names = {**faces, **vars(guard._errors)}
    exc = eval(error, names)
    assert exit_for(exc) is not None
    assert exit_for(exc)[0] == code  # type: ignore[index]
    assert exit_for(ValueError("stray")) is None


def test_old_env_prefix_is_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from guard._home import env, env_flag

    monkeypatch.delenv("PI_OPERATOR_GUARD_DEBUG", raising=False)
    monkeypatch.setenv("PI_GUARD_DEBUG", "1")
    assert env_flag("DEBUG")
    monkeypatch.setenv("PI_OPERATOR_GUARD_DEBUG", "0")
    assert env("DEBUG") == "0" and not env_flag("DEBUG"), "the new name wins"


# -- audit CLI edge cases (issue 13, item 8) -------------------------------------------


@pytest.mark.parametrize("command", ["verify", "show", "report"])
def test_audit_commands_on_a_directory_exit_2_with_one_line(
    home: Path, project: Path, tmp_path: Path, command: str
) -> None:
    record(home, project)
    proc = run(home, "audit", command, str(tmp_path))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not a regular file" in one_line_error(proc)


@pytest.mark.parametrize("command", ["verify", "report"])
def test_audit_commands_on_dev_zero_exit_2(home: Path, project: Path, command: str) -> None:
    record(home, project)
    proc = run(home, "audit", command, "/dev/zero")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not a regular file" in one_line_error(proc)


def test_audit_report_on_an_empty_file_exits_2(home: Path, project: Path, tmp_path: Path) -> None:
    record(home, project)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    proc = run(home, "audit", "report", str(empty))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "not an audit log" in one_line_error(proc)
    assert "no-gaps" not in proc.stdout
    # an empty log *with* a head is a log cut to nothing: tampered, like verify
    (home / "audit.jsonl").write_bytes(b"")
    cut = run(home, "audit", "report")
    assert cut.returncode == 4
    assert "records-missing-at-end" in one_line_error(cut)


def test_audit_report_on_an_unanchored_log_exits_like_verify(home: Path, project: Path) -> None:
    record(home, project)
    (home / "audit.jsonl.head").unlink()
    log = home / "audit.jsonl"
    log.write_bytes(log.read_bytes().splitlines(keepends=True)[0])
    proc = run(home, "audit", "report")
    assert proc.returncode == 4 == run(home, "audit", "verify").returncode
    assert "unanchored" in one_line_error(proc)
    assert "no-gaps" not in proc.stdout
    allowed = run(home, "audit", "report", "--allow-unanchored")
    assert allowed.returncode == 0, allowed.stderr
    assert "unanchored" in one_line_error(allowed)
    assert "no-gaps" in allowed.stdout


def test_audit_report_refuses_a_tampered_log(home: Path, project: Path) -> None:
    record(home, project)
    (home / "audit.jsonl.head").write_bytes(b"garbage")
    proc = run(home, "audit", "report", "--json")
    assert proc.returncode == 4
    assert proc.stdout == ""
    assert "head-malformed" in one_line_error(proc)


def test_audit_recover_is_the_only_way_past_a_damaged_log(home: Path, project: Path) -> None:
    record(home, project)
    record(home, project)
    (home / "audit.jsonl.head").write_bytes(b"garbage")
    # every append now refuses: the guard fails closed
    refused = run(
        home, "record", "--tool", "bash", "--input", RM, "--cwd", str(project), "--confirmed"
    )
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert "head-malformed" in one_line_error(refused)
    assert run(home, "audit", "verify").returncode == 4
    assert run(home, "audit", "recover").returncode == 2, "--reason is required"
    done = run(home, "audit", "recover", "--reason", "head overwritten", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["fault"] == "head-malformed"
    assert (home / result["movedTo"]).exists()
    assert run(home, "audit", "verify").returncode == 0
    shown = run(home, "audit", "show", "--json")
    events = [json.loads(line) for line in shown.stdout.splitlines()]
    assert [e["event"] for e in events] == ["log.created", "log.recovered"]
    assert events[1]["data"]["operatorReason"] == "head overwritten"
    record(home, project)
    again = run(home, "audit", "recover", "--reason", "x")
    assert again.returncode == 2
    assert "verifies intact" in one_line_error(again)
