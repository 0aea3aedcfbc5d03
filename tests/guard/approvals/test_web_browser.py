"""The approval page in a real browser (Debian's chromium, headless): log in with the one-time
address, answer Yes, answer No with a reason, a stale page refused, and the page following
the pi dialog when it answers first."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from guard._approvals.web import ApprovalPage
from guard._sidecar.handlers.methods import Sidecar
from tests.guard.sidecar.test_sidecar_methods import result

pytestmark = pytest.mark.integration


class World:
    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.home.mkdir(mode=0o700)
        self.project = tmp_path / "project"
        (self.project / "build").mkdir(parents=True)
        self.sidecar = Sidecar(self.home)
        self.page = ApprovalPage(self.home)
        self.page.start()

    def ask(self, command: str = "rm -rf build", call_id: str = "c1") -> dict[str, Any]:
        params = {"toolName": "bash", "input": {"command": command}, "cwd": str(self.project),
                  "toolCallId": call_id}  # fmt: skip
        approval: dict[str, Any] = result(self.sidecar, "evaluate", params)["approval"]
        return approval

    def asked(self, approval: dict[str, Any]) -> dict[str, Any]:
        """The question as the broker holds it: open, or the answer that won."""
        asked = self.sidecar.session.desk.broker.result(approval["id"])
        assert asked is not None
        answer = asked.answer.model_dump(mode="json") if asked.answer is not None else None
        return {"open": asked.answer is None and asked.withdrawn is None, "answer": answer}


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    made = World(tmp_path)
    yield made
    made.page.close()
    made.sidecar.close()


def question(page: Page, approval: dict[str, Any]) -> Any:
    return page.locator(f'li.question[data-id="{approval["id"]}"]')


def test_log_in_and_answer_yes(world: World, page: Page) -> None:
    approval = world.ask()
    page.goto(world.page.login_url)
    item = question(page, approval)
    expect(item.locator(".text")).to_contain_text("rm -rf build")
    expect(item.locator(".digest")).to_contain_text(approval["digest"])
    item.locator(".yes").click()
    # The outcome stays readable although the answered question left the pending list ...
    expect(item.locator(".outcome")).to_have_text("answered: yes")
    polled = world.asked(approval)
    assert polled["answer"]["decision"] == "yes" and polled["answer"]["approver"] == "web"
    # ... and then the question leaves the page.
    expect(item).to_have_count(0, timeout=10_000)


def test_no_with_a_reason(world: World, page: Page) -> None:
    approval = world.ask()
    page.goto(world.page.login_url)
    item = question(page, approval)
    item.locator(".reason").fill("use git clean -n first")
    item.locator(".no").click()
    expect(item.locator(".outcome")).to_have_text("answered: no")
    answer = world.asked(approval)["answer"]
    assert (answer["decision"], answer["reason"]) == ("no", "use git clean -n first")


def test_without_logging_in_the_page_lists_nothing(world: World, page: Page) -> None:
    world.ask()
    page.goto(world.page.url)
    expect(page.locator("#state")).to_contain_text("not logged in")
    expect(page.locator("li.question")).to_have_count(0)


def test_a_stale_page_is_refused(world: World, page: Page) -> None:
    approval = world.ask()
    page.goto(world.page.login_url)
    item = question(page, approval)
    expect(item).to_have_count(1)
    # The question is answered in pi and gone; the page still shows it for a moment: its
    # answer is refused, never taken for the next call.
    page.route("**/api/pending", lambda route: None)  # the page stops refreshing
    said = {"id": approval["id"], "digest": approval["digest"], "decision": "no"}
    assert result(world.sidecar, "approvals.answer", said)["outcome"] == "accepted"
    world.ask("rm -rf build", "c2")  # the next call: a new question
    item.locator(".yes").click()
    expect(item.locator(".outcome")).to_have_text("not accepted: already-answered")
    assert world.asked(approval)["answer"]["decision"] == "no"


def test_the_page_follows_the_pi_dialog_answering_first(world: World, page: Page) -> None:
    first, second = world.ask("rm -rf build", "c1"), world.ask("rm -rf build/x", "c2")
    page.goto(world.page.login_url)
    expect(page.locator("li.question")).to_have_count(2)
    said = {"id": first["id"], "digest": first["digest"], "decision": "yes"}
    assert result(world.sidecar, "approvals.answer", said)["outcome"] == "accepted"
    expect(question(page, first)).to_have_count(0)  # answered in pi: it leaves the page
    expect(question(page, second)).to_have_count(1)
    expect(page.locator("#state")).to_have_text("1 pending")


def test_a_grant_chosen_on_the_page(world: World, page: Page) -> None:
    for name in ("a.txt", "b.txt"):
        (world.project / name).write_text(name)
    result(world.sidecar, "sandbox.plan", {"cwd": str(world.project), "sessionId": "s1",
                                           "mode": "tui"})  # fmt: skip
    approval = world.ask("rm -f a.txt", "c1")
    page.goto(world.page.login_url)
    item = question(page, approval)
    buttons = item.locator("button.grant")
    expect(buttons).to_have_count(2)
    expect(buttons.nth(1)).to_contain_text("./*.txt")
    buttons.nth(1).click()
    expect(item.locator(".outcome")).to_have_text("answered: yes")
    assert world.asked(approval)["answer"]["grant"] == 1


def test_each_card_says_whose_question_it_is_and_the_time_left(world: World, page: Page) -> None:
    result(world.sidecar, "sandbox.plan", {"cwd": str(world.project), "sessionId": "sess-abc",
                                           "mode": "tui"})  # fmt: skip
    approval = world.ask()
    page.goto(world.page.login_url)
    item = question(page, approval)
    expect(item.locator(".whose")).to_have_text(f"pi session sess-abc · folder {world.project}")
    # Seconds left and the local time of the deadline, not a UTC stamp.
    expect(item.locator(".left")).to_contain_text(" s left (until ")
    left = item.locator(".left").inner_text()
    assert re.fullmatch(
        r"\d+ s left \(until \d\d:\d\d:\d\d( [AP]M)?\); no answer counts as No", left
    )
    assert approval["id"] in item.locator(".digest").inner_text()
    assert "Z" not in item.locator(".digest").inner_text().split(" · ")[-1]  # no ISO stamp


def test_a_used_login_link_gets_a_page_in_words(world: World, page: Page) -> None:
    login = world.page.login_url
    page.goto(login)
    expect(page.locator("#state")).to_have_text("nothing pending")
    second = page.context.new_page()
    reply = second.goto(login)  # used: a page that says what to do, not {"error": ...}
    assert reply is not None and reply.status == 403
    assert "text/html" in (reply.headers.get("content-type") or "")
    expect(second.locator("body")).to_contain_text("Run /guard in pi for a new login link")
    assert "bad-login" not in second.content()


def test_not_logged_in_says_where_the_login_link_is(world: World, page: Page) -> None:
    page.goto(world.page.url)
    expect(page.locator("#state")).to_contain_text("/guard in pi prints one")
