"""pi's file tools run in pi's own process: ``read /proc/self/environ`` would hand the agent
pi's environment (the provider's API keys, the telemetry header variables the sandbox removes
from agent commands). Every spelling is blocked (``builtin.process-environ``) for ``read``
and for the search tools that read contents beneath a path (``grep``), or list what could be
it (``find``); ``ls`` only names files and stays unasked."""

from __future__ import annotations

import os

import pytest

from guard._policy import Policy
from tests.guard.policy.conftest import World

SPELLINGS = [
    "/proc/self/environ",
    "/proc/{pid}/environ",
    "/proc/1/environ",
    "/proc/thread-self/environ",
    "/proc/self/task/{pid}/environ",
    "/proc/{pid}/task/{pid}/environ",
    "/proc/1/../self/environ",
    "/proc//self/./environ",
    "/proc/self/root/proc/self/environ",
    "/proc/self/cwd/../../../../../../../proc/self/environ",
    "/PROC/SELF/ENVIRON",
    "@/proc/self/environ",
    "links/env",
    "links/me/environ",
    "links/proc/self/environ",
]


@pytest.fixture
def policy(world: World) -> Policy:
    links = world.project / "links"
    links.mkdir()
    (links / "env").symlink_to("/proc/self/environ")
    (links / "me").symlink_to("/proc/self")
    (links / "proc").symlink_to("/proc")
    return world.policy()


@pytest.mark.parametrize("path", SPELLINGS)
def test_read_of_a_process_environment_is_blocked(world: World, policy: Policy, path: str) -> None:
    verdict = policy.classify("read", {"path": path.format(pid=os.getpid())}, world.project)
    assert (verdict.verdict, verdict.rule_ids) == ("block", ("builtin.process-environ",))


@pytest.mark.parametrize(
    "path", ["/proc/self", "/proc", "/proc/{pid}", "/proc/self/task", "links/me"]
)
def test_grep_beneath_a_process_is_blocked(world: World, policy: Policy, path: str) -> None:
    spelled = path.format(pid=os.getpid())
    verdict = policy.classify("grep", {"pattern": "KEY", "path": spelled}, world.project)
    assert verdict.verdict == "block"
    assert "builtin.process-environ" in verdict.rule_ids


@pytest.mark.parametrize("path", ["/proc/self", "/proc", "/proc/self/environ"])
def test_find_there_is_blocked(world: World, policy: Policy, path: str) -> None:
    verdict = policy.classify("find", {"pattern": "environ", "path": path}, world.project)
    assert verdict.verdict == "block"


def test_what_stays_unasked(world: World, policy: Policy) -> None:
    """Other files of /proc, a grep of the workspace, ls of /proc: nothing environ-shaped."""
    (world.project / "notes.txt").write_text("KEY\n")
    assert policy.classify("read", {"path": "/proc/cpuinfo"}, world.project).verdict == "allow"
    assert policy.classify("read", {"path": "/proc/self/status"}, world.project).verdict == "allow"
    assert policy.classify("grep", {"pattern": "KEY"}, world.project).verdict == "allow"
    assert policy.classify("ls", {"path": "/proc/self"}, world.project).verdict == "allow"
    assert policy.classify("read", {"path": "notes.txt"}, world.project).verdict == "allow"


def test_bash_in_the_sandbox_reads_only_its_own(world: World, policy: Policy) -> None:
    """A sandboxed command's /proc is its own PID namespace's: pi is not in it, and its own
    environment is the sandbox's minimal one. The rule still names the path in bash."""
    verdict = policy.classify("bash", {"command": "cat /proc/1/environ"}, world.project)
    assert verdict.verdict == "block"
