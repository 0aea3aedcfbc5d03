"""PostgreSQL URLs are never shown with their password."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from guard._storage.pg_url import is_postgres_url, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:5432/db", "postgresql://u:***@h:5432/db"),
        ("postgres://u@h/db", "postgres://u@h/db"),
        ("postgresql://u:p@ss:w@h/db", "postgresql://u:***@h/db"),
        (
            "postgresql://h/db?password=pw&sslmode=require",
            "postgresql://h/db?password=***&sslmode=require",
        ),
        ("postgresql://u:pw@h1:5432,h2:5433/db", "postgresql://u:***@h1:5432,h2:5433/db"),
        ("postgresql://u:pw@[::1]/db", "postgresql://u:***@[::1]/db"),
    ],
)
def test_the_password_is_replaced(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@given(
    st.text(
        alphabet=st.characters(blacklist_characters="@/?#&", blacklist_categories=("Cs",)),
        min_size=6,
        max_size=30,
    )
)
def test_no_password_survives(password: str) -> None:
    assume(password not in "postgresql://user:***@db.internal:5432/guard")
    shown = redact_url(f"postgresql://user:{password}@db.internal:5432/guard")
    assert password not in shown


def test_only_postgres_schemes_are_urls() -> None:
    assert is_postgres_url("postgresql://x") and is_postgres_url("postgres://x")
    assert not is_postgres_url("sqlite:///x") and not is_postgres_url("host=db password=x")
