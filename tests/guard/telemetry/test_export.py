"""The exporter against a real OTLP/HTTP receiver on 127.0.0.1: spans arrive with the
required attributes; a receiver that is down, slow or refusing changes no decision and
delays no call (the queue is bounded, what it cannot take is dropped and counted)."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from guard import Guard
from guard._policy.settings.models import TelemetrySettings
from guard._telemetry import ExportConfig, Telemetry, child
from guard._telemetry.export import EXPORT_PROCESS, STATUS_FILE
from guard._telemetry.model import CallSpan
from tests.otlp_receiver import otlp_receiver

from .conftest import Observed

pytestmark = pytest.mark.integration

REQUIRED = (
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.tool.call.id",
    "pi_guard.decision",
    "pi_guard.action_kind",
    "pi_guard.audit.seq",
    "pi_guard.audit.checkpoint_size",
)


def config(endpoint: str, **settings: object) -> ExportConfig:
    chosen = TelemetrySettings.model_validate({"enabled": True, "endpoint": endpoint, **settings})
    return ExportConfig(settings=chosen, endpoint=endpoint + "/v1/traces", headers=None)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def run_calls(guard: Guard, workdir: Path, count: int) -> list[float]:
    """``count`` guarded calls (a yes and its run, a no); each call's seconds."""
    took = []
    for n in range(count):
        started = time.perf_counter()
        call = {"command": f"rm -rf build/{n}"}
        said = guard.record("bash", call, workdir, confirmed=True, tool_call_id=f"y{n}")
        guard.tool_executed(f"y{n}", "bash", call, workdir, False, said.evidence_id)
        guard.decline("bash", call, workdir, "declined", tool_call_id=f"n{n}")
        took.append(time.perf_counter() - started)
    return took


def decisions(guard: Guard) -> list[tuple[str, str]]:
    return [(r.event, str(r.data.get("reason", ""))) for r in _records(guard)]


def _records(guard: Guard) -> list:  # type: ignore[type-arg]
    from audit.verify import read_records

    return [r for r in read_records(guard.audit.path) if r.event != "log.created"]


def test_every_guarded_call_reaches_the_receiver_once_with_the_required_attributes(
    observed: Observed, workdir: Path, tmp_path: Path
) -> None:
    with otlp_receiver() as receiver:
        telemetry = Telemetry.start(config(receiver.endpoint), status_dir=tmp_path / "s")
        observed.guard.observer = telemetry.observe
        run_calls(observed.guard, workdir, 3)
        spans = receiver.wait_for(6)
        # The receiver has them before the export process hears its posts' answers and says
        # so (it runs niced: on a busy machine a moment later).
        deadline = time.monotonic() + 30
        while telemetry.status().exported < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        telemetry.close()
    assert len(spans) == 6
    assert sorted(s.attributes["gen_ai.tool.call.id"] for s in spans) == sorted(
        [f"y{n}" for n in range(3)] + [f"n{n}" for n in range(3)]
    )
    for span in spans:
        assert span.name == "execute_tool bash"
        assert span.kind == 1  # SPAN_KIND_INTERNAL
        assert all(key in span.attributes for key in REQUIRED), span.attributes
        assert span.resource["service.name"] == "pi-operator-guard"
        assert span.schema_url == "https://opentelemetry.io/schemas/1.44.0"
        assert span.start_ns <= span.end_ns
    yes = next(s for s in spans if s.attributes["gen_ai.tool.call.id"] == "y0")
    assert yes.attributes["pi_guard.answer"] == "yes"
    assert yes.attributes["pi_guard.evidence.id"].startswith("oce_")
    assert yes.status_code == 0  # unset: it ran
    no = next(s for s in spans if s.attributes["gen_ai.tool.call.id"] == "n0")
    assert no.attributes["pi_guard.answer"] == "no"
    assert no.attributes["error.type"] == "declined"
    assert no.status_code == 2  # error: the call did not run
    status = telemetry.status()
    assert (status.exported, status.dropped, status.state) == (6, 0, "on")
    written = json.loads((tmp_path / "s" / STATUS_FILE).read_text())
    assert written["exported"] == 6


