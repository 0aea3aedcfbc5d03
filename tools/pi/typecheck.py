"""``make lint``: type-check the pi extension shim against every pinned pi's published types,
and the independent verifier (``verifier/``, strict, no emit: Node 22 runs its sources as they are).

For each pinned pi (:data:`~tools.pi.harness.FLAVORS`: legacy and current) this installs it and
its TypeScript (``tools/pi/<flavor>``: exact versions, lockfile, ``npm ci``) into the ignored
``.cache/pi-<flavor>`` exactly as the end-to-end tests do (:func:`ensure_pi`; a changed lockfile
reinstalls), then runs that install's ``tsc -p tools/pi/<flavor>/tsconfig.json`` (strict, no
emit) with the node that runs that pi. Exits 0 only when every check passes.

A check that passed is not run again while nothing it reads changed: a stamp in ``.cache``
holds the SHA-256 of the command and of every input (the shim or the verifier's sources, the
tsconfigs, the pinned pi's lockfile), so ``make check`` and a warm ``make test`` skip tsc's
minutes. A changed input runs tsc again, incrementally (its build info lives in ``.cache``).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from tools.pi.harness import FLAVORS, Flavor, PinnedPi, PiSetupError, ensure_pi, find_repo_root

__all__ = ["VERIFIER_TSCONFIG", "check", "digest", "inputs", "main", "tsc_command", "tsconfig"]

VERIFIER_TSCONFIG = Path("verifier") / "tsconfig.json"
"""The verifier's tsconfig: checked with the current pinned pi's TypeScript and Node types."""


def tsconfig(flavor: Flavor) -> Path:
    """The tsconfig for ``flavor``, relative to the clone's root."""
    return Path("tools") / "pi" / flavor / "tsconfig.json"


def tsc_command(pi: PinnedPi) -> list[str]:
    """The ``tsc`` invocation for ``pi``'s types (run it with ``cwd`` the clone's root)."""
    tsc = pi.prefix / "node_modules" / "typescript" / "bin" / "tsc"
    return [str(pi.node), str(tsc), "-p", str(tsconfig(pi.flavor))]


def inputs(root: Path, project: Path, pi: PinnedPi) -> list[Path]:
    """Every file a ``tsc -p project`` run for ``pi`` reads that can change in this clone."""
    if project == VERIFIER_TSCONFIG:
        sources = sorted((root / "verifier").glob("src/**/*.ts"))
        sources += sorted((root / "verifier").glob("test/**/*.ts"))
    else:
        sources = sorted((root / "guard" / "_pi" / "extension").glob("*.ts"))
        sources.append(root / "tools" / "pi" / "tsconfig.base.json")
    pinned = root / "tools" / "pi" / pi.flavor
    return [root / project, *sources, pinned / "package.json", pinned / "package-lock.json"]


def digest(command: Iterable[str], files: Iterable[Path]) -> str:
    """SHA-256 over the command and each file's name and bytes (a missing file counts too)."""
    h = hashlib.sha256()
    for part in command:
        h.update(part.encode() + b"\0")
    for path in files:
        h.update(str(path).encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"<missing>")
        h.update(b"\0")
    return h.hexdigest()


def check(root: Path, command: list[str], pi: PinnedPi, name: str) -> int:
    """Run ``command`` (``tsc -p PROJECT``) unless its stamp says these inputs already passed."""
    project = Path(command[-1])
    stamp = root / ".cache" / f"typecheck-{name}.ok"
    done = digest(command, inputs(root, project, pi))
    if stamp.is_file() and stamp.read_text(encoding="ascii").strip() == done:
        print(f"{name} ({pi.package} {pi.version}): passed before, inputs unchanged", flush=True)
        return 0
    print(f"{name} ({pi.package} {pi.version}): tsc -p {project}", flush=True)
    build_info = root / ".cache" / f"tsc-{name}.tsbuildinfo"
    incremental = ["--incremental", "--tsBuildInfoFile", str(build_info)]
    code = subprocess.run([*command, *incremental], cwd=root, check=False).returncode
    if code == 0:
        stamp.write_text(done + "\n", encoding="ascii")
    else:
        stamp.unlink(missing_ok=True)
    return code


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
        worst = max(worst, check(root, command, pi, f"shim-{flavor}"))
        if flavor == "current":
            verifier = [*command[:-1], str(VERIFIER_TSCONFIG)]
            worst = max(worst, check(root, verifier, pi, "verifier"))
    return worst


if __name__ == "__main__":
    sys.exit(main())
