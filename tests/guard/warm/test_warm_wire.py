"""The warm start's protocol and facts, without processes: a request survives its encoding
whatever the environment holds, anything else is refused with its reason, and the code stamp
moves with any file of the code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard._home import WARM_IDLE_DEFAULT as DEFAULT_IDLE
from guard._home import warm_idle as idle_seconds
from guard._warm import facts
from guard._warm.wire import ProtocolError, Request, decode_line, encode_line

GOOD = Request(
    argv=("serve",),
    env={"PATH": "/usr/bin", "HOME": "/home/op"},
    umask=0o022,
    nice=0,
    ignored=(1,),
    rlimits={"RLIMIT_NOFILE": (1024, 4096)},
    python="/usr/bin/python3",
    version="3.11.7",
    roots=("/srv/guard",),
)

env_text = st.text(st.characters(exclude_characters="\0", codec="utf-8"), max_size=40)


@given(
    env=st.dictionaries(env_text.filter(lambda k: k != "" and "=" not in k), env_text),
    verify_only=st.booleans(),
)
def test_a_request_survives_its_encoding(env: dict[str, str], verify_only: bool) -> None:
    argv = ("serve", "--verify-only") if verify_only else ("serve",)
    request = GOOD._replace(env=env, argv=argv)
    assert Request.decode(request.encode()) == request


def test_undecodable_environment_bytes_survive_too() -> None:
    """An environment value that is not UTF-8 (Python holds it as surrogate escapes)."""
    value = os.fsdecode(b"caf\xe9")
    request = GOOD._replace(env={"NAME": value})
    assert Request.decode(request.encode()).env["NAME"] == value


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"argv": ["keygen"]}, "argv-not-serve"),
        ({"argv": ["serve", "--home", "/elsewhere"]}, "argv-not-serve"),
        ({"argv": "serve"}, "field-not-list"),
        ({"env": {"A=B": "x"}}, "env-bad-name"),
        ({"env": {"": "x"}}, "env-bad-name"),
        ({"env": {"A": "x\u0000y"}}, "field-not-string"),
        ({"env": ["A=x"]}, "env-not-object"),
        ({"umask": 0o1000}, "field-not-int"),
        ({"umask": True}, "field-not-int"),
        ({"nice": -21}, "field-not-int"),
        ({"ignored": [0]}, "field-not-int"),
        ({"rlimits": {"RLIMIT_NOFILE": [1]}}, "rlimit-not-pair"),
        ({"rlimits": {"RLIMIT_NOFILE": [1, "2"]}}, "field-not-int"),
        ({"python": 3}, "field-not-string"),
    ],
)
def test_a_request_of_the_wrong_shape_is_refused_with_its_reason(
    change: dict[str, object], reason: str
) -> None:
    data = {**json.loads(GOOD.encode()), **change}
    with pytest.raises(ProtocolError) as caught:
        Request.decode(json.dumps(data).encode())
    assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"", "payload-not-json"),
        (b"[]", "payload-not-object"),
        (b"\xff", "payload-not-json"),
        (b"{}", "missing-argv"),
    ],
)
def test_what_is_no_request_is_refused(payload: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        Request.decode(payload)
    assert caught.value.reason == reason


def test_reply_lines() -> None:
    assert decode_line(encode_line({"pid": 12}).rstrip(b"\n")) == {"pid": 12}
    for bad, reason in ((b"nope", "reply-not-json"), (b"[1]", "reply-not-object")):
        with pytest.raises(ProtocolError) as caught:
            decode_line(bad)
        assert caught.value.reason == reason


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        (None, DEFAULT_IDLE),
        ("", DEFAULT_IDLE),
        ("0", 0.0),
        ("30", 30.0),
        ("2.5", 2.5),
        ("-1", 0.0),
        ("soon", 0.0),
        ("1e9", 0.0),
        ("nan", 0.0),
    ],
)
def test_the_idle_time_and_warm_start_off(
    monkeypatch: pytest.MonkeyPatch, raw: str | None, seconds: float
) -> None:
    """Unset: the default; 0 or anything that is no idle time in 0..86400: off."""
    monkeypatch.delenv("PI_GUARD_WARM_IDLE", raising=False)
    if raw is None:
        monkeypatch.delenv("PI_OPERATOR_GUARD_WARM_IDLE", raising=False)
    else:
        monkeypatch.setenv("PI_OPERATOR_GUARD_WARM_IDLE", raw)
    assert idle_seconds() == seconds


def test_the_code_stamp_moves_with_any_file_of_the_code(tmp_path: Path) -> None:
    root = tmp_path / "guard"
    (root / "sub").mkdir(parents=True)
    module = root / "sub" / "m.py"
    module.write_text("x = 1\n")
    (root / "__pycache__").mkdir()
    before = facts.code_stamp([str(root)])
    (root / "__pycache__" / "m.cpython-311.pyc").write_bytes(b"cache")  # not code
    assert facts.code_stamp([str(root)]) == before
    info = module.stat()
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns + 1))
    touched = facts.code_stamp([str(root)])
    assert touched != before
    (root / "data.toml").write_text("[x]\n")  # a data file is the code's too
    assert facts.code_stamp([str(root)]) != touched


def test_the_start_environment_is_what_python_reads_at_its_start() -> None:
    env = {"LANG": "C.UTF-8", "LC_ALL": "C", "LD_PRELOAD": "x", "PYTHONHASHSEED": "1",
           "OPENSSL_CONF": "/x", "TZ": "UTC", "PATH": "/bin", "HOME": "/h", "PWD": "/p"}  # fmt: skip
    assert set(facts.startup_env(env)) == {"LANG", "LC_ALL", "LD_PRELOAD", "PYTHONHASHSEED",
                                           "OPENSSL_CONF", "TZ"}  # fmt: skip


def test_the_preload_covers_what_a_sidecar_needs_for_its_first_answers(tmp_path: Path) -> None:
    """After the fork server's preload (its modules, the redaction rules, every model's
    validator built), a sidecar imports none of ours, nor pydantic or cryptography, and builds
    no model for ``sandbox.plan``, ``health`` and the ``evaluate`` of a safe command."""
    project = tmp_path / "project"
    project.mkdir()
    requests = [
        {"method": "sandbox.plan", "params": {"cwd": str(project), "sessionId": "s", "mode": "rpc"}},
        {"method": "health", "params": {}},
        {"method": "evaluate", "params": {"toolName": "bash", "input": {"command": "echo hi"},
                                          "cwd": str(project), "toolCallId": "c", "hasUi": True}},
    ]  # fmt: skip
    lines = "".join(
        json.dumps({"jsonrpc": "2.0", "id": n, **r}) + "\n" for n, r in enumerate(requests, 1)
    )
    script = f"""
