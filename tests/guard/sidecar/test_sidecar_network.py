"""The sidecar's allowlist proxy: started with an ``allowlist`` plan, refusing what the
list does not name, each refusal audited once as ``network.refused``, gone with the session."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import call, records, result

pytestmark = pytest.mark.integration

needs_bwrap = pytest.mark.usefixtures("bwrap_required")


def ask(sock: str, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(10)
        conn.connect(sock)
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
        return answer


def served(tmp_path: Path, policy: str) -> tuple[Sidecar, Path]:
    home = tmp_path / "home"
    home.mkdir(mode=0o700, parents=True)
    (home / "operator-guard.toml").write_text(policy)
    project = tmp_path / "project"
    project.mkdir()
    return Sidecar(home), project


@needs_bwrap
def test_an_allowlist_session_runs_the_proxy_and_audits_each_refusal_once(
    tmp_path: Path,
) -> None:
    server, project = served(
        tmp_path, '[sandbox.network]\nmode = "allowlist"\nallow = ["pypi.org", "*.npmjs.org"]\n'
    )
    try:
        plan: dict[str, Any] = result(server, "sandbox.plan", {"cwd": str(project)})
        assert plan["state"] == "sandboxed" and plan["network"] == "allowlist"
        assert plan["networkAllow"] == ["pypi.org", "*.npmjs.org"]
        sock = plan["proxySocket"]
        assert Path(sock).is_socket() and f"--ro-bind {sock} " in plan["prefix"]
        for _ in range(2):  # the same refusal twice: audited once
            answer = ask(sock, b"CONNECT evil.example:443 HTTP/1.1\r\nHost: x\r\n\r\n")
            assert answer.startswith(b"HTTP/1.1 403 ")
            assert b"operator-guard: evil.example:443 is not in" in answer
        # A name the list allows, on a port it does not: refused too.
        assert ask(sock, b"CONNECT pypi.org:22 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403 ")
        # Not a proxy request at all.
        assert ask(sock, b"GET /etc/passwd HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 400 ")
        assert records(server.home, "network.refused") == []  # appended on the sidecar's turn
        result(
            server, "audit.toolExecuted", {**call(project), "toolCallId": "c1", "isError": False}
        )
        refused = records(server.home, "network.refused")
        assert [(r["host"], r["port"], r["reason"]) for r in refused] == [
            ("evil.example", 443, "not-allowed"),
            ("pypi.org", 22, "not-allowed"),
            ("/etc/passwd", 0, "bad-request"),
        ]
        assert {r["scope"] for r in refused} == {str(project.resolve())}
    finally:
        server.close()
    assert not Path(sock).exists()


@needs_bwrap
def test_other_modes_run_no_proxy(tmp_path: Path) -> None:
    for mode in ("open", "off"):
        server, project = served(tmp_path / mode, f'[sandbox.network]\nmode = "{mode}"\n')
        try:
            plan = result(server, "sandbox.plan", {"cwd": str(project)})
            assert plan["network"] == mode and plan["proxySocket"] is None
            assert "/dev/operator-guard-proxy.sock" not in plan["prefix"]
            assert ("--unshare-net" in plan["prefix"]) is (mode == "off")
        finally:
            server.close()
