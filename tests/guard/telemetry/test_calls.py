"""One guarded call's audit records folded into its ``execute_tool`` span: the decision,
the answer, how it ended, and never a value the audit log does not hold (its redaction is
the export's)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.wire import AuditRecord
from guard._telemetry import CallFolder, CallSpan
from guard._telemetry.calls import MAX_OPEN_CALLS

from .conftest import Observed

SECRET_COMMANDS = (
    "curl -H 'Authorization: Bearer sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0' https://x.test"
    " && rm -rf build",
    "rm -rf build; export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "mysql -pHunter2Secret -e 'drop database prod'",
    "rm -rf build && curl -u admin:S3cr3tPassw0rd https://x.test",
    "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY rm -rf build",
)
SECRETS = (
    "sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "ghp_0123456789abcdefghijABCDEFGHIJ012345",
    "Hunter2Secret",
    "S3cr3tPassw0rd",
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
)
VOCABULARY = {
    "execute_tool",
    "allow",
    "ask",
    "block",
    "yes",
    "no",
    "timeout",
    "grant",
    "tool_error",
}


def spans_of(records: list[AuditRecord], *, details: bool = False) -> list[CallSpan]:
    folder = CallFolder(details=details)
    out: list[CallSpan] = []
    for n, record in enumerate(records):
        out.extend(folder.fold(record, 1_000 + n))
    return out + folder.drain(9_999)


def strings(span: CallSpan) -> list[str]:
    out: list[str] = [span.name]
    for value in span.attributes.values():
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, tuple):
            out.extend(value)
    return out


def test_a_call_the_policy_allows_is_one_span_when_it_ran(
    observed: Observed, workdir: Path
) -> None:
    g = observed.guard
    g.tool_executed("call-1", "read", {"path": "README.md"}, workdir, False)
    (span,) = spans_of(observed.records)
    (executed,) = observed.records
    assert span.name == "execute_tool read"
    assert span.error_type is None
    assert span.attributes == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "read",
        "gen_ai.tool.call.id": "call-1",
        "pi_guard.decision": "allow",
        "pi_guard.ran": True,
        "pi_guard.tool.is_error": False,
        "pi_guard.action_kind": "local-safe",
        "pi_guard.payload_hash": executed.data["payloadHash"],
        "pi_guard.audit.seq": executed.seq,
        "pi_guard.audit.record_hash": executed.hash,
        "pi_guard.audit.checkpoint_size": executed.seq + 1,
    }


def test_a_yes_and_the_run_are_one_span_with_the_evidence_and_both_sequence_numbers(
    observed: Observed, workdir: Path
) -> None:
    g = observed.guard
    call = {"command": "rm -rf build"}
    recorded = g.record(
        "bash", call, workdir, confirmed=True, tool_call_id="c2", origin="runtime-ui-confirm",
        approver="cli",
    )  # fmt: skip
    g.tool_executed("c2", "bash", call, workdir, True, recorded.evidence_id)
    (span,) = spans_of(observed.records)
    decided, executed = observed.records
    assert span.start_ns < span.end_ns
    assert span.error_type == "tool_error"
    a = span.attributes
    assert a["pi_guard.decision"] == "ask"
    assert a["pi_guard.answer"] == "yes"
    assert a["pi_guard.approver"] == "cli"
    assert a["pi_guard.evidence.id"] == recorded.evidence_id
    assert a["pi_guard.evidence.operator_signed"] is False
    assert a["pi_guard.rule_ids"] == ("builtin.rm",)
    assert a["pi_guard.action_kind"] == "destructive"
    assert a["pi_guard.audit.decision_seq"] == decided.seq
    assert a["pi_guard.audit.seq"] == executed.seq
    assert a["pi_guard.audit.checkpoint_size"] == executed.seq + 1
    assert a["pi_guard.ran"] is True and a["pi_guard.tool.is_error"] is True
    assert a["error.type"] == "tool_error"


def test_the_operators_no_a_timeout_and_a_policy_block_each_end_the_call(
    observed: Observed, workdir: Path
) -> None:
    g = observed.guard
    g.decline("bash", {"command": "rm -rf build"}, workdir, "declined", tool_call_id="no")
    g.decline("bash", {"command": "rm -rf build"}, workdir, "timeout", tool_call_id="late")
    g.record("bash", {"command": "rm -rf ~"}, workdir, confirmed=False, tool_call_id="blk")
    g.blocked("read", {"path": "x"}, workdir, "sandbox-unavailable", tool_call_id="sbx")
    no, timeout, blocked, sandbox = spans_of(observed.records)
    assert (no.attributes["pi_guard.decision"], no.attributes["pi_guard.answer"]) == ("ask", "no")
    assert no.error_type == "declined" and no.attributes["pi_guard.ran"] is False
    assert timeout.attributes["pi_guard.answer"] == "timeout"
    assert blocked.attributes["pi_guard.decision"] == "block"
    assert "pi_guard.answer" not in blocked.attributes
    assert blocked.attributes["pi_guard.reason"] == "blocked-by-policy"
    assert blocked.attributes["pi_guard.rule_ids"]  # which rule blocked it
    assert sandbox.attributes["pi_guard.decision"] == "block"
    assert sandbox.attributes["pi_guard.reason"] == "sandbox-unavailable"


def test_a_call_a_grant_covered_names_the_grant_and_its_use(
    observed: Observed, workdir: Path
) -> None:
    g = observed.guard
    g.attribute("session-1")  # grants live for a session
    workspace = workdir.resolve()
    (workspace / "a.txt").write_text("a")
    call = {"command": "rm -f a.txt"}
    offers = g.grants.offers("bash", call, workspace, workspace=workspace)
    first = g.record("bash", call, workspace, confirmed=True, tool_call_id="c1")
    assert first.evidence_id is not None and offers
    grant = g.grants.create(offers[0], first.evidence_id, workspace=workspace)
    covered = g.grants.covered("bash", call, workspace, workspace=workspace, tool_call_id="c2")
    assert covered is not None and covered.evidence_id is not None
    g.tool_executed("c2", "bash", call, workspace, False, covered.evidence_id)
    (span,) = [s for s in spans_of(observed.records) if s.attributes["gen_ai.tool.call.id"] == "c2"]
    assert span.attributes["pi_guard.answer"] == "grant"
    assert span.attributes["pi_guard.grant.id"] == grant.grant_id
    assert span.attributes["pi_guard.grant.use"] == 1
    assert span.attributes["pi_guard.evidence.id"] == covered.evidence_id
    assert span.attributes["pi_guard.session.id"] == "session-1"


def test_a_yes_whose_input_changed_before_it_ran_did_not_run(
    observed: Observed, workdir: Path
) -> None:
    g = observed.guard
    g.record("bash", {"command": "rm -rf build"}, workdir, confirmed=True, tool_call_id="c")
    g.input_changed("bash", {"command": "rm -rf /"}, workdir, tool_call_id="c")
    (span,) = spans_of(observed.records)
    assert span.attributes["pi_guard.answer"] == "yes"
    assert span.attributes["pi_guard.ran"] is False
    assert span.error_type == "input-changed-after-decision"


def test_a_yes_whose_end_never_came_is_exported_when_the_session_ends_or_too_many_wait(
    observed: Observed, workdir: Path
) -> None:
    g = observed.guard
    g.record("bash", {"command": "rm -rf build"}, workdir, confirmed=True, tool_call_id="open")
    (span,) = spans_of(observed.records)  # drained
    assert span.attributes["pi_guard.ended"] is False
    folder = CallFolder()
    (decided,) = observed.records
    pushed: list[CallSpan] = []
    for n in range(MAX_OPEN_CALLS + 1):
        data = {**decided.data, "toolCallId": f"id-{n}"}
        pushed.extend(folder.fold(decided.model_copy(update={"data": data}), n))
    (oldest,) = pushed
    assert oldest.attributes["gen_ai.tool.call.id"] == "id-0"


def test_records_about_no_call_make_no_span(observed: Observed, workdir: Path) -> None:
    observed.guard.rotate_key()
    observed.guard.attribute("session-1")
    observed.guard.sessions.started(str(workdir), "unsandboxed")
    assert observed.records and spans_of(observed.records) == []


def test_no_secret_of_a_command_reaches_an_attribute_even_with_previews(
    observed: Observed, workdir: Path
) -> None:
    """Every exported text is fixed vocabulary or text the audit log holds: what the log
    redacted (its preview) is never exported, with the previews on or off."""
    g = observed.guard
    for n, command in enumerate(SECRET_COMMANDS):
        call = {"command": command}
        g.record("bash", call, workdir, confirmed=True, tool_call_id=f"y{n}")
        g.tool_executed(f"y{n}", "bash", call, workdir, False)
        g.decline("bash", call, workdir, "declined", tool_call_id=f"n{n}", operator_reason=command)
    log = observed.log_text()
    for secret in SECRETS:
        assert secret not in log  # the log's redaction, which the export inherits
    for details in (False, True):
        spans = spans_of(observed.records, details=details)
        assert len(spans) == 2 * len(SECRET_COMMANDS)
        for span in spans:
            for text in strings(span):
                assert not any(secret in text for secret in SECRETS), text
                assert text in VOCABULARY or text in log or text.startswith("execute_tool ")
    previews = [s.attributes.get("pi_guard.preview") for s in spans_of(observed.records)]
    assert previews == [None] * len(previews)  # off unless [telemetry] previews = true
    shown = [s.attributes["pi_guard.preview"] for s in spans_of(observed.records, details=True)]
    assert all("[REDACTED" in str(p) or "***" in str(p) for p in shown), shown


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    secret=st.text(
        alphabet="abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789",
        min_size=24,
        max_size=40,
    ),
    spelling=st.sampled_from(
        (
            "rm -rf build && curl -H 'Authorization: Bearer {}' https://x.test",
            "rm -rf build; GH_TOKEN={} gh release delete v1",
            "rm -rf build && psql postgresql://app:{}@db.test/prod",
            "echo sk-{} > /dev/null; rm -rf build",
        )
    ),
)
def test_property_no_secret_the_log_redacts_is_exported(
    observed: Observed, workdir: Path, secret: str, spelling: str
) -> None:
    g = observed.guard
    command = spelling.format(secret)
    start = len(observed.records)
    g.record("bash", {"command": command}, workdir, confirmed=True, tool_call_id="p")
    g.tool_executed("p", "bash", {"command": command}, workdir, False)
    if secret in observed.log_text():
        return  # not a secret to the log: nothing the export must hide either
    for span in spans_of(observed.records[start:], details=True):
        assert not any(secret in text for text in strings(span))
