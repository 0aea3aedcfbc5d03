"""A log edited in the middle, in the real pi (both pinned versions): pi starts and says the
log is damaged, a risky call is blocked with ``audit-integrity`` and no new head is signed;
after ``pi-guard audit recover`` the guard asks and records again, and the recovery is in
the log."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from tests.guard.sidecar.test_sidecar_integrity import rewritten_record
from tools.pi.scripted_model import ScriptedModelServer

from .pi_world import World, bash, confirms, notices, result_text, statuses, tool_ends, turns

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("bwrap_required")]


def yes(_request: Mapping[str, Any]) -> bool:
    return True


# Every damage (a changed byte, a removed line, two lines swapped, a record rewritten with its
# chain recomputed) runs in process against the sidecar: tests/guard/sidecar/
# test_sidecar_integrity.py::test_a_log_damaged_in_the_middle_is_never_signed_over_until_recovered.
# What pi shows is the same for each; here the one that leaves a valid chain.
DAMAGE: dict[str, Callable[[list[bytes]], list[bytes]]] = {
    "a record rewritten, chain recomputed": rewritten_record,
}


@pytest.mark.variants_on_newest_pi
@pytest.mark.parametrize("damage", DAMAGE.values(), ids=list(DAMAGE))
def test_a_log_damaged_in_the_middle_blocks_until_recovered(
    world: World, model_server: ScriptedModelServer, damage: Callable[[list[bytes]], list[bytes]]
) -> None:
    model_server.add_scenario("rm-a", turns(bash("rm -rf a")))
    model_server.add_scenario("rm-b", turns(bash("rm -rf b")))
    model_server.add_scenario("rm-c", turns(bash("rm -rf c")))
    with world.rpc() as pi:
        pi.prompt("scenario:rm-a", yes)  # a used log: asked, recorded, run
    assert not (world.project / "a").exists()
    log = world.home / "audit.jsonl"
    head = world.home / "audit.jsonl.head"
    log.write_bytes(b"".join(damage(log.read_bytes().splitlines(keepends=True))))
    assert world.cli("audit", "verify").returncode == 4
    before = (log.read_bytes(), head.read_bytes())

    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-b", yes)
    said = " ".join([*notices(events), *(s or "" for s in statuses(events))])
    assert "the audit log does not verify" in said, said
    assert "pi-guard audit verify" in said and "pi-guard audit recover" in said
    assert confirms(events) == []  # no dialog whose Yes could not be recorded
    (end,) = tool_ends(events)
    assert end["isError"] is True and "audit-integrity" in result_text(end)
    assert (world.project / "b").exists()
    assert (log.read_bytes(), head.read_bytes()) == before  # nothing signed over the damage

    recovered = world.cli("audit", "recover", "--reason", "edited by hand")
    assert recovered.returncode == 0, recovered.stderr
    with world.rpc() as pi:
        events = pi.prompt("scenario:rm-c", yes)
    assert len(confirms(events)) == 1
    assert not (world.project / "c").exists()
    records = [json.loads(line) for line in log.read_bytes().splitlines()]
    assert records[1]["event"] == "log.recovered"
    assert records[1]["data"]["operatorReason"] == "edited by hand"
    assert world.cli("audit", "verify").returncode == 0
