"""Regression: a JSON integer of thousands of digits is refused, never an internal error.

Python's ``int()`` and ``repr()`` raise a stray ``ValueError`` past 4300 digits. Before the
shared strict loader, such an integer in an envelope or a tool input made ``Guard.consume``,
``pi-guard consume`` and ``pi-guard evaluate`` fail with exit 1 and no audit record.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

from audit.verify import read_records
from guard import BadInputError, Guard
from guard._sidecar.framing import RpcCode
from tests.guard.cli.test_cli import one_line_error
from tests.guard.cli.test_cli import run as cli
from tests.guard.sidecar.test_sidecar import error_of, rpc
from tests.guard.sidecar.test_sidecar import run as serve

DIGITS = "9" * 5000  # past the 4300-digit limit of int()
HUGE = 10**5000  # the same, reaching the API as a Python int
RM = {"command": "rm -rf build"}


@pytest.fixture
def g(tmp_path: Path) -> Any:
    with Guard.open(tmp_path / "home") as opened:
        yield opened


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "build").mkdir(parents=True)
    return root


def with_huge_number(envelope_text: str) -> str:
    forged = envelope_text.replace('"display": false', f'"display": {DIGITS}', 1)
    assert forged != envelope_text
    return forged


def last_record(g: Guard) -> tuple[str, dict[str, Any]]:
    record = list(read_records(g.audit.path))[-1]
    return record.event, record.data


# -- Python API --------------------------------------------------------------------------------


@pytest.mark.parametrize("as_bytes", [False, True], ids=["str", "bytes"])
def test_consume_of_a_text_envelope_with_a_huge_integer_is_malformed_and_audited(
    g: Guard, project: Path, as_bytes: bool
) -> None:
    rec = g.record("bash", RM, project, confirmed=True)
    assert rec.envelope is not None
    text = with_huge_number(json.dumps(rec.envelope.model_dump(mode="json")))
    result = g.consume(text.encode() if as_bytes else text, "bash", RM, project)
    assert result.decision == "rejected"
    assert result.match.decision == "malformed"
    assert result.reasons == ("number-too-long",)
    event, data = last_record(g)
    assert event == "evidence.rejected"
    assert data["decision"] == "malformed"
    assert data["reasons"] == ["number-too-long"]


def test_consume_of_a_mapping_envelope_with_a_huge_integer_is_malformed(
    g: Guard, project: Path
) -> None:
    rec = g.record("bash", RM, project, confirmed=True)
    assert rec.envelope is not None
    envelope = rec.envelope.model_dump(mode="json")
    envelope["details"]["extra"] = {"deep": [HUGE]}
    result = g.consume(envelope, "bash", RM, project)
    assert (result.decision, result.match.decision) == ("rejected", "malformed")
    assert result.reasons == ("not-canonicalizable",)
    assert last_record(g)[0] == "evidence.rejected"


@pytest.mark.parametrize(
    "tool_input",
    [
        {"command": "rm -rf build", "options": {"retries": [HUGE]}},
        {"command": "ls", "n": -HUGE},  # local-safe: still hashed, still refused
        {"command": "rm -rf build", "n": 10**20},  # valid JSON, outside I-JSON
        {"path": HUGE},
    ],
    ids=["nested", "local-safe", "beyond-2^53", "path"],
)
@pytest.mark.parametrize("method", ["evaluate", "record"])
def test_a_huge_integer_in_a_tool_input_is_bad_input(
    g: Guard, project: Path, tool_input: dict[str, Any], method: str
) -> None:
    tool = "read" if "path" in tool_input else "bash"
    act = g.evaluate if method == "evaluate" else functools.partial(g.record, confirmed=True)
    with pytest.raises(BadInputError) as caught:
        act(tool, tool_input, project)
    message = str(caught.value)
    assert "integer-out-of-range" in message
    assert "\n" not in message and len(message) < 400


# -- the CLI -----------------------------------------------------------------------------------


def test_cli_consume_of_an_envelope_with_a_huge_integer_exits_3(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    rm = json.dumps(RM)
    made = cli(
        home, "record", "--tool", "bash", "--input", rm, "--cwd", str(project), "--confirmed"
    )
    assert made.returncode == 0, made.stderr
    envelope = json.dumps(json.loads(made.stdout)["envelope"])
    path = tmp_path / "envelope.json"
    path.write_text(with_huge_number(envelope))
    proc = cli(
        home,
        "consume",
        "--envelope",
        str(path),
        "--tool",
        "bash",
        "--input",
        rm,
        "--cwd",
        str(project),
    )
    assert proc.returncode == 3, proc.stderr
    result = json.loads(proc.stdout)
    assert result["match"] == {"decision": "malformed", "reasons": ["number-too-long"]}
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "tool_input",
    [
        '{"command": "rm -rf build", "n": ' + DIGITS + "}",
        '{"command": "rm -rf build", "n": [{"m": -' + DIGITS + "}]}",
        '{"command": "rm -rf build", "n": ' + "9" * 300 + "}",  # parses; no canonical form
    ],
    ids=["top", "nested", "300-digits"],
)
@pytest.mark.parametrize("command", ["evaluate", "record"])
def test_cli_input_with_a_huge_integer_exits_2_with_one_line(
    tmp_path: Path, project: Path, tool_input: str, command: str
) -> None:
    args = ["--tool", "bash", "--input", tool_input, "--cwd", str(project)]
    if command == "record":
        args.append("--confirmed")
    proc = cli(tmp_path / "home", command, *args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    line = one_line_error(proc)
    assert "--input" in line or "tool input" in line
    assert len(line) < 400


def test_cli_plan_input_with_a_huge_integer_exits_2(tmp_path: Path) -> None:
    proc = cli(tmp_path / "home", "plan", "channel", "--input", '{"x": ' + DIGITS + "}")
    assert proc.returncode == 2
    assert "number longer than 400 digits" in one_line_error(proc)


# -- the sidecar -------------------------------------------------------------------------------


def call(project: Path, tool_input: Any) -> dict[str, Any]:
    return {"toolName": "bash", "input": tool_input, "cwd": str(project)}


def test_sidecar_answers_a_huge_integer_with_a_parse_error_and_keeps_serving(
    tmp_path: Path, project: Path
) -> None:
    line = rpc("evaluate", call(project, RM), request_id=1).replace(
        b'"rm -rf build"}', b'"rm -rf build", "n": ' + DIGITS.encode() + b"}"
    )
    assert DIGITS.encode() in line
    bad, good = serve(tmp_path / "home", line, rpc("ping", request_id=2))
    assert error_of(bad) == (RpcCode.PARSE_ERROR, "number-too-long")
    assert good == {"jsonrpc": "2.0", "id": 2, "result": {"pong": True}}


def test_sidecar_refuses_an_integer_without_canonical_form_as_bad_input(
    tmp_path: Path, project: Path
) -> None:
    tool_input = {**RM, "n": int("9" * 300)}
    evaluated, recorded, pong = serve(
        tmp_path / "home",
        rpc("evaluate", call(project, tool_input), request_id=1),
        rpc("record", {**call(project, tool_input), "confirmed": True}, request_id=2),
        rpc("ping", request_id=3),
    )
    assert error_of(evaluated) == (RpcCode.BAD_INPUT, "bad-input")
    assert error_of(recorded) == (RpcCode.BAD_INPUT, "bad-input")
    assert pong["result"] == {"pong": True}


def test_sidecar_consume_of_an_envelope_with_a_huge_integer_is_malformed(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    (made,) = serve(home, rpc("record", {**call(project, RM), "confirmed": True}))
    envelope = json.dumps(made["result"]["envelope"])
    as_text = {**call(project, RM), "envelope": with_huge_number(envelope)}
    as_object = {**call(project, RM), "envelope": json.loads(envelope)}
    as_object["envelope"]["details"]["n"] = int("9" * 300)
    first, second, third = serve(
        home,
        rpc("consume", as_text, request_id=1),
        rpc("consume", as_object, request_id=2),
        rpc("ping", request_id=3),
    )
    assert first["result"]["match"] == {"decision": "malformed", "reasons": ["number-too-long"]}
    assert second["result"]["match"] == {
        "decision": "malformed",
        "reasons": ["not-canonicalizable"],
    }
    assert third["result"] == {"pong": True}
