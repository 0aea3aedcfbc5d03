"""``pi-guard grants list|revoke``: the operator's scoped grants in one guard home.

* ``list [--json]`` shows the active grants of every pi session of the home: id, session,
  what each covers (its label), minutes and uses left; ``--json`` prints a JSON array of
  :class:`GrantListing`;
* ``revoke ID`` ends that grant, ``revoke --all`` every active grant: a signed ``revoked``
  line in the grants file and a ``grant.revoked`` audit record (``by: cli``) for each.

A grants file with a line that does not verify (edited, forged, cut) is refused with one
line naming it (exit 6): the guard already lets none of its grants cover a call, and a
listing must not show a forged grant as if it were real. Moving the file aside ends every
grant in it (each call is asked again).
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel

from audit.verify import render_table
from audit.wire import WIRE_CONFIG, parse_iso, utc_now
from guard._cli.args import Parser, Subparsers, existing_home
from guard._cli.exits import ExitCode
from guard._cli.io import Listing, emit
from guard._errors import BadInputError, StateError
from guard._grants import Breadth

if TYPE_CHECKING:
    from guard._facade import Guard
    from guard._grants import GrantDesk, GrantState

__all__ = ["GrantListing", "GrantListings", "register"]

_GRANT_ID = re.compile(r"grant_[A-Za-z0-9_-]{22}")


class GrantsFileError(StateError):
    """The home's grants file has a line that does not verify: none of its grants counts."""

    what = "grants file"


class GrantListing(BaseModel):
    """One active grant in ``grants list --json``: what it covers, for which pi session,
    how long and how often still."""

    model_config = WIRE_CONFIG

    grant_id: str
    session_id: str
    label: str
    breadth: Breadth
    tool: str
    program: str | None
    fixed_args: tuple[str, ...]
    globs: tuple[str, ...]
    scope: str
    created_at_iso: str
    expires_at_iso: str
    seconds_left: int
    max_uses: int
    uses: int
    uses_left: int
    evidence_id: str
    """The evidence of the dialog in which the operator gave the grant."""


class GrantListings(Listing[GrantListing]):
    """``grants list --json``: a JSON array, oldest grant first."""


def _listing(state: GrantState, now: datetime) -> GrantListing:
    record = state.record
    left = parse_iso(record.expires_at_iso, "expiresAtIso") - now
    return GrantListing(
        grant_id=record.grant_id,
        session_id=record.session_id,
        label=record.label,
        breadth=record.breadth,
        tool=record.pattern.tool,
        program=record.pattern.program,
        fixed_args=record.pattern.fixed_args,
        globs=record.pattern.globs,
        scope=record.pattern.scope,
        created_at_iso=record.created_at_iso,
        expires_at_iso=record.expires_at_iso,
        seconds_left=max(0, int(left.total_seconds())),
        max_uses=record.max_uses,
        uses=state.uses,
        uses_left=max(0, record.max_uses - state.uses),
        evidence_id=record.evidence_id,
    )


def _open(args: argparse.Namespace) -> Guard:
    """The guard of an existing home (``grants`` never creates one)."""
    from guard._facade import Guard

    return Guard.open(existing_home(args.home))


def _verified(desk: GrantDesk) -> None:
    """Refuse a grants file that did not verify at the desk's last read."""
    if desk.problem is not None:
        raise GrantsFileError(
            desk.store.path,
            f"does not verify ({desk.problem}): none of its grants covers a call; "
            "move it aside to end them all",
        )


def cmd_grants_list(args: argparse.Namespace) -> ExitCode:
    now = utc_now()
    with _open(args) as guard:
        active = guard.grants.listed(now)
        _verified(guard.grants.desk)
    listings = [_listing(s, now) for s in active]
    if args.json:
        emit(GrantListings(listings))
    elif not listings:
        sys.stdout.write("(no active grants)\n")
    else:
        rows = [
            [g.grant_id, g.session_id, f"{g.seconds_left // 60} min", str(g.uses_left), g.label]
            for g in listings
        ]
        headers = ["GRANT", "SESSION", "TIME LEFT", "USES LEFT", "COVERS"]
        sys.stdout.write(render_table(headers, rows))
    return ExitCode.OK


def _known(guard: Guard, grant_id: str) -> GrantState | None:
    """``grant_id``'s state as the file has it now (``None``: no such grant)."""
    loaded = guard.grants.desk.store.load(guard.public_keyring())
    return loaded.grants.get(grant_id)


def cmd_grants_revoke(args: argparse.Namespace) -> ExitCode:
    if args.grant_id is not None and _GRANT_ID.fullmatch(args.grant_id) is None:
        raise BadInputError("ID", "is not a grant id (grant_ and 22 characters)", args.grant_id)
    now = utc_now()
    with _open(args) as guard:
        desk = guard.grants.desk
        # Only grants still active now: one whose time ran out is not called revoked.
        active = [s.record.grant_id for s in desk.listed(now)]
        _verified(desk)
        if args.grant_id is not None and args.grant_id not in active:
            state = _known(guard, args.grant_id)
            if state is None:
                raise BadInputError("grant", "no such grant in this home", args.grant_id)
            why = state.ended or "time"
            raise BadInputError("grant", f"this grant has already ended ({why})", args.grant_id)
        chosen = active if args.grant_id is None else [args.grant_id]
        ended = [
            state
            for grant_id in chosen
            for state in desk.end("revoked", now, grant_id=grant_id, by="cli")
        ]
        _verified(desk)
    if args.grant_id is not None and not ended:  # ended by another process meanwhile
        raise BadInputError("grant", "this grant has already ended", args.grant_id)
    if not ended:
        sys.stderr.write("pi-guard: no active grants to revoke\n")
    for state in ended:
        sys.stdout.write(
            f"revoked {state.record.grant_id} (session {state.record.session_id}, "
            f"{state.uses} of {state.record.max_uses} uses)\n"
        )
    return ExitCode.OK


def register(sub: Subparsers) -> None:
    """Add ``grants`` and its subcommands."""
    group = sub.add_parser("grants", help="the operator's scoped grants in this home: list, revoke")
    grants_sub = group.add_subparsers(dest="grants_command", required=True, parser_class=Parser)
    listing = grants_sub.add_parser(
        "list", help="the active grants of every pi session: what, time and uses left"
    )
    listing.add_argument("--json", action="store_true", help="a JSON array of the grants")
    listing.set_defaults(func=cmd_grants_list)
    revoke = grants_sub.add_parser(
        "revoke", help="end one grant (ID) or every active grant (--all); audited"
    )
    which = revoke.add_mutually_exclusive_group(required=True)
    which.add_argument("grant_id", nargs="?", default=None, metavar="ID", help="grant_…")
    which.add_argument("--all", action="store_true", help="every active grant of the home")
    revoke.set_defaults(func=cmd_grants_revoke)
