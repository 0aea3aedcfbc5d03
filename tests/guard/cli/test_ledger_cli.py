"""``pi-guard ledger init|status`` against the run's PostgreSQL server."""

from __future__ import annotations

import json
import os
from pathlib import Path

from guard import Guard
from tests.cli_runner import Result, invoke


def run(home: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    base = {k: v for k, v in os.environ.items() if not k.endswith("GUARD_LEDGER")}
    return invoke(*args, home=home, env={**base, **(env or {})})


def test_init_then_status_through_the_user_config(tmp_path: Path, pg_url: str) -> None:
    home = tmp_path / "home"
    init = run(home, "ledger", "init", pg_url, "--json")
    assert init.returncode == 0, init.stderr
    shown = json.loads(init.stdout)
    assert shown["backend"] == "postgresql" and shown["consumedIds"] == 0
    password = pg_url.split("@", 1)[0].rsplit(":", 1)[1]
    assert password not in init.stdout and ":***@" in shown["location"]
    with Guard.open(home):
        pass
    (home / "operator-guard.toml").write_text(f'[ledger]\nurl = "{pg_url}"\n')
    status = run(home, "ledger", "status")
    assert status.returncode == 0, status.stderr
    assert status.stdout.startswith("ok: postgresql ledger at ") and password not in status.stdout


def test_status_of_the_default_sqlite_ledger(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Guard.open(home):
        pass
    status = run(home, "ledger", "status", "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["backend"] == "sqlite"


def test_unreachable_ledger_is_exit_6_in_one_line(tmp_path: Path) -> None:
    url = "postgresql://g:pw-123@127.0.0.1:1/g?connect_timeout=2"
    proc = run(tmp_path / "home", "ledger", "status", env={"PI_OPERATOR_GUARD_LEDGER": url})
    assert proc.returncode == 6
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "pw-123" not in proc.stderr and "consumption refused" in lines[0]
