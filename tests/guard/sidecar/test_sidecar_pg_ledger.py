"""The sidecar on a shared PostgreSQL ledger: consumed once, and fail closed when the
server goes away in the middle of a session (an error for that request, never ``consumed``)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.handlers.methods import serve
from tools.postgres import PostgresServer

pytestmark = pytest.mark.integration


def rpc(method: str, params: Any, request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})\
        .encode() + b"\n"  # fmt: skip


def run(home: Path, *lines: bytes) -> list[Any]:
    out = io.BytesIO()
    assert serve(io.BytesIO(b"".join(lines)), out, home=home) == 0
    return [json.loads(line) for line in out.getvalue().split(b"\n") if line]


def call(project: Path, **extra: Any) -> dict[str, Any]:
    return {"toolName": "bash", "input": {"command": "rm -rf build"}, "cwd": str(project), **extra}


def test_consume_fails_closed_while_the_server_is_down_then_works(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = PostgresServer().start()
    try:
        monkeypatch.setenv("PI_OPERATOR_GUARD_LEDGER", server.url())
        home, project = tmp_path / "home", tmp_path / "project"
        (project / "build").mkdir(parents=True)
        ((record,),) = [run(home, rpc("record", call(project, confirmed=True), 1))]
        envelope = record["result"]["envelope"]
        server.kill()
        (down,) = run(home, rpc("consume", call(project, envelope=envelope), 2))
        assert "result" not in down
        assert "consumption refused" in json.dumps(down["error"])
        assert server.password not in json.dumps(down)
        server.resume()
        first, second = run(
            home,
            rpc("consume", call(project, envelope=envelope), 3),
            rpc("consume", call(project, envelope=envelope), 4),
        )
        assert first["result"]["decision"] == "consumed"
        assert second["result"]["decision"] == "rejected"
        assert second["result"]["reasons"] == ["replay"]
    finally:
        server.stop()