def test_headers_the_policy_names_are_sent(observed: Observed, workdir: Path) -> None:
    with otlp_receiver() as receiver:
        chosen = config(receiver.endpoint)
        chosen = ExportConfig(chosen.settings, chosen.endpoint, {"x-api-key": "k-123"})
        telemetry = Telemetry.start(chosen)
        observed.guard.observer = telemetry.observe
        run_calls(observed.guard, workdir, 1)
        receiver.wait_for(2)
        telemetry.close()
    assert {r["x-api-key"] for r in receiver.requests} == {"k-123"}


def test_a_receiver_that_is_down_changes_no_decision_and_counts_what_it_lost(
    tmp_path: Path, workdir: Path
) -> None:
    with Guard.open(tmp_path / "plain") as plain:
        run_calls(plain, workdir, 5)
        expected = decisions(plain)
    with Guard.open(tmp_path / "down") as guard:
        endpoint = f"http://127.0.0.1:{free_port()}"
        telemetry = Telemetry.start(config(endpoint, timeout_seconds=0.5))
        guard.observer = telemetry.observe
        run_calls(guard, workdir, 5)
        assert decisions(guard) == expected
        deadline = time.monotonic() + 10
        while telemetry.status().dropped < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        telemetry.close(wait=0.2)
    status = telemetry.status()
    assert status.exported == 0
    assert status.dropped == 10
    assert status.last_error is not None
    assert "10 dropped" in status.line()


def test_a_slow_receiver_delays_no_call_and_a_full_queue_drops_and_counts(
    observed: Observed, workdir: Path
) -> None:
    # The receiver holds each request far longer than the calls take even on a loaded machine
    # (60 calls take about 1 s quiet, 4 s under a full suite): a call that waited for it shows.
    with otlp_receiver(delay=30.0) as receiver:
        telemetry = Telemetry.start(config(receiver.endpoint, queue=16, timeout_seconds=40))
        observed.guard.observer = telemetry.observe
        started = time.perf_counter()
        took = run_calls(observed.guard, workdir, 60)
        elapsed = time.perf_counter() - started
        status = telemetry.status()
        telemetry.close(wait=0.1)
    # 120 calls: one batch (what came in its first 0.2 s) sits in the slow receiver, 16
    # wait, the rest were dropped at once.
    assert elapsed < 15.0, elapsed
    assert max(took) < 1.0, max(took)
    assert status.exported == 0
    assert status.queued <= 16
    assert status.dropped > 0
    # Closing waits 0.1 s at most: what still waits is dropped too, and counted.
    assert telemetry.status().dropped >= status.dropped + status.queued
    assert receiver.spans == [] or len(receiver.spans) <= 120 - status.dropped - status.queued


def test_a_refusing_collector_counts_its_refusals(observed: Observed, workdir: Path) -> None:
    with otlp_receiver(status=400) as receiver:
        telemetry = Telemetry.start(config(receiver.endpoint))
        observed.guard.observer = telemetry.observe
        run_calls(observed.guard, workdir, 2)
        telemetry.close(wait=5)
    assert telemetry.status().dropped == 4
    assert telemetry.status().exported == 0


def test_an_exporter_that_cannot_start_costs_no_call(observed: Observed, workdir: Path) -> None:
    says_broken = (
        sys.executable, "-c",
        "import sys; sys.stdin.readline(); print('{\"broken\": \"no exporter here\"}')",
    )  # fmt: skip
    telemetry = Telemetry.start(config("http://127.0.0.1:9"), command=says_broken)
    observed.guard.observer = telemetry.observe
    time.sleep(0.5)  # it said so before the calls
    run_calls(observed.guard, workdir, 2)
    telemetry.close(wait=2)
    status = telemetry.status()
    assert status.state == "broken"
    assert status.dropped == 4
    assert "no exporter here" in (status.last_error or "")


def test_an_export_process_that_ends_costs_no_call_and_its_calls_are_counted(
    observed: Observed, workdir: Path
) -> None:
    telemetry = Telemetry.start(config("http://127.0.0.1:9"), command=("/bin/false",))
    observed.guard.observer = telemetry.observe
    took = run_calls(observed.guard, workdir, 3)
    telemetry.close(wait=2)
    status = telemetry.status()
    assert status.state == "broken"
    assert "export process ended" in (status.last_error or "")
    assert status.dropped == 6  # every call: none was exported
    assert max(took) < 1.0


