"""``pi-guard approvals list|show|approve|decline`` against real sidecar sockets.

Each test serves real approval brokers on real Unix sockets (``LocalApprovals``) in sidecar
directories of a temporary guard home, asks questions the way a sidecar does, and runs
``pi-guard`` on the same home (in process, :func:`tests.cli_runner.invoke`; ``approvals
serve`` as a process of its own, stopped with SIGINT): what it lists and shows, what an
answer does to the broker, every refusal as one line and its exit code, dead sidecar
directories skipped, and a home whose socket path is longer than a Unix socket address
allows.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from guard._approvals.broker import ApprovalBroker, question_digest
from guard._approvals.local import PAGE_KEY_NAME, SOCKET_NAME, LocalApprovals, page_key
from guard._approvals.model import AnswerRequest, Pending
from guard._hermetic import system_program
from tests.cli_runner import Result, invoke

pytestmark = pytest.mark.integration

TITLE = "operator-guard: allow destructive bash?"


def run(home: Path, *args: str) -> Result:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PI_OPERATOR_GUARD_DEBUG", "PI_OPERATOR_GUARD_LOG_LEVEL")
    }
    return invoke("approvals", *args, home=home, env=env)


def one_line_error(proc: Result) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@dataclass
class Side:
    """One sidecar's approval port: its directory, broker and listener."""

    directory: Path
    broker: ApprovalBroker
    local: LocalApprovals

    @property
    def name(self) -> str:
        return self.directory.name

    def ask(
        self,
        command: str = "rm -f notes-1.txt",
        *,
        session_id: str | None = "sess-a",
        call_id: str = "call-1",
        timeout_ms: int = 60000,
    ) -> Pending:
        message = f"Command:  {command}\nTargets:  /home/me/project/notes-1.txt"
        details = f"Tool:     bash\nPreview:  {command}\nTimeout:  no answer counts as No"
        fingerprint = {"toolName": "bash", "input": {"command": command}, "toolCallId": call_id}
        return self.broker.ask(
            kind="call",
            title=TITLE,
            message=message,
            details=details,
            digest=question_digest(TITLE, message, details, fingerprint),
            tool_name="bash",
            timeout_ms=timeout_ms,
            tool_call_id=call_id,
            session_id=session_id,
        )

    def answer_of(self, approval_id: str) -> Any:
        asked = self.broker.result(approval_id)
        assert asked is not None
        return asked.answer


