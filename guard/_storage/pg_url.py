"""PostgreSQL without psycopg: recognize a URL, show one without its password, say whether
psycopg is installed, and the batch ``audit ship`` writes per transaction."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["SHIP_BATCH", "is_postgres_url", "psycopg_missing", "redact_url"]

SHIP_BATCH = 500
"""Records per transaction of ``audit ship`` unless ``--batch`` says otherwise."""

_SCHEMES = ("postgresql://", "postgres://")
_PASSWORD_PARAM = re.compile(r"(?i)(password=)[^&\s]*")


def is_postgres_url(value: str) -> bool:
    """Whether ``value`` is a ``postgresql://`` (or ``postgres://``) URL."""
    return value.startswith(_SCHEMES)


def redact_url(url: str) -> str:
    """``url`` with any password replaced by ``***`` (in the userinfo and the query)."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, _, hosts = netloc.rpartition("@")
            user = userinfo.split(":", 1)[0]
            netloc = f"{user}:***@{hosts}" if ":" in userinfo else f"{user}@{hosts}"
        shown = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    except ValueError:
        return "postgresql://(unparsable URL)"
    return _PASSWORD_PARAM.sub(r"\1***", shown)


def psycopg_missing() -> str | None:
    """``None`` when PostgreSQL can be used; otherwise the one line that says how to get it."""
    try:
        import psycopg  # noqa: F401  (the PostgreSQL modules need it a moment later anyway)
    except ImportError:
        pass
    else:
        return None
    return (
        "a PostgreSQL URL is configured, but psycopg is not installed: "
        "pip install 'pi-operator-guard[postgres]'"
    )
