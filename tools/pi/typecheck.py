"""``make lint``: type-check the pi extension shim against the pinned pi's published types.

Installs the pinned pi and TypeScript (``tools/pi``: exact versions, lockfile, ``npm ci``) into
the ignored ``.cache/pi`` exactly as the end-to-end tests do (:func:`ensure_pi`; a changed
lockfile reinstalls), then runs ``tsc -p tools/pi/tsconfig.json`` (strict, no emit) and exits
with its status.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.pi.harness import PiSetupError, ensure_pi, find_repo_root

__all__ = ["TSCONFIG", "main", "tsc_command"]

TSCONFIG = Path("tools") / "pi" / "tsconfig.json"


def tsc_command(root: Path) -> list[str]:
    """The ``tsc`` invocation, relative to ``root`` (run it with ``cwd=root``)."""
    return [str(Path(".cache") / "pi" / "node_modules" / ".bin" / "tsc"), "-p", str(TSCONFIG)]


def main() -> int:
    root = find_repo_root()
    try:
        ensure_pi(root, log=sys.stderr)
    except PiSetupError as exc:
        print(f"typecheck: {exc}", file=sys.stderr)
        return 2
    command = tsc_command(root)
    if not (root / command[0]).is_file():
        print(
            f"typecheck: {command[0]} missing; were devDependencies omitted "
            "(NODE_ENV=production or npm config omit=dev)? Remove .cache/pi and retry.",
            file=sys.stderr,
        )
        return 2
    print(" ".join(command), flush=True)
    return subprocess.run(command, cwd=root, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
