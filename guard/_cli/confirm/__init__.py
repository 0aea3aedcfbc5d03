"""``pi-guard`` commands about confirmations: evidence (mint, record, consume), the
single-use ledger, grants, pending approvals and the operator's passkeys."""
