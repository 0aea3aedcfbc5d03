"""The sidecar's method handlers: ``methods`` composes the method table (``Sidecar``) from
its parts (``calls``, ``desk``, ``sandbox``, ``effects``, ``status``) on the shared ``state``.
They sit above the transport (``server``, ``framing``), the models (``wire``) and the words
(``text``) of the package's root, which never import them."""
