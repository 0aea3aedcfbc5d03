"""Why a path failed inside the sandbox: a useful line instead of a bare EROFS.

A command that fails on a path the sandbox made read-only or hid (``npm error code EROFS``,
``touch: cannot touch '…': Read-only file system``, ``cat: …: No such file or directory``)
gets one line in its tool result naming the guard and why that path is so; the operator
(never the model) is told which ``[sandbox]`` setting would widen it. Pure: it reads the
command's output and the plan's argv, nothing of the machine.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from guard._policy import within

__all__ = ["Refusal", "explain_network", "explain_output"]

_ERROR = re.compile(
    r"read-only file system|permission denied|no such file or directory|erofs|eacces|enoent",
    re.I,
)
# What resolvers and clients print when there is no network (curl, wget, git, pip, npm, Node,
# Python, getent); matched only in ``off`` and ``allowlist`` modes.
_NO_NETWORK = re.compile(
    r"could not resolve (host|proxy)|temporary failure in name resolution|"
    r"name or service not known|network is unreachable|eai_again|enetunreach|"
    r"failed to establish a new connection|connection refused",
    re.I,
)
_PROGRAM_LINE = re.compile(r"\S+:\d+")
_PATH = re.compile(r"""(?:'|"|‘|`|\s|^)(/[^\s'"’`:,)]+)""")


@dataclass(frozen=True)
class Refusal:
    """One path the sandbox kept the command from: ``note`` for the model, ``hint`` for the
    operator (the setting that would widen it)."""

    path: str
    note: str
    hint: str


def _mounts(argv: Sequence[str]) -> list[tuple[str, str]]:
    """(target, what) for every mount of the argv, in the order bwrap applies them."""
    out: list[tuple[str, str]] = []
    args = list(argv)
    for i, arg in enumerate(args):
        if arg in ("--ro-bind", "--ro-bind-try", "--bind", "--bind-try") and i + 2 < len(args):
            source, target = args[i + 1], args[i + 2]
            if arg.startswith("--ro"):
                out.append((target, "hidden" if source == "/dev/null" else "read-only"))
            else:
                out.append((target, "writable"))
        elif arg == "--tmpfs" and i + 1 < len(args):
            target = args[i + 1]
            follows = args[i + 2 : i + 4] == ["--remount-ro", target]
            out.append((target, "hidden" if follows else "covered"))
        elif arg == "--remount-ro" and i + 1 < len(args):
            target = args[i + 1]
            if out and out[-1] == (target, "covered"):
                out[-1] = (target, "home")
            elif (target, "covered") in out:
                out[out.index((target, "covered"))] = (target, "home")
    return out


def _explain(mounts: Sequence[tuple[str, str]], path: str, home: str | None) -> Refusal | None:
    state = None
    where = ""
    for target, what in mounts:
        if within(path, target):
            state, where = what, target  # the last mount over the path decides
    if state in (None, "writable"):
        return None
    if state == "hidden":
        note = f"{path} is hidden from the agent's commands ({where}: a secret or the guard's own)"
        hint = "nothing to change: the guard hides this on purpose"
    elif state in ("home", "covered") and home is not None and within(path, home):
        note = (
            f"{path} is not shown to the agent's commands: of the home, only tools, package "
            "caches and git's identity are"
        )
        hint = f'to show it: [sandbox] readable = ["{path}"] in the user policy'
    elif where == "/":
        note = f"{path} is read-only in the agent's sandbox (the system outside the workspace)"
        hint = f'to let commands write it: [sandbox] writable = ["{path}"] in the user policy'
    else:
        note = (
            f"{path} is read-only in the agent's sandbox ({where}: the guard keeps it so, "
            "what lies there runs outside the sandbox later)"
        )
        hint = "nothing to change: the guard keeps this read-only on purpose"
    return Refusal(path, "operator-guard: " + note + ".", hint)


def _subject_start(line: str, end: int) -> int:
    """Where the error's subject begins: after the last ``": "`` before ``end`` (the
    program's name and ``line N`` end there), the subject's own trailing ``": "`` aside."""
    head = line[:end].rstrip()
    head = head[:-1] if head.endswith(":") else head
    cut = head.rfind(": ")
    if cut < 0:
        # zsh's "/bin/zsh:1: no such file or directory: x": the prefix is all there is
        return end if _PROGRAM_LINE.fullmatch(head.strip()) else 0
    return cut + 1


def explain_output(
    output: str, argv: Sequence[str], *, home: str | None = None, limit: int = 3
) -> list[Refusal]:
    """The sandbox's refusals behind the errors in ``output``, at most ``limit``."""
    mounts = _mounts(argv)
    found: dict[str, Refusal] = {}
    for line in output.splitlines()[-200:]:
        error = _ERROR.search(line)
        if error is None:
            continue
        # The path the error is about is the one just before it ("touch: cannot touch
        # '/x': Read-only file system"; "/bin/bash: line 1: /x: No such file"), else after
        # it (node's "EROFS: read-only file system, open '/x'"). Only the error's own subject
        # counts before it, never the program's prefix: in "/bin/bash: line 1: .venv/bin/x:
        # No such file" the shell is not the path that failed.
        start = _subject_start(line, error.start())
        before = [m for m in _PATH.finditer(line) if start <= m.start() < error.start()]
        after = [m for m in _PATH.finditer(line) if m.start() >= error.start()]
        chosen = before[-1:] or after[:1]
        for match in chosen:
            path = match.group(1).rstrip(".")
            refusal = None if path in found else _explain(mounts, path, home)
            if refusal is not None:
                found[path] = refusal
        if len(found) >= limit:
            break
    return list(found.values())


def explain_network(
    output: str, mode: str, refused: Sequence[tuple[str, int]] = ()
) -> list[Refusal]:
    """Why a command found no network: the hosts the allowlist ``refused`` while it ran, or
    (nothing refused) errors in ``output`` that an empty network explains."""
    if mode == "open":
        return []
    if refused:
        shown = ", ".join(f"{h}:{p}" for h, p in refused[:3])
        names = ", ".join(f'"{h}"' for h in dict.fromkeys(h for h, _ in refused[:3]))
        return [
            Refusal(
                shown,
                f"operator-guard: the sandbox's network allowlist refused {shown}.",
                f"to allow it: [sandbox.network] allow = [{names}] in the user policy",
            )
        ]
    if not any(_NO_NETWORK.search(line) for line in output.splitlines()[-200:]):
        return []
    if mode == "allowlist":
        note = (
            "operator-guard: the agent's commands reach the network only through the guard's "
            "proxy (HTTP_PROXY/HTTPS_PROXY), to the hosts the operator allowed."
        )
        hint = "programs that ignore the proxy variables have no network in allowlist mode"
    else:
        note = "operator-guard: the agent's commands have no network in this session."
        hint = 'to let them out: [sandbox.network] mode = "allowlist" with allow = [...]'
    return [Refusal("network", note, hint)]
