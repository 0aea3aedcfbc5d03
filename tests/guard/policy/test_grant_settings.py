"""``[grants]``: the user's file sets the limits of scoped grants, a project file only lowers them."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from guard._policy import Policy, check_config_file
from guard._policy.cache import PolicyCache
from guard._policy.settings.config import parse_layer
from guard._policy.settings.models import GrantSettings
from tests.guard.policy.conftest import World


def refused(policy: Policy) -> list[tuple[str, str, int]]:
    return [(i["id"], i["layer"], i["line"]) for i in policy.describe()["ignored"]]


def digest(policy: Policy) -> str:
    text = json.dumps(policy.describe(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def test_defaults_without_any_grants_table(world: World) -> None:
    policy = world.policy()
    assert policy.grants == GrantSettings(enabled=True, max_minutes=30, max_uses=20)
    assert policy.problems == ()


def test_the_user_may_raise_the_maxima_up_to_the_limits(world: World) -> None:
    world.user_config("[grants]\nmax_minutes = 1440\nmax_uses = 1000\n")
    policy = world.policy()
    assert policy.grants == GrantSettings(enabled=True, max_minutes=1440, max_uses=1000)
    assert policy.problems == ()


def test_the_user_may_switch_grants_off(world: World) -> None:
    world.user_config("[grants]\nenabled = false\n")
    policy = world.policy()
    assert policy.grants.enabled is False
    assert (policy.grants.max_minutes, policy.grants.max_uses) == (30, 20)
    assert policy.problems == ()


def test_a_project_lowers_each_maximum_it_names(world: World) -> None:
    world.user_config("[grants]\nmax_minutes = 120\nmax_uses = 100\n")
    world.project_config("[grants]\nmax_minutes = 45\n")
    policy = world.policy()
    # 45 is above the default but below the user's 120: it lowers; max_uses stays the user's.
    assert policy.grants == GrantSettings(enabled=True, max_minutes=45, max_uses=100)
    assert policy.problems == ()


def test_a_project_cannot_raise_a_maximum(world: World) -> None:
    world.user_config("[grants]\nmax_uses = 10\n")
    path = world.project_config("[grants]\nmax_minutes = 5\nmax_uses = 500\n")
    policy = world.policy()
    assert policy.grants == GrantSettings(enabled=True, max_minutes=5, max_uses=10)
    assert refused(policy) == [("grants.max_uses", "project", 3)]
    [problem] = policy.problems
    assert (problem.file, problem.line, problem.key) == (str(path), 3, "grants.max_uses")
    assert "never relax" in problem.message
    assert "500" in problem.message


def test_a_project_cannot_raise_above_the_defaults_either(world: World) -> None:
    world.project_config("[grants]\nmax_minutes = 60\n")
    policy = world.policy()
    assert policy.grants.max_minutes == 30
    assert refused(policy) == [("grants.max_minutes", "project", 2)]


def test_a_project_may_switch_grants_off(world: World) -> None:
    world.user_config("[grants]\nmax_minutes = 600\n")
    world.project_config("[grants]\nenabled = false\n")
    policy = world.policy()
    assert policy.grants.enabled is False
    assert policy.grants.max_minutes == 600
    assert policy.problems == ()


def test_a_project_cannot_switch_grants_back_on(world: World) -> None:
    world.user_config("[grants]\nenabled = false\n")
    world.project_config("[grants]\nenabled = true\nmax_uses = 3\n")
    policy = world.policy()
    assert policy.grants == GrantSettings(enabled=False, max_minutes=30, max_uses=3)
    assert refused(policy) == [("grants.enabled", "project", 2)]
    assert [p.key for p in policy.problems] == ["grants.enabled"]
    assert "switch grants back on" in policy.problems[0].message


def test_enabled_true_where_grants_are_on_is_no_problem(world: World) -> None:
    world.project_config("[grants]\nenabled = true\nmax_uses = 20\n")
    policy = world.policy()
    assert policy.grants == GrantSettings()
    assert policy.problems == ()


INVALID_TABLES = [
    ('[grants]\nenabled = "no"\n', "grants.enabled"),
    ("[grants]\nmax_minutes = 0\n", "grants.max_minutes"),
    ("[grants]\nmax_minutes = 1441\n", "grants.max_minutes"),
    ("[grants]\nmax_uses = 1001\n", "grants.max_uses"),
    ('[grants]\nmax_uses = "5"\n', "grants.max_uses"),
    ("[grants]\nmax_uses = 5.0\n", "grants.max_uses"),
    ("[grants]\nmax_uses = true\n", "grants.max_uses"),
    ("[grants]\nmax_usage = 5\n", "grants.max_usage"),
    ("grants = 1\n", "grants"),
]


@pytest.mark.parametrize(("table", "key"), INVALID_TABLES)
@pytest.mark.parametrize("layer", ["user", "project"])
def test_an_invalid_table_in_any_layer_switches_grants_off(
    world: World, layer: str, table: str, key: str
) -> None:
    # The user's generous table underneath must not survive a broken project table.
    if layer == "project":
        world.user_config("[grants]\nmax_minutes = 600\n")
        path = world.project_config(table)
    else:
        path = world.user_config(table)
    policy = world.policy()
    assert policy.grants.enabled is False
    assert key in [p.key for p in policy.problems if p.file == str(path)]
    assert [p.key for p in check_config_file(path) if p.key == key] == [key]


def test_an_invalid_table_says_that_grants_are_off(world: World) -> None:
    world.user_config("[grants]\nmax_minutes = 600\nmax_uses = 1000\n")
    world.project_config("[grants]\nmax_uses = 5\nmaximum = 1\n")
    policy = world.policy()
    assert policy.grants.enabled is False
    assert any("grants are off" in p.message for p in policy.problems)


@pytest.mark.parametrize("layer", ["user", "project"])
def test_a_file_that_is_not_toml_switches_grants_off(world: World, layer: str) -> None:
    broken = "[grants\nenabled = false\n"
    path = world.user_config(broken) if layer == "user" else world.project_config(broken)
    policy = world.policy()
    assert policy.grants.enabled is False
    assert ("grants", str(path)) in [(p.key, p.file) for p in policy.problems]


def test_a_user_file_with_problems_can_lower_but_not_raise(world: World) -> None:
    world.user_config(
        "[grants]\nmax_minutes = 600\nmax_uses = 5\n\n"
        '[[rule]]\nid = "me.typo"\nverdict = "confirm"\nprogam = ["x"]\n'
    )
    policy = world.policy()
    assert policy.grants == GrantSettings(enabled=True, max_minutes=30, max_uses=5)
    assert refused(policy) == [("grants.max_minutes", "user", 2)]
    reasons = [p.message for p in policy.problems if p.key == "grants.max_minutes"]
    assert len(reasons) == 1 and "never relaxes" in reasons[0]


def test_a_user_file_with_problems_can_switch_grants_off(world: World) -> None:
    world.user_config("version = 2\n[grants]\nenabled = false\n")
    policy = world.policy()
    assert policy.grants.enabled is False


def test_describe_shows_the_grants_and_the_digest_follows_them(world: World) -> None:
    before = world.policy()
    assert before.describe()["grants"] == {"enabled": True, "maxMinutes": 30, "maxUses": 20}
    world.user_config("[grants]\nmax_uses = 21\n")
    raised = world.policy()
    assert raised.describe()["grants"] == {"enabled": True, "maxMinutes": 30, "maxUses": 21}
    world.project_config("[grants]\nenabled = false\n")
    off = world.policy()
    assert off.describe()["grants"]["enabled"] is False
    assert len({digest(before), digest(raised), digest(off)}) == 3


def test_the_cached_policy_of_a_workspace_carries_its_grants(world: World) -> None:
    cache = PolicyCache(world.guard_home)
    assert cache.policy_for(world.project).grants == GrantSettings()
    world.project_config("[grants]\nmax_minutes = 7\n")
    assert cache.policy_for(world.project).grants.max_minutes == 7


def test_the_guides_grants_table_states_the_defaults() -> None:
    """The ``[grants]`` example in docs/policy.md parses and says the defaults."""
    guide = (Path(__file__).resolve().parents[3] / "docs" / "policy.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", guide, flags=re.S)
    (example,) = [b for b in blocks if b.startswith("[grants]\n")]
    layer = parse_layer(example, "<guide>", "user")
    assert layer.problems == ()
    assert layer.grants == GrantSettings()
    assert layer.grants.model_fields_set == {"enabled", "max_minutes", "max_uses"}


def test_a_refusal_names_the_line_of_its_key_in_either_spelling(world: World) -> None:
    world.project_config("# team limits\n[grants]\nenabled = true\n\nmaxUses = 99\n")
    policy = world.policy()
    assert policy.grants.max_uses == 20
    assert refused(policy) == [("grants.max_uses", "project", 5)]
