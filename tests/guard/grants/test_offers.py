"""Which grants are offered: the narrowest useful ones, never for what must be asked each time."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.grants.conftest import World


def test_one_file_gets_the_same_call_and_the_same_directory(world: World) -> None:
    app = world.workspace
    same, directory = world.bash_offers("rm -f a.txt")
    assert same.breadth == "same-call"
    assert same.pattern.globs == (f"{app}/a.txt",)
    assert same.label == f"rm -f of exactly {app}/a.txt"
    assert directory.breadth == "same-directory"
    assert directory.pattern.globs == (f"{app}/*.txt",)
    assert directory.label == f"rm -f of files matching {app}/*.txt"
    for offer in (same, directory):
        pattern = offer.pattern
        assert (pattern.tool, pattern.kind, pattern.program) == ("bash", "destructive", "rm")
        assert pattern.fixed_args == ("-f",)
        assert pattern.scope == str(app)
        assert pattern.rule_ids == ("builtin.rm",)


def test_two_files_in_one_directory(world: World) -> None:
    app = world.workspace
    same, directory = world.bash_offers("rm -f a.txt b.txt")
    assert same.pattern.globs == (f"{app}/a.txt", f"{app}/b.txt")
    assert directory.pattern.globs == (f"{app}/*.txt",)


def test_no_shared_extension_widens_to_every_name(world: World) -> None:
    _, directory = world.bash_offers("rm -f a.txt c.md")
    assert directory.pattern.globs == (f"{world.workspace}/*",)


def test_targets_in_two_directories_get_only_the_same_call(world: World) -> None:
    (only,) = world.bash_offers("rm -f a.txt sub/a.txt")
    assert only.breadth == "same-call"


def test_a_write_to_an_env_example(world: World) -> None:
    app = world.workspace
    # a protected file gets the exact file only, never a glob beside it
    (same,) = world.offers("write", {"path": ".env.example", "content": "X=1"})
    assert same.pattern.tool == "write"
    assert same.pattern.program is None
    assert same.pattern.globs == (f"{app}/.env.example",)
    assert same.pattern.rule_ids == ("builtin.dotenv",)
    assert same.label == f"write of exactly {app}/.env.example"


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("edit", {"path": ".env", "edits": [{"oldText": "A=1", "newText": "A=2"}]}),
        ("write", {"path": ".env", "content": "A=2"}),
        ("write", {"path": "./.env.local", "content": "A=2"}),
        ("bash", {"command": "rm -f .env"}),
        ("bash", {"command": "rm -f .npmrc"}),
        ("bash", {"command": "sed -i s/1/2/ .env"}),
    ],
)
def test_a_secret_or_protected_file_gets_the_exact_file_only(
    world: World, tool: str, tool_input: dict[str, object]
) -> None:
    for name in (".env", ".env.local", ".npmrc"):
        (world.workspace / name).write_text("A=1\n", encoding="utf-8")
    found = world.offers(tool, dict(tool_input))
    assert [o.breadth for o in found] in ([], ["same-call"])
    for offer in found:
        assert not any("*" in glob for glob in offer.pattern.globs), offer.pattern.globs


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf node_modules",
        "rm -r node_modules",
        "rm -fr node_modules",
        "rm -Rf node_modules",
        "rm --recursive --force node_modules",
        "rm -rf ./node_modules/",
        "rm -rf a.txt",
        "rmdir sub",
        "rm -d sub",
    ],
)
def test_a_recursive_delete_or_a_directory_gets_no_glob(world: World, command: str) -> None:
    app = world.workspace
    (app / "node_modules" / "x").mkdir(parents=True)
    (app / "src").mkdir()
    found = world.bash_offers(command)
    assert [o.breadth for o in found] in ([], ["same-call"]), command
    for offer in found:
        assert not any("*" in glob for glob in offer.pattern.globs)
        # the grant never covers a directory the call did not name
        assert not world.bash_covers(offer.pattern, "rm -rf src").covered


def test_a_path_the_command_reads_is_pinned_as_an_absolute_argument(world: World) -> None:
    same, _ = world.bash_offers("cp a.txt b.txt")
    assert same.pattern.fixed_args == (f"{world.workspace}/a.txt",)
    assert same.pattern.globs == (f"{world.workspace}/b.txt",)


@pytest.mark.parametrize(
    "command",
    [
        "rm -f a.txt; ls",
        "rm -f a.txt && ls",
        "rm -f $(cat x)",
        "rm -f `cat x`",
        "rm -f a.txt | tee",
        "rm -f a.txt > log",
        "rm -f a.txt 2>/dev/null",
        "X=1 rm -f a.txt",
        "env rm -f a.txt",
        "sudo rm -f a.txt",
        "xargs rm -f a.txt",
        "bash -c 'rm -f a.txt'",
        "eval rm -f a.txt",
        "cd sub && rm -f a.txt",
        "rm -f *.txt",
        "rm -f '*.txt'",
        'rm -f "$X"',
        "rm -f {a,b}.txt",
        "./rm -f a.txt",
        "/bin/rm -f a.txt",
        "rm -f a.txt # done",
        "cp -t sub a.txt",
        "python -c 'import os; os.remove(\"a.txt\")'",
    ],
)
def test_no_offer_for_what_is_not_one_plain_action(world: World, command: str) -> None:
    assert world.verdict("bash", {"command": command}).verdict == "confirm"
    assert world.bash_offers(command) == ()


def test_no_offer_for_a_block(world: World) -> None:
    assert world.verdict("bash", {"command": "rm -rf ~"}).verdict == "block"
    assert world.bash_offers("rm -rf ~") == ()
    assert world.bash_offers("rm -rf /") == ()


def test_no_offer_for_a_target_outside_the_workspace(world: World) -> None:
    outside = world.outside / "x.txt"
    assert world.bash_offers(f"rm -f {outside}") == ()
    assert world.bash_offers("rm -f ../../../elsewhere/x.txt") == ()
    assert world.offers("write", {"path": str(outside), "content": ""}) == ()


def test_no_offer_for_a_symlink_leading_outside_the_workspace(world: World) -> None:
    (world.workspace / "away.txt").symlink_to(world.outside / "x.txt")
    assert world.verdict("bash", {"command": "rm -f away.txt"}).verdict == "confirm"
    assert world.bash_offers("rm -f away.txt") == ()


def test_no_offer_for_the_guard_home_or_its_files(world: World) -> None:
    world.guard_home.mkdir(parents=True)
    (world.guard_home / "notes.txt").write_text("x", encoding="utf-8")
    home = world.home  # even with the whole home as the workspace
    for command in (f"rm -f {world.guard_home}/notes.txt", f"rm -rf {world.guard_home}"):
        assert world.bash_offers(command) == ()
        assert world.offers("bash", {"command": command}, home, workspace=home) == ()
    for path in (world.guard_home / "notes.txt", world.guard_home / "operator-guard.toml"):
        tool_input = {"path": str(path), "content": ""}
        assert world.offers("write", tool_input, home, workspace=home) == ()


def test_no_offer_for_credentials_or_pi_extensions(world: World) -> None:
    for path in ("id_ed25519", ".pi/skills/x/SKILL.md", ".pi/operator-guard.toml"):
        verdict = world.verdict("write", {"path": path, "content": ""})
        assert verdict.verdict == "confirm", path
        assert world.offers("write", {"path": path, "content": ""}) == (), path


def test_no_offer_for_what_is_not_asked(world: World) -> None:
    assert world.offers("edit", {"path": "a.txt", "oldText": "x", "newText": "y"}) == ()
    assert world.bash_offers("ls a.txt") == ()


def test_neither_the_home_nor_a_parent_of_the_guard_home_is_widened(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = world.home
    (home / "h.txt").write_text("x", encoding="utf-8")
    found = world.offers("bash", {"command": "rm -f h.txt"}, home, workspace=home)
    assert [o.breadth for o in found] == ["same-call"]
    # A guard home in the workspace: its directory's files get no widened grant.
    monkeypatch.setenv("PI_OPERATOR_GUARD_HOME", str(world.workspace / "sub" / "guard"))
    found = world.bash_offers("rm -f sub/a.txt")
    assert [o.breadth for o in found] == ["same-call"]


def test_a_sibling_folder_whose_name_extends_the_workspaces_is_outside_it(world: World) -> None:
    """``app2`` beside the workspace ``app``: a plain prefix would call it inside."""
    sibling = Path(f"{world.workspace}2")
    sibling.mkdir()
    (sibling / "x.txt").write_text("x")
    assert world.bash_offers(f"rm -f {sibling}/x.txt") == ()
    assert world.offers("write", {"path": f"{sibling}/x.txt", "content": ""}) == ()
    (world.workspace / "a.txt").write_text("a")
    _, directory = world.bash_offers("rm -f a.txt")
    assert not world.bash_covers(directory.pattern, f"rm -f {sibling}/x.txt").covered
