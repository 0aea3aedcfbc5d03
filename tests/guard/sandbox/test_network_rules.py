"""Which host and address the allowlist proxy lets through: entry matching and the address
check that keeps the host's own services and the LAN out of reach."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from guard._policy.settings.models import NetworkSettings, SandboxSettings
from guard._sandbox import effective_settings
from guard._sandbox.network import address_refusal, match_host, parse_entry

ALLOW = tuple(
    parse_entry(e)
    for e in ("pypi.org", "*.npmjs.org", "10.1.2.3:8080", "[2001:db8::1]", "git.example:22")
)


@pytest.mark.parametrize(
    ("host", "port", "entry"),
    [
        ("pypi.org", 443, "pypi.org"),
        ("PyPI.org.", 80, "pypi.org"),
        ("registry.npmjs.org", 443, "*.npmjs.org"),
        ("a.b.npmjs.org", 443, "*.npmjs.org"),
        ("10.1.2.3", 8080, "10.1.2.3:8080"),
        ("2001:db8::1", 443, "[2001:db8::1]"),
        ("git.example", 22, "git.example:22"),
    ],
)
def test_an_entry_names_its_host_and_ports(host: str, port: int, entry: str) -> None:
    matched = match_host(host, port, ALLOW)
    assert matched is not None and matched.text == entry


@pytest.mark.parametrize(
    ("host", "port"),
    [
        ("pypi.org", 22),  # no port: 80 and 443 only
        ("npmjs.org", 443),  # *.domain is its subdomains, not itself
        ("evilnpmjs.org", 443),
        ("pypi.org.evil.example", 443),
        ("10.1.2.3", 443),
        ("10.1.2.4", 8080),
        ("git.example", 443),
        ("", 443),
    ],
)
def test_anything_else_is_not_named(host: str, port: int) -> None:
    assert match_host(host, port, ALLOW) is None


def test_the_hosts_own_addresses_are_never_dialled() -> None:
    name = parse_entry("pypi.org")
    for address in ("127.0.0.1", "127.8.9.1", "::1", "0.0.0.0", "169.254.169.254", "fe80::1%eth0",
                    "224.0.0.1", "::ffff:127.0.0.1"):  # fmt: skip
        assert address_refusal(address, name) == "host-address", address
    # Even an IP literal entry cannot open the host's loopback.
    assert address_refusal("127.0.0.1", parse_entry("127.0.0.1:5432")) == "host-address"


def test_a_private_address_needs_its_own_literal_entry() -> None:
    for address in ("10.1.2.3", "192.168.1.1", "172.16.0.1", "fd00::1", "100.64.0.1"):
        assert address_refusal(address, parse_entry("pypi.org")) == "private-address", address
    assert address_refusal("10.1.2.3", parse_entry("10.1.2.3:8080")) is None
    assert address_refusal("10.1.2.4", parse_entry("10.1.2.3:8080")) == "private-address"
    assert address_refusal("151.101.0.223", parse_entry("pypi.org")) is None


@pytest.mark.parametrize(
    "entry",
    [
        "PyPI.org",
        "http://pypi.org",
        "pypi.org/simple",
        "*",
        "*.",
        "pypi.org:0",
        "pypi.org:70000",
        "a b",
        "pypi.org:",
        "[::1",
        "-x.org",
    ],
)
def test_a_bad_allow_entry_is_refused_by_the_model(entry: str) -> None:
    with pytest.raises(ValidationError):
        NetworkSettings(mode="allowlist", allow=(entry,))


def test_the_older_spellings_still_set_the_mode() -> None:
    assert SandboxSettings.model_validate({"network": "shared"}).network.mode == "open"
    assert SandboxSettings.model_validate({"network": "none"}).network.mode == "off"
    assert SandboxSettings.model_validate({"network": "allowlist"}).network.mode == "allowlist"
    with pytest.raises(ValidationError):
        SandboxSettings.model_validate({"network": "sometimes"})


def test_a_bad_entry_in_the_file_is_one_problem_naming_file_and_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "operator-guard.toml").write_text(
        '[sandbox.network]\nmode = "allowlist"\nallow = ["http://pypi.org"]\n'
    )
    settings, _, problems = effective_settings(home, tmp_path)
    assert len(problems) == 1 and "operator-guard.toml" in str(problems[0])
    assert "allow entries" in str(problems[0])
    # A file with problems never relaxes: the sandbox stays required, and a network setting
    # that does not parse is off, never the open default (fail closed).
    assert settings.mode == "required"
    assert settings.network.mode == "off"


@pytest.mark.parametrize(
    "table",
    [
        '[sandbox.network]\nmode = "sometimes"\n',
        '[sandbox]\nnetwork = "nonee"\n',
        '[sandbox.network]\nmode = "off"\nallow = "pypi.org"\nextra = 1\n',
        '[sandbox]\nmode = "off"\nnetwork = {mode = "allowlist", allow = ["HTTP://X"]}\n',
    ],
)
def test_a_network_setting_that_does_not_parse_is_off(tmp_path: Path, table: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "operator-guard.toml").write_text(table)
    settings, _, problems = effective_settings(home, tmp_path)
    assert problems
    assert (settings.mode, settings.network.mode) == ("required", "off")


def test_a_valid_network_in_an_invalid_table_is_kept_with_the_hidden_paths(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "operator-guard.toml").write_text(
        '[sandbox]\nmode = "of"\nhidden = ["~/secret"]\n'
        '[sandbox.network]\nmode = "allowlist"\nallow = ["pypi.org"]\n'
    )
    settings, _, problems = effective_settings(home, tmp_path)
    assert problems and settings.mode == "required"
    assert settings.hidden == ("~/secret",)
    assert (settings.network.mode, settings.network.allow) == ("allowlist", ("pypi.org",))


# -- the proxy itself, attacked with the spellings a command could send ----------------------


def ask_proxy(sock: Path, request: bytes) -> bytes:
    import socket

    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(20)
        conn.connect(str(sock))
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(4096):
            answer += chunk
    return answer


@pytest.mark.parametrize(
    ("request_line", "host", "port", "reason"),
    [
        # Allowed by name or literal, refused by the address it is: the host's own.
        (b"CONNECT [::1]:443 HTTP/1.1", "::1", 443, "host-address"),
        (b"CONNECT 2130706433:443 HTTP/1.1", "2130706433", 443, "host-address"),
        (b"CONNECT localhost:443 HTTP/1.1", "localhost", 443, "host-address"),
        (b"GET http://localhost/ HTTP/1.1", "localhost", 80, "host-address"),
        (b"CONNECT 169.254.169.254:443 HTTP/1.1", "169.254.169.254", 443, "host-address"),
        # Named to look allowed, but the host is another.
        (b"GET http://pypi.org@evil.example/ HTTP/1.1", "evil.example", 80, "not-allowed"),
        (b"CONNECT pypi.org.evil.example:443 HTTP/1.1", "pypi.org.evil.example", 443,
         "not-allowed"),
        (b"CONNECT evil.example:443 HTTP/1.1\r\nHost: pypi.org", "evil.example", 443,
         "not-allowed"),
        # Not an HTTP request for a host at all.
        (b"GET ftp://pypi.org/ HTTP/1.1", "ftp://pypi.org/", 0, "bad-request"),
    ],
)  # fmt: skip
def test_the_proxy_refuses_each_spelling(
    tmp_path: Path, request_line: bytes, host: str, port: int, reason: str
) -> None:
    from guard._sandbox.proxy import NetworkProxy

    allow = ("pypi.org", "[::1]", "2130706433", "localhost", "169.254.169.254")
    proxy = NetworkProxy(tmp_path / "p.sock", allow)
    proxy.start()
    try:
        answer = ask_proxy(proxy.socket_path, request_line + b"\r\n\r\n")
        refusals = proxy.take_refusals()
    finally:
        proxy.stop()
    assert answer.startswith((b"HTTP/1.1 403 ", b"HTTP/1.1 400 ")), answer
    assert b"operator-guard: " in answer
    assert [(r.host, r.port, r.reason) for r in refusals] == [(host, port, reason)]


def test_the_origin_is_told_to_close_after_the_one_request_the_proxy_checked() -> None:
    """The proxy checks the host of the first request only: what it forwards must end the
    connection after it (a keep-alive would let a second request name another host), and
    none of the client's own connection headers may say otherwise."""
    from guard._sandbox.proxy import _origin_form

    rest = (
        b"Host: pypi.org\r\nConnection: keep-alive\r\nKeep-Alive: timeout=600\r\n"
        b"Proxy-Connection: keep-alive\r\nProxy-Authorization: Basic eA==\r\nAccept: */*"
    )
    sent = _origin_form("GET", "/simple/", "HTTP/1.1", rest)
    headers = [h.lower() for h in sent.split(b"\r\n\r\n")[0].split(b"\r\n")[1:]]
    assert headers.count(b"connection: close") == 1
    assert not any(h.startswith((b"keep-alive", b"proxy-")) for h in headers)
    assert [h for h in headers if h.startswith(b"connection")] == [b"connection: close"]
    assert sent.startswith(b"GET /simple/ HTTP/1.1\r\nHost: pypi.org\r\n")
    assert sent.endswith(b"\r\n\r\n")
