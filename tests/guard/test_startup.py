"""Start-up: what a guard process has imported once it has done its one job.

Every guard process pays for its imports: the sidecar pi starts per session, each
``pi-guard`` command (a monitor's ``consume``, ``audit verify``). A library only a rare path
needs is imported on that path: py_webauthn (and the x509/ASN.1 stack under it) where a
passkey is enrolled or its signature checked, psycopg where a PostgreSQL URL is configured.
Each test runs the real job in a fresh interpreter and reads ``sys.modules`` afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

RARE = ("webauthn", "OpenSSL", "pyasn1_modules", "cryptography.x509", "psycopg", "opentelemetry")
"""Libraries of rare paths: none is imported by the sidecar or an everyday command."""

GUARD = ("guard._facade.guard", "guard._sidecar.handlers.methods", "guard._policy.engine")
"""The guard itself: printing the command line's help does not load it."""


def _modules_after(tmp_path: Path, job: str, stdin: str = "") -> set[str]:
    """Run ``job`` in ``python -I`` with a fresh home; the modules imported by its end."""
    code = textwrap.dedent(job) + textwrap.dedent(
        """
        import json as _json, sys as _sys
        _sys.stderr.write("\\nMODULES " + _json.dumps(sorted(_sys.modules)) + "\\n")
        """
    )
    # Nothing of the guard's own configuration from outside (a PostgreSQL ledger would rightly
    # import psycopg): a fresh home with the defaults.
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PI_OPERATOR_GUARD_", "PI_GUARD_"))
    }
    env["PI_OPERATOR_GUARD_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-I", "-c", code],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    marker = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    assert marker, done.stderr
    return set(json.loads(marker[-1].removeprefix("MODULES ")))


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def _main(argv: list[str]) -> str:
    return f"""
        from guard._cli import main
        try:
            code = main({argv!r})
        except SystemExit as exit_:
            code = exit_.code
        print("EXIT", code)
        """


def test_the_sidecar_answers_health_without_the_rare_libraries(tmp_path: Path) -> None:
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "health"}) + "\n"
    modules = _modules_after(tmp_path, _main(["serve"]), stdin=request)
    assert "guard._sidecar.handlers.methods" in modules  # it did serve
    assert _loaded(modules, RARE) == []
    # The approval page's HTTP server: only when the user's policy asks for the page.
    assert _loaded(modules, ("guard._approvals.web", "http.server")) == []


def test_importing_the_sidecar_server_loads_no_rare_library(tmp_path: Path) -> None:
    modules = _modules_after(tmp_path, "import guard._sidecar.server")
    assert _loaded(modules, RARE) == []


def test_a_monitor_consume_loads_no_rare_library(tmp_path: Path) -> None:
    job = _main(["consume", "--envelope", "-", "--tool", "bash", "--input", '{"command": "ls"}'])
    modules = _modules_after(tmp_path, job, stdin="{}")
    assert "guard._facade.consumer" in modules  # it did consume (and rejected the empty envelope)
    assert _loaded(modules, RARE) == []


@pytest.mark.parametrize("argv", [["--help"], ["audit", "verify", "--help"], ["consume", "--help"]])
def test_help_loads_neither_the_guard_nor_a_rare_library(tmp_path: Path, argv: list[str]) -> None:
    modules = _modules_after(tmp_path, _main(argv))
    assert "guard._cli" in modules
    assert _loaded(modules, GUARD) == []
    assert _loaded(modules, RARE) == []
    assert "audit._checking.verify" not in modules


def test_import_guard_loads_only_its_face(tmp_path: Path) -> None:
    # The facade's names come on first use (PEP 562): importing the package is cheap.
    modules = _modules_after(tmp_path, "import guard, audit, planning")
    assert _loaded(modules, (*GUARD, "pydantic", "audit._records", "planning._channel")) == []