def test_the_export_process_says_when_it_cannot_start() -> None:
    out = io.BytesIO()
    code = child.main(io.BytesIO(b'{"endpoint": "http://127.0.0.1:9"}\n'), out)  # no timeout
    assert code == 1
    (said,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert said["broken"].startswith("exporter could not start: KeyError")


def test_a_span_crosses_the_pipe_unchanged() -> None:
    span = CallSpan(
        "execute_tool bash", 1, 2,
        {"gen_ai.tool.name": "bash", "pi_guard.ran": True, "pi_guard.audit.seq": 7,
         "pi_guard.rule_ids": ("builtin.rm", "user.x"), "pi_guard.reason": "naïve ✓"},
        error_type="declined",
    )  # fmt: skip
    line = child.span_line(span)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert child.read_span(line) == span


def _export_processes() -> list[int]:
    """This process's children that run the export process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if parent == os.getpid() and b"guard._telemetry.child" in cmdline:
            found.append(int(entry.name))
    return found


def test_the_export_process_gives_way_to_the_calls_once_it_is_loaded(
    observed: Observed, workdir: Path
) -> None:
    """Encoding and posting run niced, so that on a busy machine they take no time slice
    from a call; the guard's own process keeps its priority."""
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    with otlp_receiver() as receiver:
        telemetry = Telemetry.start(config(receiver.endpoint))
        observed.guard.observer = telemetry.observe
        run_calls(observed.guard, workdir, 1)
        receiver.wait_for(2)  # exported: the process is loaded and said ready
        [pid] = _export_processes()
        niceness = os.getpriority(os.PRIO_PROCESS, pid)
        threads = [
            os.getpriority(os.PRIO_PROCESS, int(task.name))
            for task in Path(f"/proc/{pid}/task").iterdir()
        ]
        telemetry.close()
    assert niceness == max(child.NICENESS, ours)
    assert min(threads) >= max(child.NICENESS, ours)  # the reader thread too
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours


def test_in_process_the_export_loop_leaves_the_caller_s_priority_alone() -> None:
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    out = io.BytesIO()
    child.main(io.BytesIO(b'{"endpoint": "http://127.0.0.1:9", "timeout": 0.1}\n'), out)
    assert b'"ready": true' in out.getvalue() or b'"ready":true' in out.getvalue()
    assert os.getpriority(os.PRIO_PROCESS, 0) == ours


def _voluntary_switches(pid: int) -> int:
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        for line in (task / "status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                total += int(line.split()[1])
    return total


def test_calls_back_to_back_wake_the_export_process_a_few_times_a_second() -> None:
    """Each wake-up of the export process can take a time slice from the sidecar's core: it
    reads what the pipe holds, then pauses, instead of waking for every call's line."""
    calls = 600
    with otlp_receiver() as receiver:
        process = subprocess.Popen(
            EXPORT_PROCESS, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert process.stdin is not None and process.stdout is not None
        settings = {"endpoint": receiver.endpoint + "/v1/traces", "timeout": 5, "queue": 4096}
        process.stdin.write(json.dumps(settings).encode() + b"\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline()) == {"ready": True}
        before = _voluntary_switches(process.pid)
        started = time.monotonic()
        for n in range(calls):  # one write per call, a millisecond apart, as calls come
            span = CallSpan("execute_tool bash", n, n + 1, {"gen_ai.tool.call.id": f"c{n}"})
            process.stdin.write(child.span_line(span))
            process.stdin.flush()
            time.sleep(0.001)
        spent = time.monotonic() - started
        receiver.wait_for(calls, timeout=30)
        woke = _voluntary_switches(process.pid) - before
        process.stdin.close()
        assert process.wait(timeout=30) == 0
    # At most one read a pause while the calls came, and a few more for the posts and their
    # answers (about 60 on a quiet machine; 2,200 when it woke for each line): never one a call.
    reads = spent / child.READ_PAUSE_SECONDS
    assert woke < reads * 4 + 100, (woke, spent)
    assert woke < calls / 2, (woke, spent)
