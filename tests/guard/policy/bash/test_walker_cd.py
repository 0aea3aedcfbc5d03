"""``cd``, ``pushd`` and ``popd``: where later relative paths resolve, and when that is unknown."""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import Finding, analyze

_RUNTIME = "cd to a directory only known at runtime: "
_POPD = Finding("unresolved", "popd: the directory it returns to is not known here")
_CDPATH = Finding("unresolved", "cd with CDPATH set: the directory depends on CDPATH")


@pytest.fixture(autouse=True)
def _no_cdpath(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CDPATH", raising=False)


def rm_cwd(command: str) -> str | None:
    """The directory the last ``rm`` of ``command`` runs in (analysis in /w, home /h)."""
    script = analyze(command, cwd="/w", home="/h")
    return [c.cwd for c in script.commands if c.program == "rm"][-1]


def findings(command: str) -> list[Finding]:
    return analyze(command, cwd="/w", home="/h").findings


@pytest.mark.parametrize(
    ("command", "cwd"),
    [
        ("cd; rm a", "/h"),
        ("cd /var; cd; rm a", "/h"),
        ("cd -P /var; rm a", "/var"),
        ("cd -L -P /var/x; rm a", "/var/x"),
        ("cd -- /var; rm a", "/var"),
        ("cd ~; rm a", "/h"),
        ("cd ~/x; rm a", "/h/x"),
        ("cd ~/x/y/..; rm a", "/h/x"),
        ("cd sub/../other; rm a", "/w/other"),
        ("cd ..; rm a", "/"),
    ],
)
def test_cd_moves_where_relative_paths_point(command: str, cwd: str) -> None:
    assert rm_cwd(command) == cwd
    assert findings(command) == []


@pytest.mark.parametrize(
    ("command", "cwd"),
    [
        ("pushd /a && rm x", "/a"),
        ("pushd /a; popd; rm x", "/w"),
        ("cd /s; pushd /a; popd; rm x", "/s"),
        ("pushd /a; pushd /b; popd; rm x", "/a"),
        ("pushd /a; pushd /b; popd; popd; rm x", "/w"),
        ("pushd sub && make; popd; rm x", "/w"),
    ],
)
def test_pushd_and_popd_follow_the_directory_stack(command: str, cwd: str) -> None:
    assert rm_cwd(command) == cwd
    assert findings(command) == []


@pytest.mark.parametrize(
    "command",
    [
        "popd; rm x",
        "cd /a; popd; rm x",
        "pushd /a; popd; popd; rm x",
    ],
)
def test_popd_past_the_known_stack_is_unresolved(command: str) -> None:
    assert findings(command) == [_POPD]


def test_popd_past_the_known_stack_keeps_the_last_known_directory() -> None:
    assert rm_cwd("cd /a; popd; rm x") == "/a"


@pytest.mark.parametrize(
    "target",
    ["$D", "-", "*", "x?", "{a,b}", "~+", "~+/x", "$(pwd)/x"],
)
def test_cd_to_a_runtime_directory_is_unresolved(target: str) -> None:
    command = f"cd {target}; rm a"
    assert findings(command) == [Finding("unresolved", _RUNTIME + target)]
    assert rm_cwd(command) == "/w"


@pytest.mark.parametrize("target", ["sub", "a/b", "x.d"])
def test_cd_to_a_relative_name_with_cdpath_set_is_unresolved(
    monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.setenv("CDPATH", "/elsewhere")
    assert findings(f"cd {target}") == [_CDPATH]


@pytest.mark.parametrize("target", ["/var", "./sub", "../up", ".", "~", "~/x"])
def test_cd_to_an_explicit_directory_ignores_cdpath(
    monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.setenv("CDPATH", "/elsewhere")
    assert findings(f"cd {target}") == []


@pytest.mark.parametrize("cdpath", [None, ""])
def test_cd_to_a_relative_name_without_cdpath_is_resolved(
    monkeypatch: pytest.MonkeyPatch, cdpath: str | None
) -> None:
    if cdpath is not None:
        monkeypatch.setenv("CDPATH", cdpath)
    assert findings("cd sub; rm a") == []
    assert rm_cwd("cd sub; rm a") == "/w/sub"
