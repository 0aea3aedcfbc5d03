"""``pi-guard audit …``: the audit log (verify, show, report, recover), its transparency
log (checkpoints, proofs, anchors) and shipping it to the central store."""
