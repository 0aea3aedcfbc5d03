"""The shared envelope vectors through the guard's own consumer (tests/vectors/evidence/envelopes.json).

The TypeScript verifier runs the same file (tests/verifier/); both must reach the stated decision
and reason code on every vector.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.guard.evidence.envelope_vectors import envelope_result, keyring, load

DOC = load()
RING = keyring(DOC)


@pytest.mark.parametrize("vector", DOC["vectors"], ids=lambda v: v["id"])
def test_envelope_vectors(vector: dict[str, Any], tmp_path: Path) -> None:
    assert envelope_result(vector, RING, tmp_path) == vector["expected"]


def test_there_is_a_vector_for_every_reason_of_checks_1_to_5_and_the_dialog_check() -> None:
    reasons = {r for v in DOC["vectors"] for r in v["expected"]["reasons"]}
    assert reasons >= {
        "no-evidence",
        "schema-violation",
        "unsupported-schema",
        "wrong-custom-type",
        "invalid-json",
        "duplicate-key",
        "not-utf8",
        "too-large",
        "not-an-object",
        "unknown-key",
        "key-retired",
        "signature-invalid",
        "origin-untrusted",
        "ttl-out-of-range",
        "created-in-future",
        "expired",
        "call-id-required",
        "tool-call-id-mismatch",
        "grant-covered",
    }
