"""Processes for the tests that race many at once (consumers, ledgers, grant uses).

``racers()`` is a ``forkserver`` context whose server has already imported the guard, its
storage and pytest: each process it starts is a fork of that server, not a fresh Python that
imports them all again (about half a CPU-second each, sixteen at a time). A fork of a fresh,
single-threaded server, unlike a fork of the pytest worker, holds no lock another thread held.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.context import ForkServerContext

__all__ = ["racers"]

PRELOAD = (
    "pytest",
    "freezegun",
    "psycopg",
    "audit.verify",
    "guard._cli",
    "guard._storage.pg_ledger",
)
"""Imported once by the server (a module that is missing is skipped, as ``multiprocessing``
does with every preload)."""


def racers() -> ForkServerContext:
    """The context to start racing processes in (the same server for the whole worker)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))
    return context
