"""``pi-guard serve``: the JSON-RPC 2.0 sidecar the pi extension talks to; a thin adapter from
the wire to the :class:`~guard.Guard` facade, which decides and records.

``framing`` reads and writes one JSON object per LF-terminated line, ``server`` dispatches
requests and maps errors, ``wire`` holds each method's params and result models, ``text``
words what people read and ``runtime`` fills the pi runtime's facts into a planner's input.
Above them, ``session`` is the :class:`~guard._sidecar.session.Session` the sidecar serves,
composed of parts that each hold their own state (``home``, ``desk``, ``sandbox``,
``effects``, ``status``), and ``handlers.methods`` is the method table (``Sidecar``): each
method's params model to a verb of the session. A new RPC method goes into ``wire``, the part
of the session it concerns, the table and ``text``, and the shim (:mod:`guard._pi`) calls it.
"""

import typing

from guard._lazy import exports as _exports

if typing.TYPE_CHECKING:
    from guard._sidecar.handlers.methods import (
        serve,
    )

__all__ = [
    "serve",
]

# Each public name's home module, imported on first use.
_HOMES: dict[str, str] = {
    "serve": "guard._sidecar.handlers.methods",
}


# Hidden from mypy, which sees the imports above: a name not exported stays an error.
if not typing.TYPE_CHECKING:
    __getattr__, __dir__ = _exports(__name__, _HOMES, __all__)
