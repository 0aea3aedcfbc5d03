"""``[telemetry]`` is the user's alone: a project file can never turn export on, point it
elsewhere or add headers; headers name environment variables, never hold secrets; the
standard ``OTEL_*`` variables count once the user's file turns export on; and the variables
that hold the collector's secrets never reach an agent command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guard._policy import Policy
from guard._policy.layering import load_layers
from guard._policy.settings.config import PROJECT_TELEMETRY_MESSAGE, parse_layer
from guard._sandbox.collect import credential_env_names
from guard._telemetry import ExportConfig, TelemetryOff, check_telemetry, export_config
from tests.cli_runner import invoke
from tests.otlp_receiver import otlp_receiver

ON = '[telemetry]\nenabled = true\nendpoint = "http://127.0.0.1:4318"\n'


def user_policy(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "operator-guard.toml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "table",
    [
        ON,
        '[telemetry]\nendpoint = "https://evil.test"\n',
        '[telemetry]\nheaders = { authorization = "PROJECT_TOKEN" }\n',
        "telemetry = { enabled = true }\n",
        "[telemetry]\nenabled = false\n",
    ],
)
def test_a_project_file_never_sets_telemetry(tmp_path: Path, table: str) -> None:
    layer = parse_layer(table, "project.toml", "project")
    assert layer.telemetry is None
    (problem,) = layer.problems
    assert problem.key == "telemetry"
    assert problem.message == PROJECT_TELEMETRY_MESSAGE
    # The user's own file still decides, whatever the project says.
    home, project = tmp_path / "home", tmp_path / "project"
    user_policy(home, "[telemetry]\nenabled = false\n")
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "operator-guard.toml").write_text(table)
    assert isinstance(export_config(home), TelemetryOff)
    policy = Policy.load(home, project)
    assert any(p.message == PROJECT_TELEMETRY_MESSAGE for p in policy.problems)


def test_policy_check_says_a_project_telemetry_table_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project" / ".pi"
    project.mkdir(parents=True)
    (project / "operator-guard.toml").write_text(ON)
    done = invoke("policy", "check", str(project / "operator-guard.toml"), home=tmp_path / "h")
    assert done.returncode == 2, done.stderr
    report = json.loads(done.stdout)
    assert report["valid"] is False
    assert any("[telemetry] is read from the user's file only" in p for p in report["problems"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[telemetry]\nheaders = { authorization = "Bearer abc123" }\n', "never the value"),
        ('[telemetry]\nheaders = { "bad header" = "TOKEN" }\n', "HTTP tokens"),
        ('[telemetry]\nendpoint = "ftp://collector"\n', "http:// or https://"),
        ('[telemetry]\nendpoint = "https://user:pw@collector"\n', "without credentials"),
        ("[telemetry]\nenable = true\n", "did you mean 'enabled'?"),
        ("[telemetry]\nqueue = 3\n", "greater than or equal to 16"),
        ("[telemetery]\nenabled = true\n", "did you mean 'telemetry'?"),
    ],
)
def test_a_bad_user_table_is_a_problem_with_its_line_and_export_stays_off(
    tmp_path: Path, text: str, message: str
) -> None:
    layer = parse_layer(text, "user.toml", "user")
    assert layer.telemetry is None
    assert any(message in p.message for p in layer.problems), layer.problems
    user_policy(tmp_path, text)
    assert isinstance(export_config(tmp_path), TelemetryOff)
    done = invoke("policy", "check", home=tmp_path)
    assert done.returncode == 2


def test_off_by_default_and_until_enabled(tmp_path: Path) -> None:
    off = export_config(tmp_path)
    assert isinstance(off, TelemetryOff) and off.reason == "not-enabled"
    user_policy(tmp_path, '[sandbox]\nmode = "required"\n')
    assert isinstance(export_config(tmp_path), TelemetryOff)
    user_policy(tmp_path, '[telemetry]\nendpoint = "http://x.test"\n')
    assert isinstance(export_config(tmp_path), TelemetryOff)
    # The OTEL_* variables alone never turn it on.
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x.test", "OTEL_TRACES_EXPORTER": "otlp"}
    assert isinstance(export_config(tmp_path, env), TelemetryOff)


def test_the_standard_variables_count_once_the_user_turned_it_on(tmp_path: Path) -> None:
    user_policy(tmp_path, "[telemetry]\nenabled = true\n")
    on = export_config(tmp_path, {"OTEL_EXPORTER_OTLP_HEADERS": "x=1"})
    assert isinstance(on, ExportConfig)
    assert on.endpoint is None and on.headers is None  # the SDK reads OTEL_EXPORTER_OTLP_*
    off = export_config(tmp_path, {"OTEL_SDK_DISABLED": "true"})
    assert isinstance(off, TelemetryOff) and off.reason == "sdk-disabled"


def test_headers_are_read_from_the_variables_the_policy_names(tmp_path: Path) -> None:
    user_policy(
        tmp_path,
        ON + 'headers = { authorization = "COLLECTOR_AUTH", "x-team" = "COLLECTOR_TEAM" }\n',
    )
    on = export_config(tmp_path, {"COLLECTOR_AUTH": "Bearer s3cret"})
    assert isinstance(on, ExportConfig)
    assert on.endpoint == "http://127.0.0.1:4318/v1/traces"
    assert on.headers == {"authorization": "Bearer s3cret"}
    assert on.missing_headers == ("COLLECTOR_TEAM",)


def test_the_collectors_secrets_never_reach_an_agent_command(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_policy(
        home,
        ON
        + 'headers = { authorization = "COLLECTOR_AUTH" }\n'
        + '[sandbox]\nkeep_env = ["COLLECTOR_AUTH"]\n',
    )
    sandbox = load_layers(home, tmp_path).sandbox  # what the sandbox's plan reads
    assert "COLLECTOR_AUTH" in sandbox.unset_env
    assert "COLLECTOR_AUTH" not in sandbox.keep_env
    names = ["COLLECTOR_AUTH", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]
    removed = credential_env_names(names, sandbox.unset_env, sandbox.keep_env)
    assert set(removed) == set(names)


def test_doctor_says_off_on_unreachable_and_what_the_sessions_dropped(tmp_path: Path) -> None:
    assert check_telemetry(tmp_path).reason == "telemetry-off"
    user_policy(tmp_path, '[telemetry]\nenabled = true\nendpoint = "http://127.0.0.1:9"\n')
    down = check_telemetry(tmp_path)
    assert (down.status, down.reason) == ("warn", "telemetry-endpoint-unreachable")
    assert down.subject == "http://127.0.0.1:9/v1/traces"
    with otlp_receiver() as receiver:
        user_policy(tmp_path, f'[telemetry]\nenabled = true\nendpoint = "{receiver.endpoint}"\n')
        assert check_telemetry(tmp_path).reason == "telemetry-on"
        session = tmp_path / "sessions" / "s1-ab"
        session.mkdir(parents=True)
        (session / "telemetry.json").write_text(
            json.dumps({"state": "on", "reason": "enabled", "exported": 5, "dropped": 2})
        )
        dropping = check_telemetry(tmp_path)
    assert (dropping.status, dropping.reason) == ("warn", "telemetry-dropping")
    assert "5 exported, 2 dropped" in dropping.detail
    user_policy(tmp_path, "[telemetry]\nenabled = true\nqueue = 1\n")
    assert check_telemetry(tmp_path).reason == "telemetry-policy-problem"
    user_policy(tmp_path, ON + 'headers = { authorization = "UNSET_VAR_FOR_TEST" }\n')
    assert check_telemetry(tmp_path).reason == "telemetry-header-unset"
