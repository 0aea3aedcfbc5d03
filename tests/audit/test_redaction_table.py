"""The redaction's table of detect-secrets' patterns is what the installed library has, and
redacting never imports the library (it cost every redacting process about 0.1 CPU-s)."""

from __future__ import annotations

import subprocess
import sys

from audit._redaction._detect_secrets import MARKERS, RULES
from tools.redaction_rules import collect


def test_the_table_is_what_the_installed_detect_secrets_has() -> None:
    rules, markers = collect()
    assert list(RULES) == rules, "run `python -m tools.redaction_rules` and `ruff format` it"
    assert list(MARKERS) == markers, "run `python -m tools.redaction_rules` and `ruff format` it"


def test_redacting_a_secret_imports_neither_detect_secrets_nor_requests() -> None:
    code = (
        "import sys\n"
        "from audit._redaction.redact import redact_preview\n"
        "out = redact_preview('curl -H \"Authorization: token ghp_' + 'a' * 36 + '\" x', limit=200)\n"
        "assert 'ghp_' + 'a' * 36 not in out, out\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('detect_secrets', 'requests')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
