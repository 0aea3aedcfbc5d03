"""Where checkpoints are anchored outside the home, and the latest one that verifies.

The anchor directory is ``PI_OPERATOR_GUARD_ANCHOR_DIR`` (or one named on the command
line). ``audit verify``, ``doctor`` and the sidecar use it; the sandbox hides it from the
agent's commands, so the model can neither read nor rewrite it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from audit import AuditError
from audit.tlog import (
    AnchorDir,
    Anchored,
    Frontier,
    TreeState,
    log_leaves,
    open_checkpoint,
    origin_for,
    read_tree_state,
)
from audit.verify import verify_log
from guard._checks import Check
from guard._evidence import PublicKeyring
from guard._hermetic import GIT_SAFE_OPTIONS, ProgramNotFound, git_env, run, system_program
from guard._home import ANCHOR_ENV, AUDIT_LOG_FILE, env

__all__ = [
    "ANCHOR_ENV",
    "AnchorWritten",
    "anchor_checkpoint",
    "anchor_dir",
    "check_audit",
    "latest_anchor",
    "log_origin",
]


def anchor_dir(value: str | os.PathLike[str] | None = None) -> AnchorDir | None:
    """``value`` if given, else ``PI_OPERATOR_GUARD_ANCHOR_DIR``, else ``None``."""
    chosen = str(value) if value else env(ANCHOR_ENV)
    return AnchorDir(Path(chosen).expanduser()) if chosen else None


def log_origin(log: Path) -> str | None:
    """The checkpoint origin named by the log's first record, if it can be read."""
    try:
        with log.open("rb") as handle:
            first = json.loads(handle.readline(256 * 1024))
        return origin_for(str(first["data"]["logId"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def latest_anchor(
    directory: AnchorDir | None, log: Path, keys: Mapping[str, Ed25519PublicKey]
) -> tuple[Anchored | None, list[str]]:
    """The latest anchored checkpoint of ``log`` that verifies, and the files skipped."""
    origin = log_origin(log)
    if directory is None or origin is None:
        return None, []
    return directory.latest(keys, origin)


@dataclass(frozen=True)
class AnchorWritten:
    """What :func:`anchor_checkpoint` did."""

    path: Path
    size: int
    created: bool
    committed: bool
    git_problem: str | None


def anchor_checkpoint(
    directory: AnchorDir, log: Path, keys: Mapping[str, Ed25519PublicKey]
) -> AnchorWritten:
    """Keep the log's current signed checkpoint (and its tree state) in ``directory``.

    The head must verify with ``keys`` (the caller verified the log against it, or the
    appender did before its last append). Raises :class:`audit.NoteError` for a head that
    does not verify or one the anchor already holds differently (a fork).
    """
    note = log.with_name(log.name + ".head").read_bytes()
    checkpoint = open_checkpoint(note, keys, origin=log_origin(log)).checkpoint
    path, created = directory.add(note, checkpoint, _state_for(log, checkpoint.size))
    committed, problem = (
        _git_commit(directory.path, path, checkpoint.size) if created else (False, None)
    )
    return AnchorWritten(path, checkpoint.size, created, committed, problem)


def _state_for(log: Path, size: int) -> TreeState:
    """The tree state an anchor keeps beside a checkpoint of ``size`` records."""
    cached = read_tree_state(log)
    if cached is not None and cached.frontier.size + 1 == size:
        return cached
    lines, leaves = log_leaves(log)
    frontier = Frontier()
    for leaf in leaves[: size - 1]:
        frontier.append(leaf)
    return TreeState(sum(len(line) + 1 for line in lines[: size - 1]), frontier)


def _git_commit(root: Path, path: Path, size: int) -> tuple[bool, str | None]:
    """Commit the new files when the anchor directory is a git work tree.

    Plumbing only (``hash-object``, ``update-index``, ``write-tree``, ``commit-tree``,
    ``update-ref``): these never run hooks, filters or an editor (githooks(5) names only
    porcelain commands), and :mod:`guard._hermetic` keeps every user and system
    configuration, and every program on ``PATH``, out of it.
    """
    if not (root / ".git").exists():
        return False, None
    names = [str(p.relative_to(root)) for p in (path, path.with_suffix(".tree")) if p.exists()]
    try:
        git = [system_program("git"), "-C", str(root), *GIT_SAFE_OPTIONS]
        who = {
            "GIT_AUTHOR_NAME": "pi-guard",
            "GIT_AUTHOR_EMAIL": "pi-guard@localhost",
            "GIT_COMMITTER_NAME": "pi-guard",
            "GIT_COMMITTER_EMAIL": "pi-guard@localhost",
        }
        env = git_env(who)

        def out(*args: str, stdin: bytes | None = None) -> str:
            done = run([*git, *args], env=env, input_bytes=stdin)
            if done.returncode != 0:
                detail = done.stderr.decode(errors="replace").strip().splitlines()
                raise ProgramNotFound("git", f"git {args[0]} failed: {detail[-1:] or ''}")
            return done.stdout.decode().strip()

        for name in names:
            blob = out("hash-object", "-w", "--no-filters", "--", name)
            out("update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
        tree = out("write-tree")
        parent = run([*git, "rev-parse", "-q", "--verify", "HEAD^{commit}"], env=env)
        head = parent.stdout.decode().strip() if parent.returncode == 0 else None
        message = f"checkpoint {path.parent.name} {size}\n".encode()
        commit = out("commit-tree", tree, *(("-p", head) if head else ()), stdin=message)
        out("update-ref", "-m", "pi-guard checkpoint", "HEAD", commit, *((head,) if head else ()))
    except (OSError, subprocess.SubprocessError, ProgramNotFound) as exc:
        return False, str(exc)
    return True, None


def check_audit(home: Path, keyring: PublicKeyring | None) -> Check:
    """The home's audit log verifies against its keyring (what ``audit verify`` does)."""
    log = home / AUDIT_LOG_FILE
    subject = str(log)
    if not log.exists():
        return Check(
            name="audit",
            subject=subject,
            status="ok",
            reason="no-audit-log-yet",
            detail="no audit log yet: created on first use",
        )
    if keyring is None:
        return Check(
            name="audit",
            subject=subject,
            status="n/a",
            reason="keyring-unusable",
            detail="cannot verify without the keyring",
        )
    keys = keyring.public_keys()
    anchors = anchor_dir()
    try:
        anchored, skipped = latest_anchor(anchors, log, keys)
        result = verify_log(
            log,
            keys,
            against=None if anchored is None else anchored.note,
            resume=None if anchored is None else anchored.state,
        )
    except (AuditError, OSError) as exc:
        return Check(
            name="audit",
            subject=subject,
            status="fail",
            reason="audit-unreadable",
            detail=str(exc),
            fix=f"pi-guard audit verify {log}",
        )
    if result.decision != "intact":
        where = f"line {result.line}" if result.line is not None else "head"
        return Check(
            name="audit",
            subject=subject,
            status="fail",
            reason=f"audit-{result.decision}",
            detail=f"{result.fault or result.decision} at {where}: {result.detail}",
            fix=f"pi-guard audit verify {log}  (keep the log as evidence; see docs/auditor.md)",
        )
    if anchors is None:
        anchoring = (
            "; no anchor outside the home (PI_OPERATOR_GUARD_ANCHOR_DIR): a rollback of log "
            "and head together would go unseen"
        )
    elif anchored is None:
        anchoring = f"; nothing anchored yet in {anchors.path} (pi-guard audit anchor)"
    else:
        anchoring = (
            f"; extends the checkpoint of {anchored.checkpoint.size} anchored in {anchors.path}"
        )
    if skipped:
        anchoring += f" ({len(skipped)} anchor file(s) skipped: {skipped[0]})"
    return Check(
        name="audit",
        subject=subject,
        status="ok",
        reason="audit-intact",
        detail=f"intact: {result.records} records{anchoring}",
    )
