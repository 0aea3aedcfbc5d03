"""``pi-guard serve``: the JSON-RPC 2.0 sidecar the pi extension talks to.

``framing`` reads and writes one JSON object per LF-terminated line, ``server`` dispatches
requests and maps errors, ``wire`` holds each method's params and result models, ``methods``
implements them, ``text`` words what people read and ``runtime`` fills the pi runtime's facts
into a planner's input. A new RPC method goes into ``wire``,
``methods`` and ``text``, and the shim (:mod:`guard._pi`) calls it.
"""
