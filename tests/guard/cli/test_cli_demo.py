"""``pi-guard demo``: the story in pure Python, and a report that matches the story."""

from __future__ import annotations

from tests.cli_runner import invoke


def test_the_demo_tells_its_story_and_its_report_counts_it() -> None:
    done = invoke("demo")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "demo finished: every step behaved as documented" in out
    assert "3. operator said yes" in out
    assert "confirmed by the operator: 1" in out  # one yes in the story, one in the report
    assert out.count("audit report") == 1
    assert (
        "7. evidence for another call -> rejected "
        "(mismatch: payload-hash-mismatch, tool-call-id-mismatch)"
    ) in out