import io, json, sys
from guard._warm.server import _preload
_preload()
from pydantic import BaseModel
def models():
    seen, stack = set(), [BaseModel]
    while stack:
        for model in stack.pop().__subclasses__():
            if model not in seen:
                seen.add(model)
                stack.append(model)
    return seen
unbuilt = sorted(m.__qualname__ for m in models() if not m.__pydantic_complete__)
before = set(sys.modules)
from guard._sidecar import serve
replies = io.BytesIO()
serve(io.BytesIO({lines.encode()!r}), replies, home=None)
assert replies.getvalue().count(b'"result"') == 3, replies.getvalue()[:400]
late = sorted(m for m in set(sys.modules) - before
              if m.split(".")[0] in ("guard", "audit", "planning", "pydantic", "cryptography"))
print(json.dumps({{"late": late, "unbuilt": unbuilt}}))
"""
    done = subprocess.run(
        [sys.executable, "-I", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PI_OPERATOR_GUARD_HOME": str(tmp_path / "home")},
        cwd=project,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"late": [], "unbuilt": []}


def test_the_code_stamp_ignores_files_made_beside_the_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A checkout installed in place has its root on sys.path: a file made there (a cache, a
    log) is no code change, while an edit of a package's file is."""
    root = tmp_path / "checkout"
    package = root / "guard"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("x = 1\n")
    monkeypatch.setattr(sys, "path", [str(root), *sys.path])
    before = facts.code_stamp([str(package)])
    (root / ".pytest_cache").mkdir()
    (root / "notes.txt").write_text("made beside the code\n")
    assert facts.code_stamp([str(package)]) == before
    (package / "__init__.py").write_text("x = 2\n")
    os.utime(package / "__init__.py", ns=(1, 1))
    assert facts.code_stamp([str(package)]) != before


@pytest.mark.parametrize("args", [[], ["relative", "5"], ["/tmp/x", "nan"], ["/tmp/x", "-1"]])
def test_a_fork_server_with_bad_arguments_says_so_in_one_line(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-m", "guard._warm", "--fork-server", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "pi-guard: error: --fork-server takes an absolute HOME and IDLE seconds > 0"
    ]
