"""pi integration: the installer, the session-file reader and the extension shim.

``extension/index.ts`` is package data: ``install`` copies it into pi's extension directory
with a ``guard.json`` naming the Python that runs the sidecar.
"""
