"""``pi-guard operator enroll|list|remove``.

Enrolment is driven over HTTP with the software authenticator (tests/softauthn.py) playing
the browser: the one-time login printed to stderr, the creation options, the answer; the
credential lands in the keyring and on stdout. Listing and removal over credentials enrolled
through the guard; every refusal one line and its exit code; ``approvals serve`` follows the
enrolled passkeys' port. The servers (``enroll``, ``approvals serve``) run as processes of
their own, killed at the end; the one-shot commands run in process (``tests.cli_runner``).
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from audit.verify import read_records
from audit.wire import b64url_decode, utc_now
from guard import Guard
from guard._evidence.keys import KEYRING_FILE
from guard._operator import OperatorCredential, enrolled_credential
from tests.cli_runner import Result, invoke
from tests.softauthn import SoftAuthenticator

pytestmark = pytest.mark.integration


def command(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "guard", "--home", str(home), *args]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PI_OPERATOR_GUARD_DEBUG"}


def run(home: Path, *args: str) -> Result:
    return invoke(*args, home=home, env=env())


def one_line_error(proc: Result) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def enrolled(home: Path, label: str, port: int = 8790) -> tuple[SoftAuthenticator, str]:
    """A credential enrolled through the guard (as the page would keep it); its id."""
    authenticator = SoftAuthenticator(origin=f"http://localhost:{port}")
    challenge = os.urandom(32)
    credential = enrolled_credential(
        authenticator.register(challenge),
        challenge=challenge,
        rp_id="localhost",
        origin=authenticator.origin,
        label=label,
        now=utc_now(),
    )
    with Guard.open(home) as guard:
        guard.operators.enroll(credential)
    return authenticator, credential.credential_id


@pytest.fixture
def home(tmp_path: Path) -> Path:
    made = tmp_path / "home"
    Guard.open(made).close()
    return made


# -- list and remove -------------------------------------------------------------------------


def test_nothing_enrolled(home: Path) -> None:
    shown = run(home, "operator", "list")
    assert shown.returncode == 0 and "no passkeys enrolled" in shown.stdout
    as_json = run(home, "operator", "list", "--json")
    assert as_json.returncode == 0 and json.loads(as_json.stdout) == []


def test_list_then_remove(home: Path) -> None:
    _, laptop = enrolled(home, "laptop")
    _, key = enrolled(home, "security key")
    listed = json.loads(run(home, "operator", "list", "--json").stdout)
    assert [c["credentialId"] for c in listed] == [laptop, key]
    assert all(OperatorCredential.model_validate(c).status == "active" for c in listed)
    table = run(home, "operator", "list").stdout
    assert "laptop" in table and "security key" in table and "http://localhost:8790" in table

    removed = run(home, "operator", "remove", "--", laptop)
    assert removed.returncode == 0, removed.stderr
    assert f"removed {laptop} (laptop)" in removed.stdout
    after = {
        c["credentialId"]: c for c in json.loads(run(home, "operator", "list", "--json").stdout)
    }
    assert after[laptop]["status"] == "removed" and after[laptop]["removedAtIso"]
    assert after[key]["status"] == "active"
    events = [r.event for r in read_records(home / "audit.jsonl")]
    assert events.count("operator.enrolled") == 2 and events.count("operator.removed") == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("remove", "bm90LWVucm9sbGVk"), "credential"),  # well formed, never enrolled
        (("remove", "--", "-bm90LWVucm9sbGVk"), "credential"),  # an id that begins with -
        (("remove", "not/base64url"), "ID: is not a credential id"),
        (("remove", ""), "ID: is not a credential id"),
        (("enroll", "--label", ""), "--label"),
        (("enroll", "--label", "two\nlines"), "--label"),
        (("enroll", "--label", "x" * 101), "--label"),
        (("enroll", "--port", "0"), "--port must be 1..65535"),
        (("enroll", "--port", "70000"), "--port must be 1..65535"),
        (("enroll", "--port", "http"), "--port must be an integer"),
        (("enroll", "--timeout", "0"), "--timeout must be 1..3600"),
        (("remove",), "the following arguments are required"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(home: Path, args: tuple[str, ...], says: str) -> None:
    proc = run(home, "operator", *args)
    assert proc.returncode == 2, proc.stderr
    assert says in one_line_error(proc)


def test_removing_twice_is_refused(home: Path) -> None:
    _, laptop = enrolled(home, "laptop")
    assert run(home, "operator", "remove", "--", laptop).returncode == 0
    again = run(home, "operator", "remove", "--", laptop)
    assert again.returncode == 2 and laptop in one_line_error(again)


def test_no_guard_home(tmp_path: Path) -> None:
    for args in (("list",), ("remove", "AAAA")):
        proc = run(tmp_path / "nowhere", "operator", *args)
        assert proc.returncode == 2 and "no guard home" in one_line_error(proc)
    assert not (tmp_path / "nowhere").exists()


def test_a_keyring_that_cannot_be_read_is_exit_6(home: Path) -> None:
    (home / KEYRING_FILE).write_text("{not json")
    proc = run(home, "operator", "list")
    assert proc.returncode == 6 and "keyring" in one_line_error(proc)


# -- enroll ----------------------------------------------------------------------------------


class Enroll:
    """``operator enroll`` running; ``login`` is the address it printed on stderr."""

    def __init__(self, home: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            command(home, "operator", "enroll", *args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env(),
        )
        assert self.proc.stderr is not None
        self.head = [self.proc.stderr.readline() for _ in range(2)]
        self.login = urlsplit(self.head[1].rsplit(" ", 1)[1].strip())
        self.origin = f"http://localhost:{self.login.port}"
        self.conn = http.client.HTTPConnection("127.0.0.1", self.login.port, timeout=10)
        self.cookie = ""

    def request(
        self, method: str, path: str, body: Any = None, **headers: str
    ) -> tuple[int, dict[str, Any]]:
        sent = {"Host": f"localhost:{self.login.port}", "Cookie": self.cookie, **headers}
        data = None if body is None else json.dumps(body)
        if data is not None:
            sent["Content-Type"] = "application/json"
        self.conn.request(method, path, body=data, headers=sent)
        reply = self.conn.getresponse()
        if reply.status == 303:
            self.cookie = str(reply.getheader("Set-Cookie")).split(";")[0]
        raw = reply.read()
        return reply.status, json.loads(raw) if raw else {}

    def ceremony(self, authenticator: SoftAuthenticator) -> dict[str, Any]:
        """Log in, take the options, answer them with ``authenticator``: the page's reply."""
        assert self.request("GET", f"{self.login.path}?{self.login.query}")[0] == 303
        status, given = self.request("GET", "/api/enrol")
        assert status == 200, given
        options = given["options"]
        assert options["rp"]["id"] == "localhost" and given["origin"] == self.origin
        assert options["authenticatorSelection"]["userVerification"] == "required"
        challenge = b64url_decode(options["challenge"], 32)
        assert challenge is not None
        answer = authenticator.register(challenge)
        status, said = self.request(
            "POST", "/api/enrol", answer, Origin=self.origin, **{"X-CSRF-Token": given["csrf"]}
        )
        assert status == 200
        return said

    def finish(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=30)
        self.conn.close()
        return self.proc.returncode, out, "".join(self.head) + err


