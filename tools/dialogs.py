"""The operator's dialogs as the guard renders them, for docs/operator.md.

``python -m tools.dialogs`` prints each example the operator's guide shows, rendered by the
sidecar's own text functions from a fixed example (a command that deleted an untracked
folder, a grant offered for ``rm -f``, a headless call waiting for another screen);
``tests/tools/test_dialogs.py`` fails when the page no longer shows one of them byte for byte.
Repo-only tooling: never in the wheel.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime

from guard._effects import Effect, Hold
from guard._grants import GrantOffer, GrantPattern
from guard._sidecar.text import effects_dialog, effects_note, grant_choice, wait_notice

PROJECT = "/home/me/project"
UNTIL = datetime(2026, 11, 22, 14, 32, tzinfo=UTC)


def effects_review() -> str:
    """The effects review of ``rm -rf drafts``: an untracked folder of three files."""
    held = [
        Hold(
            effect=Effect(kind="deleted", path="drafts", kind_of="none", was="dir", files=3),
            reason="untracked",
            files=3,
            bytes=5120,
        )
    ]
    dialog = effects_dialog(held, "rm -rf drafts", "removed 'drafts'")
    note = effects_note("discarded", held)
    first, second = (dialog.discard, dialog.apply)
    if dialog.preselect == "apply":
        first, second = second, first
    return "\n".join([dialog.title, dialog.message, f"→ {first}", f"  {second}", "", note])


def grant_offer() -> str:
    """The dialog's line for a same-directory grant of ``rm -f``."""
    offer = GrantOffer(
        pattern=GrantPattern(
            tool="bash",
            kind="destructive",
            program="rm",
            fixed_args=("-f",),
            globs=(f"{PROJECT}/*.txt",),
            scope=PROJECT,
            rule_ids=("builtin.rm",),
        ),
        breadth="same-directory",
        label=f"rm -f of files matching {PROJECT}/*.txt",
    )
    return grant_choice(offer, until=UNTIL, max_uses=20)


def headless_wait() -> str:
    """The stderr line of a print-mode call that waits for another screen."""
    return wait_notice(
        "bash",
        "ap_3kQ9vT0xLm2",
        60_000,
        login="http://localhost:8765/login?token=…",
    )


def render() -> dict[str, str]:
    """Every example, by the name the test and the page share."""
    # The grant line says the time in the local zone and the folder under ~: fix both.
    os.environ["TZ"] = "UTC"
    time.tzset()
    os.environ["HOME"] = "/home/me"
    return {
        "effects-review": effects_review(),
        "grant-offer": grant_offer(),
        "headless-wait": headless_wait(),
    }


def main() -> int:
    for name, text in render().items():
        sys.stdout.write(f"--- {name}\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
