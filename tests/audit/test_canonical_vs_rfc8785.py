"""Our RFC 8785 fast path against the reference package and the RFC's own examples."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import CanonicalizationError
from audit.wire import canonical_json

VECTORS = Path(__file__).parent.parent / "vectors" / "jcs-rfc8785.json"

# Any Unicode except lone surrogates (not valid I-JSON, RFC 7493 section 2.1).
texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20)
safe_ints = st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1)
scalars = st.one_of(st.none(), st.booleans(), safe_ints, texts)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(texts, children, max_size=5)
    ),
    max_leaves=30,
)


@pytest.mark.parametrize("vector", json.loads(VECTORS.read_text()), ids=lambda v: v["source"])
def test_known_answers(vector: dict[str, str]) -> None:
    value = json.loads(vector["input"])
    expected = vector["expected"].encode("utf-8")
    assert canonical_json(value) == expected
    assert rfc8785.dumps(value) == expected


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_equals_reference_for_arbitrary_json(value: Any) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.text(
            alphabet=st.characters(min_codepoint=0xE000, blacklist_categories=["Cs"]), max_size=3
        ),
        safe_ints,
        max_size=6,
    )
)
def test_utf16_key_order_above_the_bmp(value: dict[str, int]) -> None:
    assert canonical_json(value) == rfc8785.dumps(value)


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_floats_take_the_reference_path(value: float) -> None:
    assert canonical_json({"x": value}) == rfc8785.dumps({"x": value})


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (2**53, "integer-out-of-range"),
        (-(2**53), "integer-out-of-range"),
        ({1: "x"}, "non-string-key"),
        (b"bytes", "unsupported-type"),
        (float("nan"), "not-canonicalizable"),
        (float("inf"), "not-canonicalizable"),
        ("\ud800", "not-canonicalizable"),
    ],
)
def test_refuses_what_jcs_cannot_represent(value: Any, code: str) -> None:
    with pytest.raises(CanonicalizationError) as info:
        canonical_json(value)
    assert info.value.code == code


def test_deep_nesting_is_refused_not_a_recursion_crash() -> None:
    value: Any = 0
    for _ in range(100):
        value = [value]
    with pytest.raises(CanonicalizationError) as info:
        canonical_json(value)
    assert info.value.code == "nesting-too-deep"
