"""The operator's dialog cannot be spoofed and hides nothing silently (issue 13, item 5).

Every interpolated value is one escaped line (no newline, ESC, bidi override or invisible
character reaches the screen); a long command keeps its head and tail and counts what is
hidden; every distinct target, rule and reason is listed, up to a count.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard._evidence.fingerprint import Fingerprint
from guard._evidence.models import Evaluation
from guard._sandbox.model import SandboxPlan
from guard._sidecar.escape import command_line, is_unsafe, listing, one_line
from guard._sidecar.handlers.methods import serve
from guard._sidecar.text import (
    MAX_TARGETS,
    block_reason_for,
    dialog_for,
    sandbox_block_reason,
    sandbox_line,
    sandbox_notice,
    status_audit_damaged,
    status_home_unusable,
    status_on,
)

FORBIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
BIDI = [chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))]
SPOOF_NAME = "notes.txt\nKind:     local-safe\x1b[8mhidden\x1b[0m\r\u2028Why:      nothing"
LABELS = (
    "Command:  ",
    "Tool:     ",
    "Kind:     ",
    "Path:     ",
    "Scope:    ",
    "Targets:  ",
    "Preview:  ",
    "Payload:  ",
    "Rules:    ",
    "Why:      ",
    "Expiry:   ",
    "Timeout:  ",
    "No is preselected",
)


def assert_safe(text: str) -> None:
    """No character the screen would interpret or not draw; at most one line."""
    for char in text:
        assert unicodedata.category(char) not in FORBIDDEN_CATEGORIES, (char, text)
        assert char == " " or unicodedata.category(char) != "Zs", (char, text)
    assert len(text.splitlines()) <= 1, text


def rpc(method: str, params: Any) -> bytes:
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def evaluate(home: Path, tool_name: str, tool_input: dict[str, Any], cwd: Path) -> Any:
    out = io.BytesIO()
    params = {"toolName": tool_name, "input": tool_input, "cwd": str(cwd)}
    assert serve(io.BytesIO(rpc("evaluate", params)), out, home=home) == 0
    (reply,) = [json.loads(line) for line in out.getvalue().splitlines() if line]
    assert "error" not in reply, reply
    return reply["result"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "guard-home"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def whole(dialog: Any) -> str:
    """What the operator can read: the compact message, then the details one choice away."""
    return f"{dialog['message']}\n{dialog['details']}"


def dialog_lines(message: str) -> list[str]:
    lines = message.split("\n")
    for line in lines:
        assert line.startswith(LABELS), line
        assert_safe(line)
    return lines


# -- the escaping function ----------------------------------------------------------------------


@settings(max_examples=400)
@given(st.text())
def test_one_line_never_lets_an_unsafe_character_or_a_line_break_through(text: str) -> None:
    assert_safe(one_line(text))
    assert_safe(one_line(text, limit=None))
    assert_safe(one_line(text, limit=8))


@settings(max_examples=300)
@given(st.text())
def test_a_command_is_one_safe_line_too(text: str) -> None:
    assert_safe(command_line(text))
    assert_safe(command_line(text, limit=None))


@given(st.lists(st.text(), max_size=30))
def test_a_listing_is_one_safe_line_and_counts_what_it_leaves_out(items: list[str]) -> None:
    shown = listing(items, max_items=5)
    assert_safe(shown)
    more = len(dict.fromkeys(items)) - 5
    if more > 0:
        assert shown.endswith(f"… and {more} more")
    else:
        assert "more" not in shown or any("more" in i for i in items)


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\n", "\\n"),
        ("\r", "\\r"),
        ("\t", "\\t"),
        ("\x1b", "\\x1b"),
        ("\x00", "\\x00"),
        ("\x7f", "\\x7f"),
        ("\x9b", "\\x9b"),  # C1 CSI
        ("\u200b", "\\u200b"),  # zero-width space
        ("\u200d", "\\u200d"),
        ("\ufeff", "\\ufeff"),
        ("\u00ad", "\\xad"),  # soft hyphen
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
        ("\u00a0", "\\xa0"),  # a space that is not a space
        ("\u3164", "\\u3164"),  # Hangul filler: a letter that draws nothing
        ("\U000e0041", "\\U000e0041"),  # tag character
        *((c, f"\\u{ord(c):04x}") for c in BIDI),
    ],
)
def test_each_unsafe_class_is_shown_escaped(char: str, shown: str) -> None:
    assert is_unsafe(char)
    assert one_line(f"a{char}b") == f"a{shown}b"


def test_ordinary_text_is_shown_as_it_is() -> None:
    text = "rm -rf ./build/ünïcode-名前 && echo 'a \\ b' # ok"
    assert one_line(text) == text


def test_a_long_value_keeps_head_and_tail_and_counts_the_hidden_characters() -> None:
    text = "rm -rf build && " + "x" * 500 + " && git push --force origin main"
    shown = one_line(text, limit=120)
    assert shown.startswith("rm -rf build && x")
    assert shown.endswith("&& git push --force origin main")
    hidden = int(re.search(r"\[\+(\d+) chars\]", shown).group(1))  # type: ignore[union-attr]
    head, tail = shown.split(f" … [+{hidden} chars] … ")
    assert len(head) + hidden + len(tail) == len(text)
    assert len(shown) <= 120


def test_the_cut_never_splits_an_escape_and_counts_characters_not_escapes() -> None:
    text = "\x1b" * 100
    shown = one_line(text, limit=40)
    head, rest = shown.split(" … [+")
    hidden, tail = rest.split(" chars] … ")
    assert head == "\\x1b" * (len(head) // 4)
    assert tail == "\\x1b" * (len(tail) // 4)
    assert len(head) // 4 + int(hidden) + len(tail) // 4 == 100


def test_a_command_is_redacted_and_its_newlines_stay_visible() -> None:
    shown = command_line("API_KEY=s3cr3tvalue\nrm -rf ~/x && echo hi")
    assert "s3cr3tvalue" not in shown
    assert shown.endswith("\\nrm -rf ~/x && echo hi")


def test_a_secret_in_the_hidden_middle_or_at_the_cut_stays_redacted() -> None:
    command = "echo " + "a" * 100 + " API_KEY=s3cr3tvalue12345 " + "b" * 100
    for limit in range(20, 300, 7):
        assert "s3cr3t" not in command_line(command, limit)


# -- the dialog, built from any evaluation --------------------------------------------------


texts = st.text(max_size=300)


@settings(max_examples=150)
@given(
    tool=st.text(min_size=1, max_size=80),
    path=texts,
    scope=texts,
    targets=st.lists(texts, max_size=30),
    reasons=st.lists(texts, max_size=30),
    rule_ids=st.lists(texts, max_size=10),
    preview=texts,
    command=texts,
    operator_reason=texts,
)
def test_no_field_can_add_a_dialog_line_or_an_unsafe_character(
    tool: str,
    path: str,
    scope: str,
    targets: list[str],
    reasons: list[str],
    rule_ids: list[str],
    preview: str,
    command: str,
    operator_reason: str,
) -> None:
    fp = Fingerprint.model_construct(
        action_kind="protected",
        tool_name="bash",
        path=path or None,
        scope=scope or None,
        payload_hash="sha256:" + "0" * 64,
    )
    evaluation = Evaluation(
        verdict="confirm",
        action_kind="protected",
        requires_confirmation=True,
        fingerprint=fp,
        reasons=tuple(reasons),
        rule_ids=tuple(rule_ids),
        targets=tuple(targets),
        preview=preview,
        summary="s",
    )
    dialog = dialog_for(
        evaluation, tool, ttl_seconds=30, confirm_timeout_ms=60_000, tool_input={"command": command}
    )
    for part in (dialog.message, dialog.details):
        lines = dialog_lines(part)
        labels = [next(label for label in LABELS if line.startswith(label)) for line in lines]
        assert len(labels) == len(set(labels)), lines  # each field once: none forged
    choices = dialog.choices
    texts = (choices.no, choices.no_with_reason, choices.stop, choices.yes, choices.details)
    for text in (dialog.title, dialog.reason_title, *texts, *choices.grants):
        assert_safe(text)
    assert len(dialog.message) < 12_000  # bounded, whatever the input
    assert len(dialog.details) < 12_000
    for reason in ("declined", "timeout", "no-ui", "blocked-by-policy"):
        assert_safe(
            block_reason_for(
                reason,  # type: ignore[arg-type]
                evaluation,
                tool,
                operator_reason=operator_reason,
                tool_input={"command": command},
            )
        )


@given(message=texts, reason=texts)
def test_footer_and_sandbox_texts_are_one_safe_line(message: str, reason: str) -> None:
    plans = [
        SandboxPlan.model_construct(state=s, reason=reason, message=message, cwd="/w")
        for s in ("sandboxed", "unsandboxed", "unavailable")
    ]
    for plan in plans:
        for text in (sandbox_notice(plan), sandbox_block_reason(plan), sandbox_line(plan)):
            if text is not None:
                assert_safe(text)
    assert_safe(status_home_unusable(message, reason))
    assert_safe(status_audit_damaged(reason))
    assert_safe(status_on(1, message))


# -- regressions through the sidecar --------------------------------------------------------


def test_a_file_name_cannot_forge_a_kind_line_or_hide_text(home: Path, project: Path) -> None:
    name = ".env" + SPOOF_NAME
    result = evaluate(home, "write", {"path": name, "content": "x"}, project)
    assert result["action"] == "confirm"
    lines = whole(result["dialog"]).split("\n")
    for part in ("message", "details"):
        dialog_lines(result["dialog"][part])
    kinds = [line for line in lines if line.startswith("Kind:")]
    assert kinds == ["Kind:     protected"]
    paths = [line for line in lines if line.startswith("Path:")]
    assert len(paths) == 2  # on screen (shortened) and whole in the details
    path = paths[1]
    assert "\\nKind:     local-safe\\x1b[8mhidden\\x1b[0m\\r\\u2028Why:" in path
    assert len([line for line in lines if line.startswith("Why:")]) == 2  # on screen, in details


def test_a_bidi_override_in_a_file_name_is_shown_escaped(home: Path, project: Path) -> None:
    # "evil\u202Egnp.sh" reads "evilhs.png" on screen when the override is interpreted.
    result = evaluate(home, "bash", {"command": "rm -f 'evil\u202egnp.sh'"}, project)
    message = whole(result["dialog"])
    assert "\u202e" not in message
    assert "evil\\u202egnp.sh" in message
    dialog_lines(message)


def test_a_long_command_names_the_force_push_past_the_old_cut(home: Path, project: Path) -> None:
    command = "rm -rf build && echo " + "x" * 450 + " && git push --force origin main"
    assert len(command) > 500
    result = evaluate(home, "bash", {"command": command}, project)
    lines = dialog_lines(result["dialog"]["details"])
    (preview,) = [line for line in lines if line.startswith("Preview:")]
    assert preview.startswith("Preview:  rm -rf build && echo x")
    assert preview.endswith("&& git push --force origin main")
    assert re.search(r" … \[\+\d+ chars\] … ", preview)
    (rules,) = [line for line in lines if line.startswith("Rules:")]
    assert "builtin.git-push-force" in rules
    (why,) = [line for line in lines if line.startswith("Why:")]
    assert "force push" in why


def test_a_force_push_in_the_hidden_middle_is_still_named(home: Path, project: Path) -> None:
    command = "echo " + "a" * 300 + " && git push --force origin main && echo " + "b" * 300
    result = evaluate(home, "bash", {"command": command}, project)
    message = whole(result["dialog"])
    assert "git push --force origin main" not in message  # in the hidden middle
    assert "builtin.git-push-force" in message
    assert "force push" in message


def test_many_targets_are_listed_up_to_a_count(home: Path, project: Path) -> None:
    names = [f"file-{i:03d}" for i in range(40)]
    result = evaluate(home, "bash", {"command": "rm -rf " + " ".join(names)}, project)
    compact = dialog_lines(result["dialog"]["message"])
    (shown,) = [line for line in compact if line.startswith("Targets:")]
    assert shown.endswith(f"… and {40 - 2} more")  # two on screen, every one in the details
    lines = dialog_lines(result["dialog"]["details"])
    (targets,) = [line for line in lines if line.startswith("Targets:")]
    for name in names[:MAX_TARGETS]:
        assert f"{project}/{name}" in targets
    assert targets.endswith(f"… and {40 - MAX_TARGETS} more")


def test_every_distinct_reason_is_listed(home: Path, project: Path) -> None:
    command = "rm -rf a && git reset --hard && git push --force origin main && git clean -fd"
    result = evaluate(home, "bash", {"command": command}, project)
    message = whole(result["dialog"])
    for rule_id in result["evaluation"]["ruleIds"]:
        assert rule_id in message
    for reason in result["evaluation"]["reasons"]:
        assert one_line(reason, 240) in message


def test_the_guides_compact_dialog_is_what_the_sidecar_shows(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/operator.md, "What the operator sees": the first example, byte for
    byte (the operator's home, the clock's time and the arrow aside)."""
    from guard._sidecar.handlers.methods import Sidecar
    from tests.guard.sidecar.test_sidecar_methods import result

    # A short home, as the guide's: a long one is shortened on screen (head and tail kept).
    user = Path(tempfile.mkdtemp(prefix="u", dir="/tmp")).resolve()
    request.addfinalizer(lambda: shutil.rmtree(user, ignore_errors=True))
    monkeypatch.setenv("HOME", str(user))
    project = user / "project"
    project.mkdir()
    (project / "notes-1.txt").write_text("draft")
    server = Sidecar(user / "guard-home")
    try:
        result(server, "sandbox.plan", {"cwd": str(project), "sessionId": "s", "mode": "tui"})
        params = {"toolName": "bash", "input": {"command": "rm -f notes-1.txt"},
                  "cwd": str(project), "toolCallId": "c1"}  # fmt: skip
        dialog = result(server, "evaluate", params)["dialog"]
    finally:
        server.close()
    choices = dialog["choices"]
    options = [choices[k] for k in ("no", "noWithReason", "stop", "yes")]
    options += [*choices["grants"], choices["details"]]
    shown = "\n".join([dialog["title"], dialog["message"], *(f"  {o}" for o in options)])
    shown = re.sub(r"until \d\d:\d\d", "until 14:32", shown.replace(str(user), "/home/me"))
    page = (Path(__file__).parents[3] / "docs" / "operator.md").read_text()
    example = page.split("## What the operator sees", 1)[1].split("```\n", 2)[1]
    assert shown + "\n" == example.replace("→ No", "  No")


@pytest.mark.parametrize(
    "command",
    [
        "sed -i 's/a \\* b/a * b  # product/' calc.c",
        "printf '%s    %s\\n' a b > table.txt",
        "echo 'two  spaces' >  out.txt",
    ],
)
def test_the_dialog_shows_the_command_exactly_as_typed(command: str) -> None:
    """Runs of spaces inside quotes are part of what the command does: never collapsed
    (unless a secret had to be redacted from that stretch)."""
    from guard._sidecar.escape import command_line

    assert command_line(command, None) == command