@pytest.fixture
def enrolling(home: Path) -> Iterator[list[Enroll]]:
    started: list[Enroll] = []
    yield started
    for one in started:
        if one.proc.poll() is None:
            one.proc.kill()
            one.proc.wait()


def test_enroll_over_the_page_prints_the_credential(home: Path, enrolling: list[Enroll]) -> None:
    port = free_port()
    enroll = Enroll(home, "--label", "yubikey", "--port", str(port))
    enrolling.append(enroll)
    assert enroll.login.hostname == "localhost" and enroll.login.port == port
    authenticator = SoftAuthenticator(origin=enroll.origin)
    said = enroll.ceremony(authenticator)
    assert said == {"outcome": "enrolled", "credentialId": authenticator.id, "label": "yubikey"}
    code, out, err = enroll.finish()
    assert code == 0, err
    printed = OperatorCredential.model_validate_json(out)
    assert (printed.credential_id, printed.origin, printed.rp_id, printed.label) == (
        authenticator.id, enroll.origin, "localhost", "yubikey")  # fmt: skip
    assert "token=" not in out  # the login goes to the operator's terminal only
    (listed,) = json.loads(run(home, "operator", "list", "--json").stdout)
    assert listed["credentialId"] == authenticator.id

    # The same authenticator again: refused (already enrolled), one line, exit 2.
    again = Enroll(home, "--port", str(port))
    enrolling.append(again)
    said = again.ceremony(authenticator)
    assert said["outcome"] == "refused" and "already enrolled" in said["reason"]
    code, out, err = again.finish()
    assert code == 2 and out == ""
    assert err.strip().splitlines()[-1].startswith("pi-guard: error: credential: is already")