class Home:
    """A guard home with the sidecar ports a test starts in it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.sides: list[Side] = []

    def sidecar(self, suffix: str = "abcd1234") -> Side:
        directory = self.path / "sessions" / f"s{os.getpid()}-{suffix}"
        broker = ApprovalBroker()
        local = LocalApprovals(directory, broker)
        local.start()
        side = Side(directory, broker, local)
        self.sides.append(side)
        return side

    def close(self) -> None:
        for side in self.sides:
            side.local.close()


@contextlib.contextmanager
def make_home(path: Path) -> Iterator[Home]:
    path.mkdir(mode=0o700, parents=True)
    home = Home(path)
    try:
        yield home
    finally:
        home.close()


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Home]:
    with make_home(tmp_path / "home") as made:
        yield made


def listed(home: Home) -> list[dict[str, Any]]:
    proc = run(home.path, "list", "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    questions: list[dict[str, Any]] = json.loads(proc.stdout)
    return questions


def test_list_shows_every_pending_question_as_text_and_json(home: Home) -> None:
    side = home.sidecar()
    first = side.ask()
    second = side.ask("rm -rf build", session_id=None, call_id="call-2")

    assert listed(home) == [
        {**first.model_dump(mode="json"), "sidecar": side.name},
        {**second.model_dump(mode="json"), "sidecar": side.name},
    ]

    text = run(home.path, "list")
    assert text.returncode == 0 and text.stderr == ""
    blocks = text.stdout.split("\n\n")
    assert len(blocks) == 2
    lines = blocks[0].splitlines()
    assert lines[:3] == [
        f"id:       {first.id}",
        f"session:  sess-a (sidecar {side.name})",
        "tool:     bash",
    ]
    assert lines[3:6] == [
        f"  {TITLE}",
        "  Command:  rm -f notes-1.txt",
        "  Targets:  /home/me/project/notes-1.txt",
    ]
    assert lines[6].startswith(f"deadline: {first.deadline_iso} (")
    assert lines[6].endswith(" s left)")
    assert lines[7] == f"digest:   {first.digest}"
    assert blocks[1].splitlines()[1] == f"session:  - (sidecar {side.name})"
    assert "  Command:  rm -rf build" in blocks[1].splitlines()


def test_show_gives_one_question_in_full(home: Home) -> None:
    side = home.sidecar()
    side.ask("rm -f other.txt", call_id="call-0")
    asked = side.ask()

    proc = run(home.path, "show", asked.id)
    assert proc.returncode == 0 and proc.stderr == ""
    out = proc.stdout.splitlines()
    assert f"id:        {asked.id}" in out
    assert f"sidecar:   {side.name}" in out
    assert "call:      call-1" in out
    assert f"digest:    {asked.digest}" in out
    assert out[-7:] == [
        TITLE,
        "Command:  rm -f notes-1.txt",
        "Targets:  /home/me/project/notes-1.txt",
        "",
        "Tool:     bash",
        "Preview:  rm -f notes-1.txt",
        "Timeout:  no answer counts as No",
    ]

    as_json = run(home.path, "show", asked.id, "--json")
    assert as_json.returncode == 0
    assert json.loads(as_json.stdout) == {**asked.model_dump(mode="json"), "sidecar": side.name}

    missing = run(home.path, "show", "apr_" + "x" * 20)
    assert missing.returncode == 2 and missing.stdout == ""
    assert "no live sidecar of this home has this question pending" in one_line_error(missing)


def test_approve_is_accepted_once_and_a_second_answer_already_answered(home: Home) -> None:
    side = home.sidecar()
    asked = side.ask()

    proc = run(home.path, "approve", asked.id)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    assert proc.stdout.splitlines() == [
        f"question: {asked.id} (session sess-a, tool bash)",
        f"title:    {TITLE}",
        f"digest:   {asked.digest}",
        f"accepted: approved (the first answer to {asked.id})",
    ]
    answer = side.answer_of(asked.id)
    assert (answer.decision, answer.approver, answer.reason) == ("yes", "cli", None)
    assert listed(home) == []

    again = run(home.path, "approve", asked.id)
    assert again.returncode == 3
    assert one_line_error(again).startswith("pi-guard: not accepted: already-answered: ")
    assert side.answer_of(asked.id).at_iso == answer.at_iso  # the first answer stands


def test_the_first_answer_from_any_screen_wins(home: Home) -> None:
    side = home.sidecar()
    asked = side.ask()
    request = AnswerRequest(id=asked.id, digest=asked.digest, decision="no")
    assert side.broker.answer(request, "pi-dialog") == "accepted"

    proc = run(home.path, "approve", asked.id)
    assert proc.returncode == 3
    assert "already-answered: another screen answered this question first" in one_line_error(proc)
    assert side.answer_of(asked.id).approver == "pi-dialog"
    assert side.answer_of(asked.id).decision == "no"


def test_decline_with_a_reason_reaches_the_broker(home: Home) -> None:
    side = home.sidecar()
    asked = side.ask()

    too_long = run(home.path, "decline", asked.id, "--reason", "x" * 4097)
    assert too_long.returncode == 2
    assert one_line_error(too_long) == "pi-guard: error: --reason: must be at most 4096 characters"
    assert side.answer_of(asked.id) is None

    proc = run(home.path, "decline", asked.id, "--reason", "use git clean instead")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == f"accepted: declined (the first answer to {asked.id})"
    answer = side.answer_of(asked.id)
    assert (answer.decision, answer.approver) == ("no", "cli")
    assert answer.reason == "use git clean instead"


def test_a_wrong_digest_is_stale_and_answers_nothing(home: Home) -> None:
    side = home.sidecar()
    asked = side.ask()
    other = side.ask("rm -rf /home/me/project", call_id="call-2")

    proc = run(home.path, "approve", asked.id, "--digest", other.digest)
    assert proc.returncode == 3
    assert proc.stdout.splitlines()[2] == f"digest:   {other.digest}"
    assert one_line_error(proc).startswith("pi-guard: not accepted: stale: ")
    assert side.answer_of(asked.id) is None and side.answer_of(other.id) is None
    assert [q["id"] for q in listed(home)] == [asked.id, other.id]

    malformed = run(home.path, "approve", asked.id, "--digest", "sha256:abc")
    assert malformed.returncode == 2
    assert "--digest: is not a digest" in one_line_error(malformed)

    # The digest copied from `show` is the question's own: accepted.
    right = run(home.path, "approve", asked.id, "--digest", asked.digest)
    assert right.returncode == 0, right.stderr
    assert side.answer_of(asked.id).decision == "yes"


def test_an_unknown_or_malformed_id_is_not_found(home: Home) -> None:
    side = home.sidecar()
    side.ask()

    unknown = run(home.path, "approve", "apr_" + "A" * 20)
    assert (unknown.returncode, unknown.stdout) == (2, "")
    assert "no live sidecar of this home knows this question" in one_line_error(unknown)

    bad = run(home.path, "decline", "grant_nope")
    assert bad.returncode == 2
    assert "ID: is not an approval id" in one_line_error(bad)


def test_an_expired_question_is_not_listed_and_cannot_be_answered(home: Home) -> None:
    side = home.sidecar()
    late = side.ask(timeout_ms=200)
    time.sleep(0.4)

    assert listed(home) == []
    proc = run(home.path, "approve", late.id)
    assert proc.returncode == 3
    assert one_line_error(proc).startswith("pi-guard: not accepted: expired: ")
    assert side.answer_of(late.id) is None


def test_two_sidecars_answered_out_of_order(home: Home) -> None:
    a = home.sidecar("abcd1234")
    b = home.sidecar("ef567890")
    first = a.ask(session_id="sess-a")
    second = b.ask("rm -f b.log", session_id="sess-b", call_id="b1")

    assert [(q["id"], q["sidecar"]) for q in listed(home)] == [
        (first.id, a.name),
        (second.id, b.name),
    ]
    assert run(home.path, "approve", second.id).returncode == 0
    assert [q["id"] for q in listed(home)] == [first.id]
    assert run(home.path, "decline", first.id, "--reason", "not now").returncode == 0
    assert b.answer_of(second.id).decision == "yes"
    assert (a.answer_of(first.id).decision, a.answer_of(first.id).reason) == ("no", "not now")
    assert a.broker.result(second.id) is None and b.broker.result(first.id) is None


def test_dead_sidecar_directories_are_skipped_without_a_word(home: Home) -> None:
    sessions = home.path / "sessions"
    (sessions / "s1-00000000").mkdir(parents=True)  # its sidecar ended before the port
    stale = sessions / "s2-11111111"
    stale.mkdir()
    fd = os.open(stale, os.O_RDONLY | os.O_DIRECTORY)
    try:  # a socket file nobody listens on any more (through the fd: the path may be long)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:
            gone.bind(f"/proc/self/fd/{fd}/{SOCKET_NAME}")
    finally:
        os.close(fd)
    assert (stale / SOCKET_NAME).exists()
    (sessions / "stray-file").write_text("not a sidecar\n")
    side = home.sidecar()
    asked = side.ask()

    assert [q["id"] for q in listed(home)] == [asked.id]
    proc = run(home.path, "approve", asked.id)
    assert (proc.returncode, proc.stderr) == (0, "")

    unknown = run(home.path, "approve", "apr_" + "B" * 20)
    assert unknown.returncode == 2
    assert "no live sidecar of this home knows this question" in one_line_error(unknown)


def test_a_home_without_sidecars_lists_nothing_and_a_missing_home_is_refused(
    tmp_path: Path, home: Home
) -> None:
    text = run(home.path, "list")
    assert (text.returncode, text.stdout, text.stderr) == (0, "(no pending questions)\n", "")
    assert listed(home) == []

    missing = tmp_path / "nowhere"
    for args in (["list"], ["show", "apr_" + "C" * 20], ["approve", "apr_" + "C" * 20]):
        proc = run(missing, *args)
        assert (proc.returncode, proc.stdout) == (2, "")
        assert "--home: no guard home here" in one_line_error(proc)
    assert not missing.exists()


def test_a_home_longer_than_a_socket_address_still_works(tmp_path: Path) -> None:
    with make_home(tmp_path / ("a-long-home-" + "x" * 100) / "operator-guard") as long_home:
        side = long_home.sidecar()
        assert len(os.fsencode(side.local.path)) > 108
        asked = side.ask()

        assert [q["id"] for q in listed(long_home)] == [asked.id]
        proc = run(long_home.path, "approve", asked.id)
        assert proc.returncode == 0, proc.stderr
        assert side.answer_of(asked.id).approver == "cli"


def test_serve_prints_a_one_time_login_to_stderr_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    serve = subprocess.Popen(
        [sys.executable, "-m", "guard", "--home", str(home), "approvals", "serve"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert serve.stderr is not None
        lines = [serve.stderr.readline() for _ in range(2)]
        login = lines[1].rsplit(" ", 1)[1].strip()
        assert login.startswith("http://localhost:") and "/login?token=" in login
        url = urllib.parse.urlsplit(login)
        conn = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
        conn.request("GET", f"{url.path}?{url.query}")
        first = conn.getresponse()
        first.read()
        assert first.status == 303 and "HttpOnly" in first.getheader("Set-Cookie", "")
        conn.request("GET", f"{url.path}?{url.query}")
        again = conn.getresponse()
        again.read()
        assert again.status == 403  # one time
        conn.close()
    finally:
        serve.send_signal(signal.SIGINT)
        out, _ = serve.communicate(timeout=60)
    assert serve.returncode == 0
    assert out == ""  # the token never reaches stdout
    refused = [json.loads(line) for line in (home / "audit.jsonl").read_text().splitlines()]
    assert [r["data"]["reason"] for r in refused if r["event"] == "approval.refused"] == [
        "bad-login"
    ]


def test_a_peer_in_another_pid_namespace_is_refused_whatever_it_asks(
    home: Home, tmp_path: Path
) -> None:
    """A sandboxed command (bubblewrap always unshares the pid namespace) that reached a
    sidecar's socket, of its own session or another, lists nothing and answers nothing."""
    refused: list[tuple[str, str]] = []
    side = home.sidecar()
    side.local._on_refused = lambda why, detail, who: refused.append((why, who))
    approval = side.ask()
    client = tmp_path / "client.py"
    client.write_text(
        "import json, socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\n"
        "s.sendall((sys.argv[2] + '\\n').encode())\n"
        "print(s.makefile().readline(), end='')\n"
    )
    sock = SOCKET_NAME  # from its directory: a socket path has at most 107 bytes
    answer = {"op": "answer", "id": approval.id, "digest": approval.digest, "decision": "yes",
              "approver": "web"}  # fmt: skip
    unshare = system_program("unshare")
    for request in ({"op": "list"}, answer):
        for flags in (["--pid", "--fork"], ["--user", "--map-root-user", "--pid", "--fork"]):
            done = subprocess.run(
                [unshare, *flags, sys.executable, str(client), sock, json.dumps(request)],
                capture_output=True, text=True, timeout=30, check=False, cwd=side.directory,
            )  # fmt: skip
            assert done.stdout, (flags, done.stderr)
            assert json.loads(done.stdout) == {"error": "refused"}, (flags, done.stderr)
    assert [p.id for p in side.broker.pending()] == [approval.id]  # still open, unanswered
    assert {why for why, _ in refused} == {"sandboxed-peer"}
    # the same client outside a namespace of its own is the operator's terminal
    same = subprocess.run(
        [sys.executable, str(client), sock, json.dumps({"op": "list"})],
        capture_output=True, text=True, timeout=30, check=False, cwd=side.directory,
    )  # fmt: skip
    assert [p["id"] for p in json.loads(same.stdout)["pending"]] == [approval.id]


