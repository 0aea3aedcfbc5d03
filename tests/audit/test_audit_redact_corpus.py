"""The redaction corpus (tests/vectors/redaction/): detection and false-positive rates pinned.

``secret-shapes.json`` holds fake secrets in the shapes of real credentials, each inside a
command line; ``everyday.json`` holds everyday commands with no secret in them. How both
were made: ``tests/vectors/redaction/make_redaction_corpus.py`` (and its docstring).
docs/performance.md ("Secret redaction") reports the numbers these tests pin.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from pathlib import Path

from audit.log import redact_preview
from tests.vectors.redaction.make_redaction_corpus import FAMILIES, secret_shapes

HERE = Path(__file__).resolve().parents[1] / "vectors" / "redaction"
SHAPES: list[dict[str, str]] = json.loads((HERE / "secret-shapes.json").read_text("utf-8"))
EVERYDAY: list[str] = json.loads((HERE / "everyday.json").read_text("utf-8"))
SPACE = re.compile(r"\s+")
# The shortest piece of a secret that counts as a leak.
WINDOW = 8


def leaked(out: str, secret: str) -> bool:
    width = min(WINDOW, len(secret))
    return any(secret[i : i + width] in out for i in range(len(secret) - width + 1))


def test_the_committed_corpus_is_what_the_generator_makes() -> None:
    assert secret_shapes() == SHAPES


def test_secret_shapes_are_redacted() -> None:
    missed = Counter(
        c["family"]
        for c in SHAPES
        if leaked(redact_preview(c["command"], limit=10_000), c["secret"])
    )
    rate = 1 - sum(missed.values()) / len(SHAPES)
    assert len(SHAPES) >= 300
    assert rate >= 0.95, missed
    # No family is missed wholesale.
    per_family = Counter(c["family"] for c in SHAPES)
    assert set(per_family) == set(FAMILIES)
    assert all(missed[f] <= per_family[f] // 2 for f in per_family), missed


def test_everyday_commands_are_left_alone() -> None:
    altered = [c for c in EVERYDAY if redact_preview(c, limit=10_000) != SPACE.sub(" ", c).strip()]
    assert len(EVERYDAY) >= 500
    assert len(altered) / len(EVERYDAY) <= 0.02, altered


def test_redaction_stays_cheap() -> None:
    # A loose bound (CI machines vary): the measured mean is about 0.05 ms for an everyday
    # command and 0.2 ms for one holding a secret (docs/performance.md).
    redact_preview("warm up: load the rule set once")
    commands = [*EVERYDAY, *(c["command"] for c in SHAPES)]
    start = time.perf_counter()
    for command in commands:
        redact_preview(command)
    mean = (time.perf_counter() - start) / len(commands)
    assert mean < 0.005
