"""Signed scoped grants, the core: which grants to offer for an asked call, and what they cover.

Besides "this call once" the dialog may offer at most two grants, derived from the guard's
own analysis of the call (``derive``): the same call again, or the same action on a glob in
the same directory. A later call is covered (``match``) only when its analysis yields the
same facts (``facts``) with every target inside the grant (``model``). Signing, time,
uses and session belong to the store (``store``) and the desk (``desk``), which the
``Guard`` uses: each covered call still gets evidence of its own.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._grants.derive import (
        NEVER_GRANTED,
        offers,
    )
    from guard._grants.desk import (
        GrantDesk,
        GrantLimits,
    )
    from guard._grants.match import (
        covers,
    )
    from guard._grants.model import (
        COVERAGE_REASONS,
        Breadth,
        Coverage,
        CoverageReason,
        GrantOffer,
        GrantPattern,
        inside,
    )
    from guard._grants.store import (
        GrantRecord,
        GrantState,
        GrantStore,
    )

__all__ = [
    "COVERAGE_REASONS",
    "NEVER_GRANTED",
    "Breadth",
    "Coverage",
    "CoverageReason",
    "GrantDesk",
    "GrantLimits",
    "GrantOffer",
    "GrantPattern",
    "GrantRecord",
    "GrantState",
    "GrantStore",
    "covers",
    "inside",
    "offers",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "NEVER_GRANTED": "guard._grants.derive",
    "offers": "guard._grants.derive",
    "GrantDesk": "guard._grants.desk",
    "GrantLimits": "guard._grants.desk",
    "covers": "guard._grants.match",
    "Breadth": "guard._grants.model",
    "COVERAGE_REASONS": "guard._grants.model",
    "Coverage": "guard._grants.model",
    "CoverageReason": "guard._grants.model",
    "GrantOffer": "guard._grants.model",
    "GrantPattern": "guard._grants.model",
    "inside": "guard._grants.model",
    "GrantRecord": "guard._grants.store",
    "GrantState": "guard._grants.store",
    "GrantStore": "guard._grants.store",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
