"""Network modes against exfiltration, in a network namespace the test makes (real bwrap,
real curl, wget, python, node, git; real servers on addresses of the test's own).

``open`` is the control: the same attempts reach the listeners there, so a listener that
hears nothing in ``off`` and ``allowlist`` means the sandbox stopped it, not that the
attempt was broken.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.guard.sandbox.conftest import needs_bwrap

pytestmark = [pytest.mark.integration, needs_bwrap]

REPO = Path(__file__).resolve().parents[3]
EXFIL = (
    "curl",
    "curl-no-proxy",
    "curl-https-connect",
    "wget",
    "python-urllib",
    "python-socket",
    "node-http",
    "bash-dev-tcp",
    "dns-udp",
    "dns-resolver",
    "git-push",
    "host-loopback",
    "host-loopback-proxied",
    "host-loopback-by-allowed-name",
    "docker-socket",
    "ssh-agent",
    "abstract-socket",
)


@cache
def world(mode: str, root: str) -> dict[str, Any]:
    unshare = shutil.which("unshare", path="/usr/bin:/bin") or "unshare"
    # As root a network namespace is enough; otherwise a user namespace owns it.
    prefix = (
        [unshare, "--net"] if os.geteuid() == 0 else [unshare, "--user", "--map-root-user", "--net"]
    )
    done = subprocess.run(
        [*prefix, "--", sys.executable, "-m", "tests.guard.sandbox.netns_world", mode, root],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    return {m: world(m, str(tmp_path_factory.mktemp(m))) for m in ("open", "off", "allowlist")}


def test_open_is_the_control_every_attempt_gets_through(worlds: dict[str, dict[str, Any]]) -> None:
    got = worlds["open"]
    assert got["state"] == "sandboxed"
    heard = "\n".join(got["heard"])
    for what in (
        "/curl?d=",
        "/wget?d=",
        "/py?d=",
        "/node?d=",
        "raw b'EXFIL",
        "dns b'EXFIL",
        "loopback",
        "docker connected",
        "ssh-agent connected",
        "abstract connected",
    ):
        assert what in heard, (what, heard)  # fmt: skip


@pytest.mark.parametrize("mode", ["off", "allowlist"])
def test_no_exfiltration_attempt_reaches_a_host_that_is_not_allowed(
    worlds: dict[str, dict[str, Any]], mode: str
) -> None:
    got = worlds[mode]
    assert got["state"] == "sandboxed"
    leaked = [h for h in got["heard"] if not h.startswith("http 10.203.0.1 ")]
    assert leaked == [], (mode, leaked, got["results"])
    for name in EXFIL:
        result = got["results"][name]
        # Failed, or answered by the guard's proxy (plain http:// gets its 403 as a body).
        refused_by_guard = "operator-guard:" in result["out"] and "LEAKED" not in result["out"]
        assert result["rc"] != 0 or refused_by_guard, (mode, name, result)


def test_off_reaches_nothing_even_the_allowed_host(worlds: dict[str, dict[str, Any]]) -> None:
    got = worlds["off"]
    assert got["results"]["allowed-curl"]["rc"] != 0
    assert got["results"]["allowed-python"]["rc"] != 0
    assert got["heard"] == []


def test_allowlist_lets_the_allowed_host_through_the_proxy_and_says_what_it_refused(
    worlds: dict[str, dict[str, Any]],
) -> None:
    got = worlds["allowlist"]
    for name in ("allowed-curl", "allowed-python"):
        result = got["results"][name]
        assert result["rc"] == 0 and "ALLOWED-SERVER-ANSWERED" in result["out"], (name, result)
    assert "http 10.203.0.1 GET /curl" in got["heard"]
    assert "http 10.203.0.1 GET /py" in got["heard"]
    # The proxy refused by name: the denied host, and the host's loopback by its address.
    refused = {(r["host"], r["port"], r["reason"]) for r in got["refusals"]}
    assert ("10.203.0.2", 8080, "not-allowed") in refused, refused
    assert ("127.0.0.1", 15432, "not-allowed") in refused, refused
    assert ("localhost", 15432, "host-address") in refused, refused
    denied = got["results"]["curl"]
    assert "403" in denied["err"] or "operator-guard" in denied["out"], denied