def test_the_approver_comes_from_how_the_answer_arrived(home: Home, tmp_path: Path) -> None:
    """A client that says ``"approver": "web"`` is not the page: the answer counts as the
    terminal's (``cli``) unless it shows the key the sidecar wrote beside its socket (in the
    guard home, which no sandbox sees), as the page does when it relays an answer."""
    side = home.sidecar()
    client = tmp_path / "client.py"
    client.write_text(
        "import json, socket, sys\n"
        "s = socket.socket(socket.AF_UNIX)\n"
        "s.connect(sys.argv[1])\n"
        "s.sendall((sys.argv[2] + '\\n').encode())\n"
        "print(s.makefile().readline(), end='')\n"
    )
    key = page_key(side.directory)
    assert key is not None and (side.directory / PAGE_KEY_NAME).stat().st_mode & 0o077 == 0
    for shown, approver in ((None, "cli"), ("guess", "cli"), ("", "cli"), (key, "web")):
        approval = side.ask()
        answer = {"op": "answer", "id": approval.id, "digest": approval.digest,
                  "decision": "yes", "approver": "web", "pageKey": shown}  # fmt: skip
        done = subprocess.run(
            [sys.executable, str(client), SOCKET_NAME, json.dumps(answer)],
            capture_output=True, text=True, timeout=30, check=False, cwd=side.directory,
        )  # fmt: skip
        assert json.loads(done.stdout) == {"outcome": "accepted"}, done.stderr
        assert side.answer_of(approval.id).approver == approver, shown
    side.local.close()
    assert page_key(side.directory) is None  # gone with the listener


