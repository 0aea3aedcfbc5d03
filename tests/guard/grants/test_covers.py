"""What a grant covers: the same facts, every resolved target inside; near misses are not."""

from __future__ import annotations

import pytest

from guard._grants import GrantPattern
from tests.guard.grants.conftest import World


def test_the_same_call_is_covered(world: World) -> None:
    pattern = world.pattern("rm -f a.txt", "same-call")
    assert world.bash_covers(pattern, "rm -f a.txt").covered
    assert world.bash_covers(pattern, "rm -f ./a.txt").covered
    assert world.bash_covers(pattern, "rm -f a.txt", world.workspace / "sub").reason == (
        "target-outside-glob"  # sub/a.txt: another file
    )
    assert world.bash_covers(pattern, "rm -f ../a.txt", world.workspace / "sub").covered
    assert world.bash_covers(pattern, "rm -f b.txt").reason == "target-outside-glob"


def test_another_file_of_the_glob_is_covered(world: World) -> None:
    pattern = world.pattern("rm -f a.txt", "same-directory")
    assert world.bash_covers(pattern, "rm -f b.txt").covered
    assert world.bash_covers(pattern, "rm -f a.txt b.txt").covered
    assert world.bash_covers(pattern, "rm -f new.txt").covered  # not there yet


def test_a_write_grant(world: World) -> None:
    (offered,) = world.offers("write", {"path": ".env.example", "content": "X=1"})
    same = offered.pattern
    # a protected file is offered exactly; a wider pattern (an older grant's) still matches
    # on facts only
    directory = same.model_copy(update={"globs": (f"{world.workspace}/*.example",)})
    assert world.covers(same, "write", {"path": ".env.example", "content": "Y=2"}).covered
    assert world.covers(directory, "write", {"path": ".env.other.example", "content": ""}).covered
    edit = {"path": ".env.example", "oldText": "X", "newText": "Y"}
    assert world.covers(same, "edit", edit).reason == "other-tool"
    # *.example matches a file no rule asks about: a grant only covers asked calls
    assert world.covers(directory, "write", {"path": "x.example", "content": ""}).reason == (
        "not-asked"
    )
    assert world.covers(directory, "write", {"path": ".env", "content": ""}).reason == (
        "target-outside-glob"
    )


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("rm -f b.txt c.md", "target-outside-glob"),
        ("rm -f b.txt ../../../elsewhere/x.txt", "target-outside-scope"),
        ("rm -f b.txt; rm -rf ~", "blocked"),
        ("rm -f b.txt; ls", "not-single-action"),
        ("rm -f b.txt && rm -f a.txt", "not-single-action"),
        ("rm -f b.txt | tee", "not-single-action"),
        ("rm -f $(echo b.txt)", "not-single-action"),
        ("rm -f `echo b.txt`", "not-single-action"),
        ('rm -f "$X"', "unresolved-part"),
        ("rm -f *.txt", "unresolved-part"),
        ("rm -f b.txt > log.txt", "not-single-action"),
        ("env rm -f b.txt", "unresolved-part"),
        ("sudo rm -f b.txt", "unresolved-part"),
        ("bash -c 'rm -f b.txt'", "unresolved-part"),
        ("eval rm -f b.txt", "not-single-action"),
        ("rm -rf b.txt", "other-arguments"),
        ("rm b.txt", "other-arguments"),
        ("rm -f -- b.txt", "other-arguments"),
        ("rm b.txt -f", "other-arguments"),
        ("rm -f sub/a.txt", "target-outside-glob"),
        ("rm -f sub/../b.txt", "covered"),
        ("rm -f ../app/b.txt", "covered"),
        ("rm -f ../app/sub/a.txt", "target-outside-glob"),
        ("rm -f ./.././app/other/x.txt", "target-outside-glob"),
        ("unlink b.txt", "other-program"),
        ("chmod 600 b.txt", "other-program"),
        ("ls b.txt", "not-asked"),
        ("rm -f .env.txt", "other-rules"),
    ],
)
def test_near_misses(world: World, command: str, reason: str) -> None:
    pattern = world.pattern("rm -f a.txt", "same-directory")
    coverage = world.bash_covers(pattern, command)
    assert coverage.reason == reason, coverage
    assert coverage.covered is (reason == "covered")


