"""The session a sidecar serves, composed of its parts: the ``home`` (the guard opened on it,
the damage of its log, the export of decisions), the ``desk`` (questions, answers, offered
grants), the ``sandbox`` (plan, params, stamp, network), the ``effects`` review (layers,
baseline, quiet settings) and the ``status`` reports, built in one place by ``session``'s
:class:`Session`, whose verbs follow a call's life. It sits above the transport, the wire
shapes and the words of the package's root, and below ``handlers``, which serves it."""

from guard._sidecar.session.home import open_problem
from guard._sidecar.session.session import Session

__all__ = ["Session", "open_problem"]
