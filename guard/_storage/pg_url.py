"""PostgreSQL URLs without psycopg: recognize one, and show one without its password."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

__all__ = ["is_postgres_url", "redact_url"]

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
