"""``pi-guard approvals list|show|approve|decline``: answer a pending question from a shell.

Each sidecar (one per pi session) offers the questions it is waiting on (the dialogs about
tool calls) on ``approvals.sock`` in its own directory of the guard home
(``<home>/sessions/<sidecar>/``); pi's dialog, this command and any other screen see the same
question, and the first valid answer wins.

* ``list [--json]`` shows every pending question of every live sidecar of the home (a
  directory whose sidecar is gone is skipped); ``--json`` prints a JSON array of
  :class:`ApprovalListing`;
* ``show ID [--json]`` shows one question in full: its details and its digest;
* ``approve ID [--digest SHA256]`` and ``decline ID [--reason TEXT] [--digest SHA256]`` answer
  it. An answer names the question's id *and* its digest (what the operator was shown), so a
  stale screen can never approve another call: ``--digest`` when given (copied from
  ``show``), else the digest the listing returned just now. The question answered (title
  and digest) is printed, then whether the answer was accepted.

Exit codes: 0 accepted (or listed, shown); 2 a malformed id, digest or reason, no guard home
at ``--home``, or no live sidecar that knows the id; 3 the answer was not accepted:
another screen answered first (``already-answered``), the question is not the one named
(``stale``: the digest differs), its time ran out (``expired``: a timeout is No) or it was
withdrawn (``withdrawn``: its call or its sidecar ended); 6 the sidecar did not reply, so
whether the answer counted is unknown (``approvals list`` tells).

For an id that no sidecar lists any more, each live sidecar is asked what became of it (a
query that answers nothing), only to say why it is gone.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from audit.wire import parse_iso, utc_now
from guard._approvals import (
    GONE,
    REPLY_TIMEOUT,
    AnswerRequest,
    Decision,
    Listed,
    ask_local,
    ask_sidecar,
    pending_in,
    sidecar_dirs,
)
from guard._cli.args import Parser, Subparsers, existing_home
from guard._cli.exits import ExitCode
from guard._cli.io import Listing, emit, stop_signals
from guard._errors import BadInputError, StateError
from guard._home import SESSIONS_DIR
from guard._logging import get_logger

__all__ = ["ApprovalListing", "ApprovalListings", "register"]

_log = get_logger("guard.cli.approvals")

_MAX_REASON_CHARS = 4096
"""As :class:`AnswerRequest` has it."""
_WAKE_SECONDS = 0.2
# Refusals heard between two writes become one record per reason and question: a flood from an
# agent's command is a record every few seconds however slow the machine, not one a wake.
_REFUSALS_EVERY_SECONDS = 2.0

_PROBLEMS = {
    "id": ("ID", "is not an approval id (apr_ and 16 to 32 letters, digits, _ or -)"),
    "digest": ("--digest", "is not a digest (sha256: and 64 lowercase hex digits)"),
    "reason": ("--reason", f"must be at most {_MAX_REASON_CHARS} characters"),
}
_WHY: dict[str, str] = {
    "accepted": "the first answer",
    "unknown-id": "no live sidecar of this home knows this question",
    "stale": "the question is not the one this digest names: nothing was answered "
    "(look again with approvals show)",
    "already-answered": "another screen answered this question first",
    "expired": "the question's time ran out before the answer (a timeout is No)",
    "withdrawn": "the question was withdrawn (its call or its sidecar ended)",
}


class NoReplyError(StateError):
    """A sidecar took an answer and did not say what became of it."""

    what = "approvals"


ApprovalListing = Listed
"""One pending question in ``approvals list --json``: exactly as its sidecar offers it, and
which sidecar holds it (``sidecar``: its directory under ``<home>/sessions/``)."""


class ApprovalListings(Listing[ApprovalListing]):
    """``approvals list --json``: a JSON array, by sidecar, oldest question first."""


def _home(args: argparse.Namespace) -> Path:
    """The existing guard home (these commands never create one)."""
    return existing_home(args.home)


def _find(home: Path, approval_id: str) -> ApprovalListing | None:
    return next((p for p in pending_in(home) if p.id == approval_id), None)


_ANY_DIGEST = "sha256:" + "0" * 64  # stands in for a digest not given, to check the rest


def _checked(approval_id: str, decision: Decision, digest: str | None, reason: str | None) -> None:
    """Refuse a malformed id, digest or reason before asking any sidecar."""
    try:
        AnswerRequest(
            id=approval_id, digest=digest or _ANY_DIGEST, decision=decision, reason=reason
        )
    except ValidationError as exc:
        field = str(exc.errors()[0]["loc"][0])
        what, problem = _PROBLEMS.get(field, (field, "is not valid"))
        value = {"id": approval_id, "digest": digest}.get(field)
        raise BadInputError(what, problem, value) from None


def _left(deadline_iso: str, now: datetime) -> str:
    seconds = int((parse_iso(deadline_iso, "deadlineIso") - now).total_seconds())
    return f"{deadline_iso} ({max(0, seconds)} s left)"


def _block(p: ApprovalListing, now: datetime) -> str:
    lines = [
        f"id:       {p.id}",
        f"session:  {p.session_id or '-'} (sidecar {p.sidecar})",
        f"tool:     {p.tool_name}",
        *(f"  {line}" for line in (p.title, *p.message.splitlines())),
        *(f"grant {n}:  {line} (approve --grant {n})" for n, line in enumerate(p.grants)),
        f"deadline: {_left(p.deadline_iso, now)}",
        f"digest:   {p.digest}",
    ]
    return "\n".join(lines) + "\n"


def cmd_approvals_list(args: argparse.Namespace) -> ExitCode:
    listings = list(pending_in(_home(args)))
    if args.json:
        emit(ApprovalListings(listings))
    elif not listings:
        sys.stdout.write("(no pending questions)\n")
    else:
        now = utc_now()
        sys.stdout.write("\n".join(_block(p, now) for p in listings))
    return ExitCode.OK


def cmd_approvals_show(args: argparse.Namespace) -> ExitCode:
    _checked(args.approval_id, "no", None, None)
    found = _find(_home(args), args.approval_id)
    if found is None:
        raise BadInputError(
            "ID", "no live sidecar of this home has this question pending", args.approval_id
        )
    if args.json:
        emit(found)
        return ExitCode.OK
    head = [
        f"id:        {found.id}",
        f"kind:      {found.kind}",
        f"session:   {found.session_id or '-'}",
        f"sidecar:   {found.sidecar}",
        f"tool:      {found.tool_name}",
        f"call:      {found.tool_call_id or '-'}",
        f"asked:     {found.created_at_iso}",
        f"deadline:  {_left(found.deadline_iso, utc_now())}",
        f"digest:    {found.digest}",
    ]
    body = [found.title, found.message, "", found.details]
    sys.stdout.write("\n".join([*head, "", *body]).rstrip("\n") + "\n")
    return ExitCode.OK


def _refused(approval_id: str, outcome: str) -> ExitCode:
    why = _WHY.get(outcome, "an outcome this command does not know")
    sys.stderr.write(f"pi-guard: not accepted: {outcome}: {why} ({approval_id})\n")
    return ExitCode.BAD_INPUT if outcome == "unknown-id" else ExitCode.REJECTED


def _why_gone(home: Path, approval_id: str) -> ExitCode:
    """``approval_id`` is pending nowhere: ask each live sidecar what became of it (a query
    that answers nothing)."""
    for directory in sidecar_dirs(home):
        reply = ask_sidecar(directory, {"op": "state", "id": approval_id})
        state = None if reply is None else reply.get("state")
        outcome = {"answered": "already-answered", "withdrawn": "withdrawn", "expired": "expired"}
        if isinstance(state, str) and state in outcome:
            return _refused(approval_id, outcome[state])
    raise BadInputError("ID", "no live sidecar of this home knows this question", approval_id)


def _answer(args: argparse.Namespace, decision: Decision) -> ExitCode:
    reason: str | None = getattr(args, "reason", None) or None
    _checked(args.approval_id, decision, args.digest, reason)
    home = _home(args)
    found = _find(home, args.approval_id)
    if found is None:
        return _why_gone(home, args.approval_id)
    digest: str = args.digest or found.digest
    grant: int | None = getattr(args, "grant", None)
    if grant is not None and not 0 <= grant < len(found.grants):
        raise BadInputError("--grant", f"this question offers {len(found.grants)} grant(s)", grant)
    request = AnswerRequest(
        id=found.id, digest=digest, decision=decision, reason=reason, grant=grant
    )
    sys.stdout.write(
        f"question: {found.id} (session {found.session_id or '-'}, tool {found.tool_name})\n"
        f"title:    {found.title}\n"
        f"digest:   {digest}\n"
        + (f"grant:    {found.grants[grant]}\n" if grant is not None else "")
    )
    sys.stdout.flush()
    directory = home / SESSIONS_DIR / found.sidecar
    try:
        reply = ask_local(
            directory, {"op": "answer", **request.model_dump(mode="json")}, REPLY_TIMEOUT
        )
    except GONE:
        return _refused(found.id, "withdrawn")
    except (OSError, ValueError) as exc:
        raise NoReplyError(
            directory,
            f"no reply from the sidecar holding {found.id} ({exc}): whether the answer "
            "counted is unknown, see approvals list",
        ) from None
    outcome = reply.get("outcome")
    if outcome == "accepted":
        word: Literal["approved", "declined"] = "approved" if decision == "yes" else "declined"
        sys.stdout.write(f"accepted: {word} (the first answer to {found.id})\n")
        return ExitCode.OK
    if isinstance(outcome, str):
        return _refused(found.id, outcome)
    error = reply.get("error")
    raise BadInputError("answer", "the sidecar refused it", error if error else reply)


def cmd_approvals_approve(args: argparse.Namespace) -> ExitCode:
    return _answer(args, "yes")


def cmd_approvals_decline(args: argparse.Namespace) -> ExitCode:
    return _answer(args, "no")


_EXITS = (
    "Exit codes: 0 accepted (the first answer); 2 a malformed ID, --digest or --reason, no "
    "guard home, or no live sidecar knows ID (unknown-id); 3 not accepted: already-answered "
    "(another screen was first), stale (the question is not the one the digest names), "
    "expired (a timeout is No) or withdrawn; 6 the sidecar did not reply (whether the answer "
    "counted is unknown)."
)


def register(sub: Subparsers) -> None:
    """Add ``approvals`` and its subcommands."""
    group = sub.add_parser(
        "approvals",
        help="the questions pi sessions are waiting on: list, show, approve, decline",
    )
    approvals_sub = group.add_subparsers(
        dest="approvals_command", required=True, parser_class=Parser
    )
    listing = approvals_sub.add_parser(
        "list", help="every pending question of every live pi session of the home"
    )
    listing.add_argument("--json", action="store_true", help="a JSON array of the questions")
    listing.set_defaults(func=cmd_approvals_list)

    show = approvals_sub.add_parser("show", help="one question in full: details and digest")
    show.add_argument("approval_id", metavar="ID", help="apr_…")
    show.add_argument("--json", action="store_true", help="the question as a JSON object")
    show.set_defaults(func=cmd_approvals_show)

    digest_help = "the digest the operator saw (approvals show); default: the one listed just now"
    approve = approvals_sub.add_parser(
        "approve", help="answer Yes to one question (the first answer wins)", description=_EXITS
    )
    approve.add_argument("approval_id", metavar="ID", help="apr_…")
    approve.add_argument("--digest", metavar="SHA256", default=None, help=digest_help)
    approve.add_argument(
        "--grant",
        metavar="N",
        type=int,
        default=None,
        help="also keep the question's grant N (approvals show lists them): later calls "
        "inside it run without asking",
    )
    approve.set_defaults(func=cmd_approvals_approve)

    decline = approvals_sub.add_parser(
        "decline", help="answer No to one question (the first answer wins)", description=_EXITS
    )
    decline.add_argument("approval_id", metavar="ID", help="apr_…")
    decline.add_argument(
        "--reason",
        default=None,
        help=f"why (sent with the answer; at most {_MAX_REASON_CHARS} chars)",
    )
    decline.add_argument("--digest", metavar="SHA256", default=None, help=digest_help)
    decline.set_defaults(func=cmd_approvals_decline)

    serve = approvals_sub.add_parser(
        "serve",
        help="the approval page on 127.0.0.1: every pending question, Yes or No, in a browser",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=None,
        help="the port (default: the one the operator's passkeys were enrolled for, so Yes "
        "is signed by them; without any, a free one)",
    )
    serve.set_defaults(func=cmd_approvals_serve)


def cmd_approvals_serve(args: argparse.Namespace) -> ExitCode:
    """Serve the page until interrupted; the one-time login address goes to stderr (the
    operator's terminal), never to stdout or a file."""
    from guard._approvals import ApprovalPage, enrolled_port
    from guard._facade import Guard

    home = _home(args)
    port: int = args.port if args.port is not None else enrolled_port(home) or 0
    if not 0 <= port <= 65535:
        raise BadInputError("--port", "must be 0..65535", port)
    lock = threading.Lock()
    heard: dict[tuple[str, str | None], int] = {}
    with Guard.open(home) as guard:

        def refused(why: str, approval_id: str | None) -> None:
            with lock:  # counted on the page's threads, audited on this one, coalesced
                heard[(why, approval_id)] = heard.get((why, approval_id), 0) + 1

        def audit_refused() -> None:
            with lock:
                taken = dict(heard)
                heard.clear()
            for (why, approval_id), count in taken.items():
                guard.sessions.approval_refused(why, "web", approval_id, count=count)

        page = ApprovalPage(home, port=port, on_refused=refused)
        try:
            page.start()
        except OSError as exc:
            raise BadInputError("--port", f"cannot listen ({exc.strerror})", port) from None
        # The handlers first, then the address: a signal right after it still ends the page.
        # Wake up now and then: Python runs a signal's handler only when the main thread runs,
        # and one blocked without a timeout runs it only if the signal interrupts its own wait.
        try:
            with stop_signals() as stop:
                sys.stderr.write(
                    f"operator-guard approval page: {page.url}\n"
                    f"log in once (this address works one time): {page.login_url}\n"
                )
                sys.stderr.flush()
                written = time.monotonic()
                while not stop.wait(_WAKE_SECONDS):
                    if time.monotonic() - written >= _REFUSALS_EVERY_SECONDS:
                        audit_refused()  # a flood is a few records, never one a request
                        written = time.monotonic()
        finally:
            page.close()
            audit_refused()
    return ExitCode.OK
