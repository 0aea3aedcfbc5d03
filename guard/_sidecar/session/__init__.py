"""The session a sidecar serves, composed of its parts. Those that hold state: the ``home``
(the guard opened on it, the damage of its log, the export of decisions), the ``desk``
(questions, answers, refusals, this session's grants), the ``sandbox`` (plan, params, stamp,
network), the ``effects`` review (layers, baseline, quiet settings) and the ``memo`` of each
call between its requests. Those that act on them: the ``intake`` (``evaluate``), the
``answers`` (``record``, ``audit.declined``), the ``consume`` part and the ``status`` reports.
``session``'s :class:`Session` builds them in one place; its verbs follow a call's life. It
sits above the transport, the wire shapes and the words of the package's root, and below
``handlers``, which serves it."""

from guard._sidecar.session.home import open_problem
from guard._sidecar.session.session import Session

__all__ = ["Session", "open_problem"]
