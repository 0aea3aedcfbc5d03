"""Lowest layer: canonical JSON, the hash-chained JSONL audit log, its signed head and verify.

Imports nothing of ``guard`` or ``planning``.
"""

from audit._canonical import canonical_json, sha256_hex, sha256_prefixed
from audit._errors import AuditError, CanonicalizationError

__all__ = [
    "AuditError",
    "CanonicalizationError",
    "canonical_json",
    "sha256_hex",
    "sha256_prefixed",
]
