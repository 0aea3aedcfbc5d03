"""Can bwrap start a sandbox here? A typed answer with a reason code, never an exception.

The probe starts the same namespaces and capability drop the real argv uses, around
``true``: user namespaces disabled by the kernel (or by a container), a missing or
non-executable binary, and a platform without bubblewrap each get their own reason code.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

from guard._sandbox.argv import NAMESPACE_FLAGS, TMP
from guard._sandbox.model import ProbeResult

__all__ = ["INSTALL_HINT", "probe"]

INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap)"
_USERNS = re.compile(r"namespace|uid map|userns|setting up uid|No permissions to creat", re.I)


def _version(bwrap: str, timeout: float) -> str | None:
    try:
        done = subprocess.run(
            [bwrap, "--version"], capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def probe(
    bwrap: str, *, unshare_user: bool = True, timeout: float = 10.0, platform: str | None = None
) -> ProbeResult:
    """Check that ``bwrap`` exists, runs, and can create the sandbox's namespaces."""
    system = platform or sys.platform
    if not system.startswith("linux"):
        return ProbeResult(
            ok=False,
            status="unsupported-platform",
            bwrap=None,
            message=f"the sandbox needs Linux and bubblewrap; {system} is not supported yet "
            "(macOS would need Seatbelt, sandbox-exec)",
        )
    if not os.path.exists(bwrap):
        return ProbeResult(
            ok=False,
            status="missing-binary",
            bwrap=bwrap,
            message=f"bwrap not found at {bwrap}: {INSTALL_HINT}",
        )
    if not os.path.isfile(bwrap) or not os.access(bwrap, os.X_OK):
        return ProbeResult(
            ok=False,
            status="not-executable",
            bwrap=bwrap,
            message=f"{bwrap} is not an executable file: {INSTALL_HINT}",
        )
    argv = [bwrap, *NAMESPACE_FLAGS]
    if unshare_user:
        argv += ["--unshare-user", "--disable-userns"]
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", TMP]
    argv += ["--", "/bin/sh", "-c", "exit 0"]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        return ProbeResult(
            ok=False,
            status="timeout",
            bwrap=bwrap,
            message=f"bwrap did not start a sandbox within {timeout:g} s",
        )
    except OSError as exc:
        return ProbeResult(
            ok=False,
            status="not-executable",
            bwrap=bwrap,
            message=f"cannot run {bwrap}: {exc.strerror or exc}",
        )
    version = _version(bwrap, timeout)
    if done.returncode == 0:
        return ProbeResult(
            ok=True,
            status="ok",
            bwrap=bwrap,
            version=version,
            message=f"{version or 'bwrap'} at {bwrap} can start the sandbox",
        )
    detail = _last_line(done.stderr)
    if _USERNS.search(done.stderr):
        return ProbeResult(
            ok=False,
            status="userns-unavailable",
            bwrap=bwrap,
            version=version,
            message=f"bwrap cannot create user namespaces here ({detail}): enable unprivileged "
            "user namespaces (sysctl kernel.unprivileged_userns_clone=1 or "
            "user.max_user_namespaces > 0; AppArmor on Ubuntu 24.04+ needs a bwrap profile)",
        )
    return ProbeResult(
        ok=False,
        status="start-failed",
        bwrap=bwrap,
        version=version,
        message=f"bwrap failed to start a sandbox (exit {done.returncode}): {detail}",
    )
