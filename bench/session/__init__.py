"""``make bench``'s session sections: what an agent's tool call costs around it.

``sidecar_latency`` (the JSON-RPC round trip), ``bench_policy`` (classifying a call),
``bench_sandbox`` (the OS sandbox per bash call), ``bench_effects`` (the copy-on-write layer
and its review), ``bench_network`` (the network modes), ``bench_dialogs`` (dialogs per task
with scoped grants), ``bench_routine`` (five routine tasks in the real pi). Each runs alone
too (``python bench/session/bench_policy.py``); ``run.py`` imports them by name with this
folder on ``sys.path``.
"""
