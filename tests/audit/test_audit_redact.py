"""Previews: short, one line, obvious secrets gone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import UsageError
from audit.log import REDACTED, redact_preview


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("API_KEY=sk-live-0123456789abcdef make deploy", "sk-live-0123456789abcdef"),
        ("export GITHUB_TOKEN='ghp_aaaaaaaaaaaaaaaaaaaaaaaa'", "ghp_aaaaaaaaaaaaaaaaaaaaaaaa"),
        ('curl -H "Authorization: Bearer abc.def.ghi" https://x', "abc.def.ghi"),
        ("curl -H 'authorization: Basic dXNlcjpwYXNz' x", "dXNlcjpwYXNz"),
        ("mysql --password=hunter2hunter2 -u root", "hunter2hunter2"),
        ("login --token s3cr3t-value", "s3cr3t-value"),
        ("git clone https://user:p4ssw0rd@example.com/r.git", "p4ssw0rd"),
        ('echo {"client_secret": "abc123xyz"}', "abc123xyz"),
        ("X-Api-Key: 9f8e7d6c5b4a", "9f8e7d6c5b4a"),
        ("aws s3 ls # AKIAABCDEFGHIJKLMNOP", "AKIAABCDEFGHIJKLMNOP"),
        ("use sk-ant-api03-abcdefghijklmnopqrst now", "sk-ant-api03-abcdefghijklmnopqrst"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig-nature_x", "eyJzdWIiOiIxMjM0In0"),
        ("token xoxb-1234567890-abcdef", "xoxb-1234567890-abcdef"),
        (
            "cat <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n"
            "-----END OPENSSH PRIVATE KEY-----\nEOF",
            "b3BlbnNzaC1rZXk",
        ),
    ],
)
def test_obvious_secrets_are_redacted(text: str, secret: str) -> None:
    out = redact_preview(text, limit=200)
    assert secret not in out
    assert REDACTED in out or "[REDACTED PRIVATE KEY]" in out


def test_ordinary_commands_pass_unchanged() -> None:
    assert redact_preview("rm -rf build && ls -la") == "rm -rf build && ls -la"


def test_one_line_and_short() -> None:
    out = redact_preview("echo a\n\techo b\r\n\x1b[31mred\u202e", limit=120)
    assert out == "echo a echo b [31mred"
    long = redact_preview("x" * 500, limit=40)
    assert len(long) == 40
    assert long.endswith("…")


def test_secret_cut_by_the_limit_is_still_hidden() -> None:
    text = "deploy " + "--token=" + "a" * 200
    out = redact_preview(text, limit=30)
    assert "aaaa" not in out
    pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "Q" * 9000
    assert "QQQQ" not in redact_preview(pem, limit=60)


def test_bad_limit_is_refused() -> None:
    with pytest.raises(UsageError):
        redact_preview("x", limit=0)


names = st.sampled_from(["API_KEY", "token", "DB_PASSWORD", "secret", "auth_token", "PGPASSWORD"])
secrets = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=12, max_size=40)
fillers = st.text(alphabet="ABC XYZ/-.", max_size=30)


@settings(max_examples=150, deadline=None)
@given(name=names, secret=secrets, before=fillers, after=fillers, sep=st.sampled_from(["=", ": "]))
def test_assigned_secrets_never_survive(
    name: str, secret: str, before: str, after: str, sep: str
) -> None:
    out = redact_preview(f"{before} {name}{sep}{secret} {after}", limit=120)
    assert secret not in out
    assert len(out) <= 120


def test_exact_output() -> None:
    text = "curl -H 'Authorization: Bearer abc.def' https://x && API_KEY=s3cr3t make"
    expected = "curl -H 'Authorization: [REDACTED]' https://x && API_KEY=[REDACTED] make"
    assert redact_preview(text) == expected


pieces = st.sampled_from(
    [
        "API_KEY=abc123",
        "Authorization: Bearer xyz",
        "--token t0k3n",
        '"password": "pw"',
        "https://u:p@h/x",
        "ghp_" + "a" * 24,
        "rm -rf build",
        " ",
        "\n",
        "[REDACTED]",
        "=",
        ":",
        "-----BEGIN RSA PRIVATE KEY-----\nabc",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(pieces, max_size=10), st.integers(min_value=5, max_value=200))
def test_redaction_is_idempotent(parts: list[str], limit: int) -> None:
    # The appender redacts previews the guard already redacted: that must change nothing.
    once = redact_preview("".join(parts), limit=limit)
    assert len(once) <= limit
    assert redact_preview(once, limit=limit) == once
