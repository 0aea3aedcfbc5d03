"""Path globs compiled together match what each compiles to alone, with any home."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from guard._policy.matching.globs import PathMatcher, _alternatives, compile_globs

HOMES = ("/h", "/home/u", "/", "/a.b+c", "/tmp/x(y)")
SEGMENT = st.sampled_from(["a", "b", ".ssh", "A", "*", "?", "[ab]", "**", "x\ny", "a.b"])
PATTERN = st.builds(
    lambda start, segments: start + "/".join(segments),
    st.sampled_from(["~/", "/", "", "/h/", "${GUARD_HOME}/"]),
    st.lists(SEGMENT, min_size=1, max_size=3),
)
PATH = st.builds(
    lambda start, segments: start + "/".join(segments),
    st.sampled_from(["/h/", "/home/u/", "/", "/a.b+c/", "/tmp/x(y)/", "/g/"]),
    st.lists(st.sampled_from(["a", "b", ".ssh", "A", "ab", "x\ny", "a.b", "c"]), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    patterns=st.lists(PATTERN, min_size=1, max_size=6),
    paths=st.lists(PATH, min_size=1, max_size=6),
    home=st.sampled_from(HOMES),
    case_sensitive=st.booleans(),
)
def test_a_set_of_globs_matches_what_its_members_match(
    patterns: list[str], paths: list[str], home: str, case_sensitive: bool
) -> None:
    values = {"GUARD_HOME": home.rstrip("/") + "/.pi/agent/operator-guard"}

    def compiled(globs: list[str]) -> PathMatcher:
        return compile_globs(
            globs, values=values, home=home, anchor="/h/p", case_sensitive=case_sensitive
        )

    together = compiled(patterns)
    alone = [compiled([p]) for p in patterns]
    for path in paths:
        assert together.match(path) == any(m.match(path) for m in alone), (patterns, path)


def test_a_name_with_a_newline_is_still_beneath_the_glob() -> None:
    ssh = compile_globs(["~/.ssh"], values={}, home="/h", anchor=None, case_sensitive=True)
    assert ssh.match("/h/.ssh/a\nb") and ssh.match("/h/.ssh/a\n")
    assert not ssh.match("/h/.ssh\n") and not ssh.match("/h/.sshx")


ANCHORS = ("/h/p", "/home/u/proj", "/tmp/x(y)/w", None)
CASED_PATH = st.builds(
    lambda start, segments: start + "/".join(segments),
    st.sampled_from(["/h/", "/H/", "/home/u/", "/HOME/U/", "/h/p/", "/H/P/", "/tmp/x(y)/", "/"]),
    st.lists(st.sampled_from(["a", "B", ".ssh", ".SSH", "p", "ab", "x\ny", "w", "c"]), max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    patterns=st.lists(PATTERN, min_size=1, max_size=6),
    paths=st.lists(CASED_PATH, min_size=1, max_size=8),
    home=st.sampled_from(HOMES),
    anchor=st.sampled_from(ANCHORS),
    case_sensitive=st.booleans(),
)
def test_globs_kept_apart_under_the_home_match_as_the_one_regex_would(
    patterns: list[str], paths: list[str], home: str, anchor: str | None, case_sensitive: bool
) -> None:
    """The matcher keeps what lies under the home and the project apart (so that part is
    compiled once per process); it must answer as ``^(?:every glob)(?:/.*)?\\Z`` does, in
    either case and with a home that holds regex characters."""
    values = {"GUARD_HOME": home.rstrip("/") + "/.pi/agent/operator-guard"}
    matcher = compile_globs(
        patterns, values=values, home=home, anchor=anchor, case_sensitive=case_sensitive
    )
    alternatives, _, _ = _alternatives(patterns, values, home, anchor)
    flags = re.DOTALL | (0 if case_sensitive else re.IGNORECASE)
    one = re.compile("^(?:" + "|".join(alternatives) + ")(?:/.*)?\\Z", flags)
    for path in paths:
        assert matcher.match(path) == (one.match(path) is not None), (patterns, path, home)
