"""curl and wget in the bash analysis: when the names written or the options come from elsewhere.

``curl -J``/``--remote-header-name`` takes the file name from the server, ``-K``/``--config``
reads options from a file; wget's recursive, mirror, input-file, ``-e`` and server-named
downloads do the same. Those ask (``opaque-write``); ordinary downloads do not.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "curl u",
        "curl -s u",
        "curl -sSLo out u",
        "curl -j u",  # --junk-session-cookies, not -J
        "curl -k u",  # --insecure, not -K
        "curl https://example.com/KEYS",  # a J or K outside an option is nothing
        "curl --header=X-Api-Key:1 u",  # nor inside a long option
        "wget u",
        "wget -q -O out u",
        "wget -nv u",
    ],
)
def test_plain_downloads_have_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "option"),
    [
        ("curl -J -O u", "-J"),
        ("curl -OJ u", "-OJ"),
        ("curl --remote-header-name -O u", "--remote-header-name"),
        ("curl -K f", "-K"),
        ("curl -sK cfg u", "-sK"),
        ("curl --config f", "--config"),
        ("curl -s -J -O u", "-J"),  # the first risky option is named
    ],
)
def test_curl_names_or_options_from_elsewhere_ask(command: str, option: str) -> None:
    assert findings(command) == [
        ("opaque-write", f"curl {option}: names or options come from elsewhere")
    ]


@pytest.mark.parametrize(
    "option",
    [
        "-r",
        "--recursive",
        "-m",
        "--mirror",
        "-i",
        "--input-file",
        "-e",
        "--execute",
        "--content-disposition",
        "--trust-server-names",
    ],
)
def test_wget_names_or_options_from_elsewhere_ask(option: str) -> None:
    assert findings(f"wget -nv {option} x") == [
        ("opaque-write", f"wget {option}: names or options come from elsewhere")
    ]
