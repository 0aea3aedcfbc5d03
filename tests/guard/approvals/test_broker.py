"""The broker: the first valid answer wins, from any screen; every other answer says why not."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from freezegun import freeze_time

from audit.wire import utc_now
from guard._approvals import AnswerRequest, ApprovalBroker, Pending, question_digest

DIGEST = question_digest("t", "m", "d", {"payloadHash": "sha256:" + "1" * 64})


def ask(broker: ApprovalBroker, timeout_ms: int = 60_000) -> Pending:
    return broker.ask(kind="call", title="t", message="m", details="d", digest=DIGEST,
                      tool_name="bash", timeout_ms=timeout_ms)  # fmt: skip


def yes(pending: Pending, digest: str | None = None) -> AnswerRequest:
    return AnswerRequest(id=pending.id, digest=digest or pending.digest, decision="yes")


def test_the_digest_names_what_was_shown_and_the_call() -> None:
    call = {"payloadHash": "sha256:" + "1" * 64}
    assert question_digest("t", "m", "d", call) == DIGEST
    for other in (("T", "m", "d", call), ("t", "m ", "d", call), ("t", "m", "d", {})):
        assert question_digest(*other) != DIGEST


def test_the_first_answer_wins_and_later_ones_say_why_not() -> None:
    broker = ApprovalBroker()
    pending = ask(broker)
    assert broker.pending() == [pending]
    assert broker.answer(yes(pending), "cli") == "accepted"
    no = AnswerRequest(id=pending.id, digest=pending.digest, decision="no")
    assert broker.answer(no, "pi-dialog") == "already-answered"
    asked = broker.result(pending.id)
    assert asked is not None and asked.answer is not None
    assert (asked.answer.decision, asked.answer.approver) == ("yes", "cli")
    assert broker.pending() == []


def test_a_stale_digest_an_unknown_id_a_late_or_withdrawn_answer_lose() -> None:
    broker = ApprovalBroker()
    pending = ask(broker)
    assert broker.answer(yes(pending, "sha256:" + "2" * 64), "web") == "stale"
    other = AnswerRequest(id="apr_" + "x" * 20, digest=pending.digest, decision="yes")
    assert broker.answer(other, "cli") == "unknown-id"
    with freeze_time(utc_now() + timedelta(seconds=61)):
        assert broker.answer(yes(pending), "cli") == "expired"
        assert broker.pending() == []
    late = ask(broker)
    closed = broker.close(late.id, "timeout")
    assert closed is not None and closed.withdrawn == "timeout"
    assert broker.answer(yes(late), "cli") == "unknown-id"
    kept = ask(broker)
    gone = {a.pending.id: a for a in broker.withdraw_all("sidecar-stopped")}
    assert set(gone) == {pending.id, kept.id}  # the late one too: nothing stays open
    assert gone[kept.id].withdrawn == "sidecar-stopped"
    assert broker.answer(yes(kept), "cli") == "unknown-id"


def test_two_pending_questions_are_answered_in_any_order() -> None:
    broker = ApprovalBroker()
    first, second = ask(broker), ask(broker)
    assert broker.answer(yes(second), "cli") == "accepted"
    assert broker.pending() == [first]
    assert broker.answer(AnswerRequest(id=first.id, digest=first.digest, decision="no"),
                         "pi-dialog") == "accepted"  # fmt: skip
    results = [broker.result(p.id) for p in (first, second)]
    assert [r.answer.decision for r in results if r and r.answer] == ["no", "yes"]


@pytest.mark.parametrize("screens", [2, 8])
def test_many_screens_at_once_exactly_one_wins(screens: int) -> None:
    broker = ApprovalBroker()
    pending = ask(broker)
    start = threading.Barrier(screens)
    outcomes: list[str] = []

    def screen(n: int) -> None:
        start.wait()
        decision = "yes" if n % 2 else "no"
        request = AnswerRequest(id=pending.id, digest=pending.digest, decision=decision)
        outcomes.append(broker.answer(request, "cli" if n % 2 else "web"))

    threads = [threading.Thread(target=screen, args=(n,)) for n in range(screens)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["accepted"] + ["already-answered"] * (screens - 1)


def test_a_waiting_screen_wakes_on_a_change() -> None:
    broker = ApprovalBroker()
    seen = broker.version
    threading.Timer(0.05, lambda: ask(broker)).start()
    assert broker.wait_change(seen, timeout=5) != seen
    assert broker.wait_change(broker.version, timeout=0.05) == broker.version


def test_state_says_what_became_of_a_question_without_answering_it() -> None:
    broker = ApprovalBroker()
    answered, withdrawn, late, still = ask(broker), ask(broker), ask(broker, 1), ask(broker)
    assert broker.answer(yes(answered), "cli") == "accepted"
    broker.close(answered.id)
    broker.close(withdrawn.id, "timeout")
    with freeze_time(utc_now() + timedelta(seconds=2)):
        states = [broker.state(p.id) for p in (answered, withdrawn, late, still)]
    assert states == ["answered", "withdrawn", "expired", "open"]
    assert broker.state("apr_" + "z" * 20) == "unknown"
    assert broker.result(still.id) is not None and broker.result(still.id).answer is None  # type: ignore[union-attr]


def test_a_grant_comes_only_with_a_yes_and_only_one_the_question_offers() -> None:
    broker = ApprovalBroker()
    pending = broker.ask(kind="call", title="t", message="m", details="d", digest=DIGEST,
                         tool_name="bash", timeout_ms=60_000, grants=("exactly a.txt", "*.txt"))  # fmt: skip

    def answer(decision: str, grant: int) -> str:
        request = AnswerRequest(id=pending.id, digest=pending.digest, decision=decision,
                                grant=grant)  # type: ignore[arg-type]  # fmt: skip
        return broker.answer(request, "web")

    assert answer("no", 0) == "stale"
    plain = broker.ask(kind="call", title="t", message="m", details="d", digest=DIGEST,
                       tool_name="bash", timeout_ms=60_000)  # fmt: skip
    request = AnswerRequest(id=plain.id, digest=plain.digest, decision="yes", grant=0)
    assert broker.answer(request, "cli") == "stale"  # it offers none
    assert answer("yes", 1) == "accepted"
    asked = broker.result(pending.id)
    assert asked is not None and asked.answer is not None and asked.answer.grant == 1
