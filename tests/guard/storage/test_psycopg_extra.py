"""PostgreSQL is an extra: without psycopg a configured postgresql:// URL is refused in one
line that names the extra, and nothing else of the guard needs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

# Run the CLI with psycopg made unimportable, as on a machine without the extra.
WITHOUT = "import sys; sys.modules['psycopg'] = None; from guard._cli import run; run()"


def guard_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", WITHOUT, "--home", str(home), *args],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [
        ("ledger", "init", "postgresql://guard@127.0.0.1:1/guard"),
        ("audit", "ship", "--to", "postgresql://guard:secret@127.0.0.1:1/guard"),
    ],
)
def test_a_postgres_url_without_the_extra_is_one_line(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    done = guard_cli(tmp_path / "home", *args)
    assert done.returncode == 6, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "pip install 'pi-operator-guard[postgres]'" in line
    assert "secret" not in line and "Traceback" not in done.stderr


def test_the_guard_works_without_the_extra(tmp_path: Path) -> None:
    done = guard_cli(tmp_path / "home", "evaluate", "--tool", "bash", "--input",
                     '{"command": "rm -rf build"}', "--cwd", str(tmp_path))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"verdict"' in done.stdout


def test_a_user_policy_naming_a_postgres_ledger_is_refused_in_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "operator-guard.toml").write_text('[ledger]\nurl = "postgresql://g@127.0.0.1:1/g"\n')
    done = guard_cli(home, "consume", "--envelope", "-", "--tool", "bash", "--input",
                     '{"command": "rm -rf build"}', "--cwd", str(tmp_path))  # fmt: skip
    assert done.returncode == 6, (done.stdout, done.stderr)
    assert "pi-operator-guard[postgres]" in done.stderr and "Traceback" not in done.stderr
