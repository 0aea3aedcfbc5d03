"""``pi-guard operator enroll|list|remove``: the operator's own passkeys, which sign each Yes.

A passkey (a WebAuthn credential: a security key, the laptop's platform authenticator)
enrolled here signs every Yes given on the approval page (``pi-guard approvals serve``, or
the session's page under ``[approvals] page = true``) served at the same origin; the
sidecar checks the signature and signs it into the evidence, and a consumer can require it
(``[evidence] require_operator_signature``).

* ``enroll [--label L] [--port N] [--timeout S]`` serves the enrolment page on
  ``http://localhost:N`` (default: the port the passkeys already enrolled use, else
  :data:`DEFAULT_PORT`), prints its one-time login address to stderr (the operator's
  terminal, never anything the model reads), waits for one ceremony, keeps the credential in
  the keyring's signed ``operators`` list (audited ``operator.enrolled``) and prints it as
  JSON on stdout. Its origin is what every signature must name: serve the approval page on
  the same port.
* ``list [--json]`` shows every enrolled credential, active and removed (``--json``: a JSON
  array of :class:`OperatorListing`); it reads the public keyring only.
* ``remove ID`` marks one removed (audited ``operator.removed``): evidence it signs from
  then on is refused.

Exit codes: 0 enrolled, listed, removed; 2 bad input (a label, port, timeout or ID out of
range, a port that cannot be bound, no guard home at ``--home`` for ``list``/``remove``, an
unknown or already-enrolled credential, an authenticator answer that did not verify); 3 no
passkey was enrolled before ``--timeout`` ran out (nothing changed: as ``approvals approve``
says of a question whose time ran out, the operator's act was not accepted, it was not bad
input); 6 the guard's own state (key, keyring, audit log) cannot be used.
"""

from __future__ import annotations

import argparse
import getpass
import re
import socket
import sys
import threading
import time
from pathlib import Path

from audit.verify import render_table
from guard._cli.args import Parser, Subparsers, existing_home, int_arg
from guard._cli.exits import ExitCode
from guard._cli.io import Listing, emit, stop_signals
from guard._errors import BadInputError
from guard._home import resolve_home
from guard._operator import OperatorCredential

__all__ = ["DEFAULT_PORT", "OperatorListing", "OperatorListings", "register"]

DEFAULT_PORT = 8790
"""``enroll``'s port when no passkey is enrolled yet (``localhost:8790``)."""
DEFAULT_TIMEOUT = 300
_MAX_LABEL = 100
_WAKE_SECONDS = 0.2  # the main thread wakes this often to run a signal's handler
_CREDENTIAL_ID = re.compile(r"[A-Za-z0-9_-]{1,4096}")

OperatorListing = OperatorCredential
"""One credential in ``operator list --json``: exactly as the keyring's ``operators`` holds it."""


class OperatorListings(Listing[OperatorListing]):
    """``operator list --json``: a JSON array, in enrolment order."""


def _home(args: argparse.Namespace) -> Path:
    """The existing guard home (these commands never create one)."""
    return existing_home(args.home)


def _default_label() -> str:
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "operator"
    return f"{user}@{socket.gethostname()}"[:_MAX_LABEL]


def _label(text: str | None) -> str:
    label = _default_label() if text is None else text
    if not 1 <= len(label) <= _MAX_LABEL or not label.isprintable():
        raise BadInputError("--label", f"must be 1..{_MAX_LABEL} printable characters", label)
    return label


def _configured_port(home: Path) -> int | None:
    """The user policy's ``[approvals] port`` (the page a session serves is there, so the
    passkey must be enrolled for it); ``None`` when it names none."""
    from guard._policy import PolicyCache

    port = PolicyCache(home).policy_for(Path.cwd()).approvals.port
    return port or None