def test_a_symlink_inside_the_glob_pointing_outside_it(world: World) -> None:
    pattern = world.pattern("rm -f a.txt", "same-directory")
    app = world.workspace
    (app / "to-md.txt").symlink_to(app / "c.md")
    (app / "to-sub.txt").symlink_to(app / "sub" / "a.txt")
    (app / "away.txt").symlink_to(world.outside / "x.txt")
    assert world.bash_covers(pattern, "rm -f to-md.txt").reason == "target-outside-glob"
    assert world.bash_covers(pattern, "rm -f to-sub.txt").reason == "target-outside-glob"
    assert world.bash_covers(pattern, "rm -f away.txt").reason == "target-outside-scope"


def test_a_symlinked_directory_does_not_smuggle_a_subdirectory_in(world: World) -> None:
    pattern = world.pattern("rm -f a.txt", "same-directory")
    (world.workspace / "link").symlink_to(world.workspace / "sub")
    assert world.bash_covers(pattern, "rm -f link/a.txt").reason == "target-outside-glob"
    # and a link to the glob's own directory is that directory
    (world.workspace / "sub" / "up").symlink_to(world.workspace)
    assert world.bash_covers(pattern, "rm -f sub/up/b.txt").covered


def test_a_grant_for_rm_rf_does_not_cover_rm_f(world: World) -> None:
    (world.workspace / "d.txt").mkdir()
    # rm -rf is offered exactly; the matching is on the arguments whatever the globs
    exact = world.pattern("rm -rf d.txt", "same-call")
    pattern = exact.model_copy(update={"globs": (f"{world.workspace}/*.txt",)})
    assert world.bash_covers(pattern, "rm -rf b.txt").covered
    assert world.bash_covers(pattern, "rm -f b.txt").reason == "other-arguments"


def test_a_block_is_never_covered(world: World) -> None:
    pattern = world.pattern("rm -rf a.txt", "same-call")
    wide = pattern.model_copy(update={"globs": (f"{world.home}/*",), "scope": str(world.home)})
    assert world.bash_covers(wide, "rm -rf ~/src").covered  # the glob reaches ~/.bashrc too
    assert world.verdict("bash", {"command": "rm -rf ~/.bashrc"}).verdict == "block"
    assert world.bash_covers(wide, "rm -rf ~/.bashrc").reason == "blocked"
    assert world.bash_covers(pattern, "rm -rf ~").reason == "blocked"


def test_the_pattern_round_trips_in_camel_case(world: World) -> None:
    pattern = world.pattern("cp a.txt b.txt", "same-directory")
    wire = pattern.model_dump(mode="json")
    assert set(wire) == {"tool", "kind", "program", "fixedArgs", "globs", "scope", "ruleIds"}
    assert GrantPattern.model_validate_json(pattern.model_dump_json()) == pattern
    assert world.bash_covers(pattern, "cp a.txt c.txt").covered
    assert world.bash_covers(pattern, "cp c.md c.txt").reason == "other-arguments"
    assert world.bash_covers(pattern, "cp a.txt c.md").reason == "target-outside-glob"


def test_a_pattern_must_stay_inside_its_scope() -> None:
    with pytest.raises(ValueError, match="inside the scope"):
        GrantPattern(
            tool="bash",
            kind="destructive",
            program="rm",
            globs=("/etc/*",),
            scope="/srv/app",
            rule_ids=("builtin.rm",),
        )


@pytest.mark.parametrize(
    "command", ["chmod --reference=c.md b.txt", "chmod --reference c.md b.txt"]
)
def test_an_operand_naming_a_file_is_bound_like_a_target(world: World, command: str) -> None:
    """From another directory, ``c.md`` is another file: the grant does not cover it."""
    for where in (world.workspace, world.workspace / "sub"):
        where.mkdir(exist_ok=True)
        (where / "c.md").write_text(f"reference in {where.name}\n")
        (where / "b.txt").write_text("b\n")
    same, _ = world.bash_offers(command)
    bound = [*same.pattern.fixed_args, *same.pattern.globs]
    assert any(str(world.workspace / "c.md") in arg for arg in bound), same.pattern
    assert world.bash_covers(same.pattern, command).covered
    sub = world.workspace / "sub"
    other = command.replace("b.txt", f"{world.workspace}/b.txt")
    assert not world.bash_covers(same.pattern, other, cwd=sub).covered
