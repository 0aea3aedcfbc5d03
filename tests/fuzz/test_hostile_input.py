"""Hostile input, case by case: each one is refused with a specific reason, nothing crashes.

Non-canonical base64url signatures (padding, standard alphabet, non-zero trailing bits),
duplicate JSON keys, NaN/Infinity, integers beyond 2**53, deeply nested input and 10 MB
strings, at the three doors input comes through: the envelope consumer, the sidecar's
JSON-RPC line and the audit verifier.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest

from audit import AuditError, LogFormatError
from audit.verify import read_records, verify_log
from guard import Guard
from guard._sidecar.handlers.methods import MAX_LINE_BYTES, RpcCode, Sidecar, iter_frames, serve
from tests.fuzz.conftest import World

TEN_MB = 10 * 1024 * 1024
DEEP = 100_000  # far past Python's recursion limit, well under the sidecar's line limit


def reasons(world: World, raw: Any) -> tuple[str, str]:
    result = world.consume(raw)
    assert result.decision == "rejected"
    return result.match.decision, ",".join(result.reasons)


def as_text(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope, separators=(",", ":"))


# -- signatures -----------------------------------------------------------------------------


def with_signature(world: World, signature: str) -> dict[str, Any]:
    envelope = world.mint()
    envelope["details"]["signature"] = signature
    return envelope


def test_padded_signature_is_malformed(world: World) -> None:
    envelope = world.mint()
    envelope["details"]["signature"] += "=="
    assert reasons(world, envelope) == ("malformed", "schema-violation")


def test_standard_alphabet_signature_is_malformed(world: World) -> None:
    envelope = world.mint()
    sig = envelope["details"]["signature"]
    raw = base64.urlsafe_b64decode(sig + "==")
    standard = base64.b64encode(raw).rstrip(b"=").decode()
    if standard == sig:  # no '-' or '_' in this one: force a character only base64 has
        standard = "+" + sig[1:]
    envelope["details"]["signature"] = standard
    assert reasons(world, envelope) == ("malformed", "schema-violation")


def test_non_zero_trailing_bits_are_refused_although_the_bytes_decode_the_same(
    world: World,
) -> None:
    envelope = world.mint()
    sig = envelope["details"]["signature"]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    # 86 characters carry 516 bits for 512: the last character's low 4 bits are padding.
    last = alphabet.index(sig[-1])
    assert last & 0b1111 == 0
    sloppy = sig[:-1] + alphabet[last | 0b0101]
    assert base64.urlsafe_b64decode(sloppy + "==") == base64.urlsafe_b64decode(sig + "==")
    envelope["details"]["signature"] = sloppy
    assert reasons(world, envelope) == ("untrusted", "signature-invalid")
    envelope["details"]["signature"] = sig  # the canonical spelling of the same bytes
    assert world.consume(envelope).decision == "consumed"


# -- JSON-level hostility in the envelope -----------------------------------------------------


def test_duplicate_keys_in_details_are_malformed(world: World) -> None:
    text = as_text(world.mint())
    forged = text.replace(
        '"evidenceId":', '"evidenceId":"oce_AAAAAAAAAAAAAAAAAAAAAA","evidenceId":', 1
    )
    assert reasons(world, forged) == ("malformed", "duplicate-key")
    assert reasons(world, forged.encode()) == ("malformed", "duplicate-key")


def test_duplicate_top_level_keys_are_malformed(world: World) -> None:
    text = as_text(world.mint())
    forged = text[:-1] + ',"details":{}}'
    assert reasons(world, forged) == ("malformed", "duplicate-key")


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_in_text_are_malformed(world: World, constant: str) -> None:
    text = as_text(world.mint()).replace('"display":false', f'"display":{constant}')
    assert reasons(world, text) == ("malformed", "non-finite-number")


@pytest.mark.parametrize("number", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_numbers_in_objects_are_malformed(world: World, number: float) -> None:
    envelope = world.mint()
    envelope["display"] = number
    assert reasons(world, envelope) == ("malformed", "not-canonicalizable")


def test_integers_beyond_2_53_are_refused(world: World) -> None:
    envelope = world.mint()
    envelope["details"]["trusted"] = 2**53 + 1
    assert reasons(world, envelope) == ("malformed", "not-canonicalizable")
    assert reasons(world, as_text(envelope)) == ("malformed", "schema-violation")


def test_deeply_nested_text_is_malformed(world: World) -> None:
    assert reasons(world, "[" * 10_000) == ("malformed", "too-deep")
    nested = '{"details":' + "[" * 5_000 + "]" * 5_000 + "}"
    assert reasons(world, nested) == ("malformed", "too-deep")


def test_deeply_nested_objects_are_malformed(world: World) -> None:
    value: Any = 1
    for _ in range(500):
        value = {"x": value}
    envelope = world.mint()
    envelope["details"]["path"] = value
    assert reasons(world, envelope) == ("malformed", "not-canonicalizable")


def test_ten_megabyte_strings_are_too_large(world: World) -> None:
    envelope = world.mint()
    envelope["content"] = "x" * TEN_MB
    assert reasons(world, envelope) == ("malformed", "too-large")
    assert reasons(world, as_text(envelope)) == ("malformed", "too-large")
    assert reasons(world, as_text(envelope).encode()) == ("malformed", "too-large")


def test_byte_order_mark_and_invalid_utf8_are_malformed(world: World) -> None:
    text = as_text(world.mint())
    assert reasons(world, b"\xef\xbb\xbf" + text.encode()) == ("malformed", "invalid-json")
    assert reasons(world, text.encode().replace(b"bash", b"ba\xffsh")) == (
        "malformed",
        "not-utf8",
    )
    assert reasons(world, text.replace("bash", "ba\udc80sh")) == ("malformed", "not-utf8")


# -- the sidecar's JSON-RPC door ---------------------------------------------------------------


@pytest.fixture(scope="module")
def sidecar(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("hostile-sidecar")
    car = Sidecar(root / "home")
    yield car
    car.close()


def answer(sidecar: Sidecar, line: bytes) -> dict[str, Any]:
    frames = list(iter_frames(io.BytesIO(line + b"\n")))
    assert len(frames) == 1
    reply = sidecar.handle_frame(frames[0])
    assert reply is not None and reply.endswith(b"\n")
    decoded: dict[str, Any] = json.loads(reply)
    return decoded


def ping(request_id: Any = 1, **extra: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping", **extra}).encode()


def error_reason(reply: dict[str, Any]) -> tuple[int, str]:
    assert "error" in reply, reply
    return reply["error"]["code"], reply["error"]["data"]["reason"]


@pytest.mark.parametrize("constant", [b"NaN", b"Infinity", b"-Infinity"])
def test_sidecar_refuses_non_finite_numbers(sidecar: Sidecar, constant: bytes) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":' + constant + b"}}"
    assert error_reason(answer(sidecar, line)) == (RpcCode.PARSE_ERROR, "non-finite-number")


def test_sidecar_survives_deeply_nested_json(sidecar: Sidecar) -> None:
    reply = answer(sidecar, b"[" * DEEP)
    assert error_reason(reply) == (RpcCode.PARSE_ERROR, "too-deep")
    assert answer(sidecar, ping(7)) == {"jsonrpc": "2.0", "id": 7, "result": {"pong": True}}


def test_sidecar_refuses_a_ten_megabyte_line_and_keeps_serving(tmp_path: Path) -> None:
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * TEN_MB + b'"}}'
    out = io.BytesIO()
    assert serve(io.BytesIO(big + b"\n" + ping(2) + b"\n"), out, home=tmp_path / "h") == 0
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert error_reason(first) == (RpcCode.INVALID_REQUEST, "line-too-long")
    assert first["error"]["data"]["limitBytes"] == MAX_LINE_BYTES
    assert second["result"] == {"pong": True}


def test_sidecar_refuses_integers_beyond_2_53_in_a_tool_input(
    sidecar: Sidecar, tmp_path: Path
) -> None:
    params = {
        "toolName": "bash",
        "input": {"command": "rm -rf b", "n": 2**60},
        "cwd": str(tmp_path),
    }
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "record", "params": {**params, "confirmed": True}}
    )
    code, reason = error_reason(answer(sidecar, line.encode()))
    assert (code, reason) == (RpcCode.BAD_INPUT, "bad-input")


def test_sidecar_consume_refuses_duplicate_keys_in_an_envelope_given_as_text(
    sidecar: Sidecar, tmp_path: Path
) -> None:
    text = '{"customType":"operator-confirmation-evidence","details":{},"details":{}}'
    params = {"toolName": "bash", "input": {"command": "rm -rf b"}, "cwd": str(tmp_path)}
    line = json.dumps(
        {"jsonrpc": "2.0", "id": 4, "method": "consume", "params": {**params, "envelope": text}}
    )
    result = answer(sidecar, line.encode())["result"]
    assert result["decision"] == "rejected"
    assert result["match"] == {"decision": "malformed", "reasons": ["duplicate-key"]}


def test_sidecar_consume_with_a_nul_in_the_session_file_path_is_bad_input(
    sidecar: Sidecar, tmp_path: Path
) -> None:
    params = {
        "toolName": "bash",
        "input": {"command": "rm -rf b"},
        "cwd": str(tmp_path),
        "sessionFile": str(tmp_path / "session\u0000.jsonl"),
    }
    line = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "consume", "params": params})
    assert error_reason(answer(sidecar, line.encode())) == (
        RpcCode.BAD_INPUT,
        "session-file-unreadable",
    )


# -- the audit verifier ---------------------------------------------------------------------


@pytest.fixture
def log(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    with Guard.open(tmp_path / "home") as guard:
        for n in range(3):
            guard.tool_executed(f"call-{n}", "bash", {"command": "ls"}, tmp_path, is_error=False)
        return guard.audit.path, guard.public_keyring().public_keys()


def replace_line(path: Path, index: int, line: bytes) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    lines[index] = line
    path.write_bytes(b"".join(lines))


def line_of(path: Path, index: int) -> bytes:
    return path.read_bytes().splitlines(keepends=True)[index]


@pytest.mark.parametrize(
    "hostile",
    [
        pytest.param(
            lambda line: line.replace(b'{"data":', b'{"seq":0,"data":', 1), id="duplicate-key"
        ),
        pytest.param(lambda line: line.replace(b'"isError":false', b'"isError":NaN'), id="nan"),
        pytest.param(
            lambda line: line.replace(b'"isError":false', b'"isError":9007199254740993'),
            id="int-2-53",
        ),
        pytest.param(
            lambda line: line.replace(b'"isError":false', b'"isError":"' + b"x" * TEN_MB + b'"'),
            id="ten-mb",
        ),
        pytest.param(
            lambda line: line.replace(
                b'"isError":false', b'"isError":' + b"[" * DEEP + b"]" * DEEP
            ),
            id="deep",
        ),
        pytest.param(lambda line: b"[" * DEEP + b"\n", id="deep-line"),
    ],
)
def test_verify_reports_hostile_lines_as_tampered(
    log: tuple[Path, dict[str, Any]], hostile: Any
) -> None:
    path, keys = log
    replace_line(path, 2, hostile(line_of(path, 2)))
    result = verify_log(path, keys)
    assert result.decision == "tampered"
    assert result.line == 3
    assert result.fault in ("malformed-line", "hash-mismatch")
    with pytest.raises(LogFormatError) as raised:
        list(read_records(path))
    assert raised.value.line == 3


def test_appender_refuses_to_sign_over_a_deeply_nested_last_line(
    log: tuple[Path, dict[str, Any]],
) -> None:
    path, keys = log
    last = len(path.read_bytes().splitlines())
    replace_line(path, last - 1, b"[" * DEEP + b"\n")
    damaged = path.read_bytes()
    with pytest.raises(AuditError):
        Guard.open(path.parent)
    assert path.read_bytes() == damaged
    assert verify_log(path, keys).decision == "tampered"
