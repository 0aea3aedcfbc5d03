"""Test-only launcher: ``pi-guard serve`` with faults switched on from the environment.

    python tests/soak/sidecar_launcher.py HOME

``PI_OPERATOR_GUARD_SOAK_CLOCK_OFFSET_S``  the process's clock runs this many seconds off (freezegun,
                                  ticking), as after an NTP step or a VM resume;
``PI_OPERATOR_GUARD_SOAK_FSIZE``           ``RLIMIT_FSIZE`` in bytes: every write past it fails with
                                  ``EFBIG``, as on a full disk (Python ignores ``SIGXFSZ``).

These switches exist only here, in the test tree; the shipped sidecar has none.
"""

from __future__ import annotations

import os
import resource
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path


def main() -> int:
    home = Path(sys.argv[1])
    limit = os.environ.get("PI_OPERATOR_GUARD_SOAK_FSIZE")
    if limit:
        resource.setrlimit(resource.RLIMIT_FSIZE, (int(limit), int(limit)))
    offset = float(os.environ.get("PI_OPERATOR_GUARD_SOAK_CLOCK_OFFSET_S") or 0)
    if offset:
        from freezegun import freeze_time

        freeze_time(datetime.now(UTC) + timedelta(seconds=offset), tick=True).start()
    from guard._sidecar.handlers.methods import serve

    return serve(sys.stdin.buffer, sys.stdout.buffer, home=home)


if __name__ == "__main__":
    sys.exit(main())
