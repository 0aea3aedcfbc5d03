"""The sidecar's method handlers: ``methods`` is the method table (``Sidecar``), one entry per
method from its params model to a verb of the :class:`~guard._sidecar.session.Session` it
serves. They sit above the session, the transport (``server``, ``framing``), the models
(``wire``) and the words (``text``) of the package's root, which never import them."""
