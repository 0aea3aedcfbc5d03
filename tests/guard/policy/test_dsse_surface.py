"""``pi-guard evidence`` (export signs a statement with the guard's key) is the guard's own
surface: the agent's bash never runs it, in any spelling, and pi's file tools never read the
key it signs with."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from tests.guard.policy.conftest import World

SPELLINGS = (
    "pi-guard evidence export oce_AAAAAAAAAAAAAAAAAAAAAA --dsse",
    "pi-guard --home ~/.pi/agent/operator-guard evidence export oce_x --dsse > s.json",
    "pi-guard evidence verify-dsse s.json --key k.pub",
    ".venv/bin/pi-guard evidence export oce_x --dsse",
    "python -m guard evidence export oce_x --dsse",
    "python3 -Im guard evidence export oce_x --dsse",
    "uv run pi-guard evidence export oce_x --dsse",
    "env PI_OPERATOR_GUARD_HOME=/var/scratch/h pi-guard evidence export oce_x --dsse",
    "bash -c 'pi-guard evidence export oce_x --dsse'",
    'sh -c "pi-guard evidence export oce_x --dsse | tee out.json"',
    "echo oce_x | xargs -I{} pi-guard evidence export {} --dsse",
    "sudo -u me pi-guard evidence export oce_x --dsse",
    "nohup pi-guard evidence export oce_x --dsse &",
    'python -c "from guard.evidence import sign_statement"',
    'python3 -c "import guard.evidence as e; e.dsse_from_log"',
)


@pytest.mark.parametrize("command", SPELLINGS)
def test_the_agent_never_runs_evidence_export(bash: Callable[[str], Verdict], command: str) -> None:
    verdict = bash(command)
    assert verdict.verdict == "block", (command, verdict)


def test_pi_file_tools_never_read_the_key_that_signs_statements(world: World) -> None:
    policy = world.policy()
    key = world.guard_home / "signing.key"
    for tool, args in (
        ("read", {"path": str(key)}),
        ("grep", {"pattern": "KEY", "path": str(key)}),
    ):
        verdict = policy.classify(tool, args, world.project)
        assert verdict.verdict == "block", (tool, verdict)
