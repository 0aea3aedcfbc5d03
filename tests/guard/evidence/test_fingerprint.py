"""Path normalization and the payload hash (see docs/monitor.md, "The envelope (v1)")."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guard import BadInputError
from guard.evidence import compute_fingerprint, normalize_path, payload_hash

ROOT = "/srv/project"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("build", "/srv/project/build"),
        ("./build/", "/srv/project/build"),
        ("build//", "/srv/project/build"),
        ("./build/./", "/srv/project/build"),
        ("build/../src", "/srv/project/src"),
        ("build\\out\\x.o", "/srv/project/build/out/x.o"),
        ("C:\\x", "/srv/project/C:/x"),
        ("../other", "/srv/other"),
        ("../../../../etc/passwd", "/etc/passwd"),
        ("/etc//passwd/", "/etc/passwd"),
        ("//etc/passwd", "/etc/passwd"),
        ("/", "/"),
        (".", "/srv/project"),
    ],
)
def test_normalization_cases(raw: str, expected: str) -> None:
    assert normalize_path(raw, ROOT) == expected


def test_equivalent_and_different_paths() -> None:
    assert normalize_path("./build/", ROOT) == normalize_path("build", ROOT)
    assert normalize_path("build/../src", ROOT) != normalize_path("build", ROOT)


def test_nfc_and_nfd_are_the_same_path() -> None:
    nfd = unicodedata.normalize("NFD", "café")
    assert nfd != "café"
    assert normalize_path(nfd, ROOT) == normalize_path("café", ROOT) == "/srv/project/café"


def test_escape_outside_workspace_stays_absolute_and_whole() -> None:
    long_name = "x" * 500
    assert normalize_path(f"../../{long_name}", ROOT) == f"/{long_name}"


def test_no_truncation_of_long_paths() -> None:
    deep = "/".join(["segment"] * 200)
    assert normalize_path(deep, ROOT).endswith(deep)


def test_tilde_is_the_home_directory() -> None:
    assert normalize_path("~/.ssh/id_ed25519", ROOT) == os.path.expanduser("~") + "/.ssh/id_ed25519"


@pytest.mark.parametrize("bad", ["", "a\x00b"])
def test_bad_paths_are_refused(bad: str) -> None:
    with pytest.raises(BadInputError):
        normalize_path(bad, ROOT)


def test_symlink_resolution_detects_a_swap(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "a")
    before = normalize_path("link/file", tmp_path, resolve_symlinks=True)
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(tmp_path / "b")
    after = normalize_path("link/file", tmp_path, resolve_symlinks=True)
    assert before != after
    assert normalize_path("link/file", tmp_path) == str(tmp_path / "link/file")


def test_payload_hash_binds_the_full_input_canonically() -> None:
    a = payload_hash({"command": "rm -rf build", "timeout": 30})
    b = payload_hash({"timeout": 30, "command": "rm -rf build"})
    assert a == b and a.startswith("sha256:") and len(a) == 71
    assert payload_hash({"command": "rm -rf build", "timeout": 31}) != a
    assert payload_hash({"command": "rm -rf build "}) != payload_hash({"command": "rm -rf build"})


def test_payload_hash_refuses_non_json_values() -> None:
    with pytest.raises(BadInputError, match="canonical"):
        payload_hash({"n": 2**60})
    with pytest.raises(BadInputError, match="canonical"):
        payload_hash({"n": float("nan")})
    with pytest.raises(BadInputError, match="JSON object"):
        payload_hash(["not", "an", "object"])  # type: ignore[arg-type]


@given(st.text(alphabet=st.characters(blacklist_characters="\x00"), min_size=1, max_size=60))
def test_normalization_is_idempotent_and_absolute(raw: str) -> None:
    once = normalize_path(raw, ROOT)
    assert once.startswith("/")
    assert normalize_path(once, ROOT) == once
    assert "//" not in once and (once == "/" or not once.endswith("/"))
    assert "/./" not in once + "/" and "/../" not in once + "/"


def test_fingerprint_scope_is_the_normalized_workspace() -> None:
    fp = compute_fingerprint("destructive", "bash", {"command": "ls"}, "/srv/project/./")
    assert fp.scope == "/srv/project"
    assert fp.path is None


def test_payload_hash_refusals_name_the_field_the_problem_and_the_value() -> None:
    # The refusal is what a caller sees (exit 2, one line): field, problem and value pinned.
    from guard import BadInputError
    from guard._evidence.fingerprint import payload_hash

    with pytest.raises(BadInputError) as not_object:
        payload_hash(["rm", "-rf", "/"])  # type: ignore[arg-type]
    assert (not_object.value.what, not_object.value.problem, not_object.value.value) == (
        "tool input",
        "must be a JSON object",
        "list",
    )
    assert str(not_object.value) == "tool input: must be a JSON object (got list)"
    with pytest.raises(BadInputError) as not_canonical:
        payload_hash({"ratio": float("nan")})
    assert not_canonical.value.what == "tool input"
    assert not_canonical.value.problem.startswith("not representable as canonical JSON (")
    assert not_canonical.value.problem.endswith(")")
    assert not_canonical.value.value is not None and "nan" in not_canonical.value.value.lower()
    assert str(not_canonical.value).startswith("tool input: not representable as canonical JSON")


@pytest.mark.parametrize("relative", ["etc/passwd", "./x", "~/x", "build/../x"])
def test_a_bound_path_must_be_absolute_and_the_refusal_says_so(relative: str) -> None:
    from guard._evidence.fingerprint import fingerprint_path

    with pytest.raises(BadInputError) as refused:
        fingerprint_path(relative)
    assert (refused.value.what, refused.value.problem) == (
        "path",
        "must be absolute and normalized",
    )
    assert refused.value.value == relative
    assert str(refused.value).startswith("path: must be absolute and normalized")


def test_a_bound_path_may_be_exactly_as_long_as_the_limit_and_not_longer(tmp_path: Path) -> None:
    from guard._evidence.fingerprint import MAX_PATH_CHARS, fingerprint_path

    base = str(tmp_path.resolve()) + "/"
    # Components that do not exist are kept as written: the length is the path's own.
    exact = base + "/".join(["d" * 200] * 40)
    exact = exact[:MAX_PATH_CHARS].rstrip("/")
    exact += "x" * (MAX_PATH_CHARS - len(exact))
    assert len(exact) == MAX_PATH_CHARS
    assert fingerprint_path(exact) == exact
    with pytest.raises(BadInputError) as refused:
        fingerprint_path(exact + "y")
    assert (refused.value.what, refused.value.problem) == (
        "path",
        f"longer than {MAX_PATH_CHARS} characters",
    )
    shown = refused.value.value
    assert shown is not None and shown.startswith(base[:20]) and shown.endswith("y")


@pytest.mark.parametrize(
    ("path", "root", "what", "problem", "value"),
    [
        ("", ROOT, "path", "must be a non-empty string", ""),
        (7, ROOT, "path", "must be a non-empty string", "7"),
        ("a\x00b", ROOT, "path", "contains a NUL character", "a\\u0000b"),  # shown escaped
        ("build", "", "workspace root", "must be a non-empty string", ""),
        ("build", "/srv/\x00x", "workspace root", "contains a NUL character", "/srv/\\u0000x"),
    ],
)
def test_path_refusals_name_the_field_the_problem_and_the_value(
    path: Any, root: str, what: str, problem: str, value: str
) -> None:
    with pytest.raises(BadInputError) as refused:
        normalize_path(path, root)
    assert (refused.value.what, refused.value.problem, refused.value.value) == (
        what,
        problem,
        value,
    )


def test_a_relative_workspace_root_is_taken_from_the_current_directory() -> None:
    here = os.getcwd()
    assert normalize_path("x", "rel/dir") == here + "/rel/dir/x"
    assert normalize_path("../y", "./rel") == here + "/y"
    assert normalize_path("/abs", "rel") == "/abs"


def test_a_normalized_path_may_be_exactly_as_long_as_the_limit_and_not_longer() -> None:
    from guard._evidence.fingerprint import MAX_PATH_CHARS

    exact = "/" + "/".join(["d" * 99] * 40)
    exact += "/" + "x" * (MAX_PATH_CHARS - len(exact) - 1)
    assert len(exact) == MAX_PATH_CHARS
    assert normalize_path(exact, ROOT) == exact
    with pytest.raises(BadInputError) as refused:
        normalize_path(exact + "y", ROOT)
    assert (refused.value.what, refused.value.problem) == (
        "path",
        f"longer than {MAX_PATH_CHARS} characters",
    )
    shown = refused.value.value
    assert shown is not None and shown.startswith("/ddd") and shown.endswith("xy")