def test_one_ceremony_per_login(home: Path, enrolling: list[Enroll]) -> None:
    enroll = Enroll(home, "--port", str(free_port()))
    enrolling.append(enroll)
    wrong = SoftAuthenticator(origin="http://localhost:1")  # another origin: refused
    said = enroll.ceremony(wrong)
    assert said["outcome"] == "refused" and "did not verify" in said["reason"]
    code, _, err = enroll.finish()
    assert code == 2 and "enrolment: the authenticator's answer did not verify" in err
    assert json.loads(run(home, "operator", "list", "--json").stdout) == []


def test_enroll_times_out_with_exit_3(home: Path, enrolling: list[Enroll]) -> None:
    enroll = Enroll(home, "--port", str(free_port()), "--timeout", "1")
    enrolling.append(enroll)
    code, out, err = enroll.finish()
    assert code == 3 and out == ""
    assert err.strip().splitlines()[-1] == (
        "pi-guard: not enrolled: no passkey was enrolled within 1 s"
    )


def test_a_port_in_use_is_bad_input(home: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = run(home, "operator", "enroll", "--port", str(taken.getsockname()[1]))
    assert proc.returncode == 2 and "--port: cannot listen" in one_line_error(proc)


def test_approvals_serve_follows_the_enrolled_port(home: Path) -> None:
    port = free_port()
    enrolled(home, "laptop", port)
    serve = subprocess.Popen(
        command(home, "approvals", "serve"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )
    try:
        assert serve.stderr is not None
        assert serve.stderr.readline().strip() == (
            f"operator-guard approval page: http://localhost:{port}/"
        )
    finally:
        serve.kill()
        serve.wait()


def test_enroll_takes_the_configured_approvals_port(home: Path, enrolling: list[Enroll]) -> None:
    """With ``[approvals] port`` set, the session's page is there: the passkey is enrolled for
    that page, not for the default port (whose passkey the page would never use)."""
    port = free_port()
    (home / "operator-guard.toml").write_text(f"[approvals]\npage = true\nport = {port}\n")
    enrolled(home, "old laptop", free_port())  # a passkey elsewhere does not win over it
    enroll = Enroll(home, "--timeout", "1")
    enrolling.append(enroll)
    assert enroll.login.port == port
    assert enroll.head[0].startswith(
        f"operator-guard passkey enrolment for http://localhost:{port}"
    )
    assert enroll.finish()[0] == 3


def test_a_port_a_pi_session_holds_names_the_session(home: Path, tmp_path: Path) -> None:
    """The configured port is taken by a live session's page: enroll says which session."""
    from guard._sidecar.handlers.methods import Sidecar
    from tests.guard.sidecar.test_sidecar_methods import result

    port = free_port()
    (home / "operator-guard.toml").write_text(f"[approvals]\npage = true\nport = {port}\n")
    project = tmp_path / "project"
    project.mkdir()
    sidecar = Sidecar(home)
    try:
        plan = {"cwd": str(project), "sessionId": "sess-1234", "mode": "tui"}
        result(sidecar, "sandbox.plan", plan)
        proc = run(home, "operator", "enroll")
    finally:
        sidecar.close()
    line = one_line_error(proc)
    assert proc.returncode == 2
    assert line.startswith(
        f"pi-guard: error: --port: cannot listen: pi session sess-1234 (pid {os.getpid()}, "
        f"in {project}) holds it"
    )
    assert f"(got {port})" in line
