"""``make lint``: type-check the pi extension shim against every pinned pi's published types,
and the independent verifier (``verifier/``, strict, no emit: Node 22 runs its sources as they are).

For each pinned pi (:data:`~tools.pi.harness.FLAVORS`: legacy and current) this installs it and
its TypeScript (``tools/pi/<flavor>``: exact versions, lockfile, ``npm ci``) into the ignored
``.cache/pi-<flavor>`` exactly as the end-to-end tests do (:func:`ensure_pi`; a changed lockfile
reinstalls), then runs that install's ``tsc -p tools/pi/<flavor>/tsconfig.json`` (strict, no
emit) with the node that runs that pi. Exits 0 only when every check passes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tools.pi.harness import FLAVORS, Flavor, PinnedPi, PiSetupError, ensure_pi, find_repo_root

__all__ = ["VERIFIER_TSCONFIG", "main", "tsc_command", "tsconfig"]

VERIFIER_TSCONFIG = Path("verifier") / "tsconfig.json"
"""The verifier's tsconfig: checked with the current pinned pi's TypeScript and Node types."""


def tsconfig(flavor: Flavor) -> Path:
    """The tsconfig for ``flavor``, relative to the clone's root."""
    return Path("tools") / "pi" / flavor / "tsconfig.json"


def tsc_command(pi: PinnedPi) -> list[str]:
    """The ``tsc`` invocation for ``pi``'s types (run it with ``cwd`` the clone's root)."""
    tsc = pi.prefix / "node_modules" / "typescript" / "bin" / "tsc"
    return [str(pi.node), str(tsc), "-p", str(tsconfig(pi.flavor))]


def main() -> int:
    root = find_repo_root()
    worst = 0
    for flavor in FLAVORS:
        try:
            pi = ensure_pi(root, flavor, log=sys.stderr)
        except PiSetupError as exc:
            print(f"typecheck: {exc}", file=sys.stderr)
            return 2
        command = tsc_command(pi)
        if not Path(command[1]).is_file():
            print(
                f"typecheck: {command[1]} missing; were devDependencies omitted "
                f"(NODE_ENV=production or npm config omit=dev)? Remove {pi.prefix} and retry.",
                file=sys.stderr,
            )
            return 2
        print(f"{pi.package} {pi.version}: tsc -p {command[-1]}", flush=True)
        worst = max(worst, subprocess.run(command, cwd=root, check=False).returncode)
        if flavor == "current":
            verifier = [*command[:-1], str(VERIFIER_TSCONFIG)]
            print(f"verifier: tsc -p {VERIFIER_TSCONFIG}", flush=True)
            worst = max(worst, subprocess.run(verifier, cwd=root, check=False).returncode)
    return worst


if __name__ == "__main__":
    sys.exit(main())