def test_a_peer_of_another_user_is_refused_even_where_it_can_connect() -> None:
    """The socket's own modes keep other users out; the peer's uid is checked all the same
    (a home on a shared or mis-moded directory). Runs a client as ``nobody``."""
    if os.getuid() != 0:
        pytest.skip("running a client as another user needs root (CI runs as root)")
    top = Path(tempfile.mkdtemp(prefix="pi-guard-uid-"))
    refused: list[str] = []
    try:
        with make_home(top / "home") as home:
            side = home.sidecar()
            side.local._on_refused = lambda why, detail, who: refused.append(why)
            side.ask()
            for directory in (top, home.path, home.path / "sessions", side.directory):
                directory.chmod(0o711)
            side.local.path.chmod(0o666)
            client = (
                "import socket, sys\n"
                "s = socket.socket(socket.AF_UNIX)\n"
                "s.connect(sys.argv[1])\n"
                's.sendall(b\'{"op": "list"}\\n\')\n'
                "print(s.makefile().readline(), end='')\n"
            )
            done = subprocess.run(
                [system_program("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups",
                 system_program("python3"), "-I", "-c", client, SOCKET_NAME],
                capture_output=True, text=True, timeout=30, check=False, cwd=side.directory,
            )  # fmt: skip
    finally:
        shutil.rmtree(top, ignore_errors=True)
    assert done.stdout, done.stderr
    assert json.loads(done.stdout) == {"error": "refused"}, done.stderr
    assert refused == ["other-user"]