def cmd_operator_enroll(args: argparse.Namespace) -> ExitCode:
    """Serve one enrolment; the login address goes to stderr, the credential to stdout."""
    from guard._approvals import ApprovalPage, Enrolment, enrolled_port
    from guard._facade import Guard

    label = _label(args.label)
    home = resolve_home(args.home)
    port: int = (
        args.port
        if args.port is not None
        else _configured_port(home) or enrolled_port(home) or DEFAULT_PORT
    )
    lock = threading.Lock()  # the page's threads share one guard
    with Guard.open(home) as guard:

        def keep(credential: OperatorCredential) -> OperatorCredential:
            with lock:
                return guard.operators.enroll(credential)

        def refused(why: str, approval_id: str | None) -> None:
            with lock:
                guard.sessions.approval_refused(why, "web", approval_id)

        enrolment = Enrolment(label, keep)
        page = ApprovalPage(home, port=port, on_refused=refused, enrol=enrolment)
        try:
            page.start()
        except OSError as exc:
            from guard._approvals import port_holder

            holder = port_holder(home, port)
            why = f"cannot listen ({exc.strerror})" if holder is None else (
                f"cannot listen: {holder} holds it (end that session, enrol, then start it "
                "again: the passkey is for this port's page)"
            )  # fmt: skip
            raise BadInputError("--port", why, port) from None
        try:
            # SIGINT or SIGTERM (handled before the address is shown): the page closes and
            # nothing is enrolled.
            with stop_signals() as stop:
                sys.stderr.write(
                    f"operator-guard passkey enrolment for {page.origin} (label {label!r})\n"
                    f"open once, within {args.timeout} s (this address works one time): "
                    f"{page.login_url}\n"
                )
                sys.stderr.flush()
                deadline = time.monotonic() + args.timeout
                while not enrolment.done and not stop.is_set() and time.monotonic() < deadline:
                    stop.wait(min(_WAKE_SECONDS, max(deadline - time.monotonic(), 0.0)))
            kept = enrolment.wait(0)
        finally:
            page.close()
    if kept is None:
        sys.stderr.write(
            f"pi-guard: not enrolled: no passkey was enrolled within {args.timeout} s\n"
        )
        return ExitCode.REJECTED
    emit(kept)
    return ExitCode.OK


def _listed(home: Path) -> list[OperatorCredential]:
    from guard._evidence import KEYRING_FILE, PublicKeyring

    if not (home / KEYRING_FILE).exists():
        return []  # a home whose guard never started: nothing enrolled
    return list(PublicKeyring.load(home / KEYRING_FILE).operators.values())


def cmd_operator_list(args: argparse.Namespace) -> ExitCode:
    listed = _listed(_home(args))
    if args.json:
        emit(OperatorListings(listed))
    elif not listed:
        sys.stdout.write("(no passkeys enrolled: pi-guard operator enroll)\n")
    else:
        rows = [
            [c.credential_id, c.status, c.origin, c.removed_at_iso or c.enrolled_at_iso, c.label]
            for c in listed
        ]
        sys.stdout.write(render_table(["ID", "STATUS", "ORIGIN", "SINCE", "LABEL"], rows))
    return ExitCode.OK


def cmd_operator_remove(args: argparse.Namespace) -> ExitCode:
    if _CREDENTIAL_ID.fullmatch(args.credential_id) is None:
        raise BadInputError("ID", "is not a credential id (base64url)", args.credential_id)
    from guard._facade import Guard

    with Guard.open(_home(args)) as guard:
        removed = guard.operators.remove(args.credential_id)
    sys.stdout.write(
        f"removed {removed.credential_id} ({removed.label}): evidence it signs is refused "
        "from now on\n"
    )
    return ExitCode.OK


_EXITS = (
    "Exit codes: 0 enrolled; 2 bad input (label, port, timeout, a port that cannot be bound, "
    "a credential already enrolled, an authenticator answer that did not verify); 3 nothing "
    "enrolled before --timeout ran out; 6 the guard's key, keyring or log cannot be used."
)


def register(sub: Subparsers) -> None:
    """Add ``operator`` and its subcommands."""
    group = sub.add_parser(
        "operator", help="the operator's passkeys that sign each Yes on the page: enroll, list"
    )
    operator_sub = group.add_subparsers(dest="operator_command", required=True, parser_class=Parser)
    enroll = operator_sub.add_parser(
        "enroll",
        help="enrol a passkey in a browser on localhost (one-time login on stderr)",
        description=_EXITS,
    )
    enroll.add_argument(
        "--label",
        default=None,
        help=f"a name for it (default: user@host; at most {_MAX_LABEL} characters)",
    )
    enroll.add_argument(
        "--port",
        type=int_arg("--port", 1, 65535),
        default=None,
        help="the page's port on localhost, the passkey's origin: serve the approval page "
        f"there too (default: the enrolled passkeys' port, else {DEFAULT_PORT})",
    )
    enroll.add_argument(
        "--timeout",
        type=int_arg("--timeout", 1, 3600),
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for the enrolment (default {DEFAULT_TIMEOUT})",
    )
    enroll.set_defaults(func=cmd_operator_enroll)

    listing = operator_sub.add_parser("list", help="every enrolled passkey, active and removed")
    listing.add_argument("--json", action="store_true", help="a JSON array of the credentials")
    listing.set_defaults(func=cmd_operator_list)

    remove = operator_sub.add_parser(
        "remove", help="remove one passkey: evidence it signs is refused from then on"
    )
    remove.add_argument(
        "credential_id",
        metavar="ID",
        help="its id (operator list); an id may begin with -: write -- before it",
    )
    remove.set_defaults(func=cmd_operator_remove)
