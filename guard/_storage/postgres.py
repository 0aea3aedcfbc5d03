"""PostgreSQL plumbing shared by the ledger and the central audit store (psycopg 3).

One schema, ``pi_guard``, holds both: the consumption ledger (``consumed``, ``pruned``,
``synced`` and the two ``SECURITY DEFINER`` functions ``consume`` and ``prune`` through
which a guard's role changes it) and the audit store (``audit_records``, ``audit_heads``:
append-only, a trigger refuses every ``UPDATE``, ``DELETE`` and ``TRUNCATE``). It is
created on first use by a role that may (the owner); docs/deployment-postgresql.md has
the grants for the guards' role, which can then insert but never rewrite.

Every failure is an error for the caller to turn into a refusal (fail closed). A URL is
never shown with its password: :func:`redact_url` everywhere a URL reaches a message.
"""

from __future__ import annotations

from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict

__all__ = [
    "SCHEMA",
    "SCHEMA_SQL",
    "connect",
    "ensure_schema",
    "explain",
]

SCHEMA = "pi_guard"
# Connection settings used unless the URL names its own (seconds / milliseconds).
_DEFAULTS: dict[str, Any] = {
    "connect_timeout": 5,
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
    "tcp_user_timeout": 10000,
    "application_name": "pi-operator-guard",
}
# A statement never hangs for long (a URL's own ``options=-c statement_timeout=…`` wins) ...
_TIMEOUTS = "-c statement_timeout=10000 -c idle_in_transaction_session_timeout=30000"
# ... and a consumption is durable on the server (and any synchronous standby) before it
# is acknowledged, whatever the server's or the URL's setting.
_DURABLE = "-c synchronous_commit=on"

SCHEMA_SQL = """
CREATE SCHEMA IF NOT EXISTS pi_guard;
CREATE TABLE IF NOT EXISTS pi_guard.consumed (
    evidence_id    text PRIMARY KEY,
    expires_at_ms  bigint NOT NULL,
    consumed_at_ms bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS pi_guard.pruned (
    one        integer PRIMARY KEY CHECK (one = 1),
    through_ms bigint NOT NULL
);
INSERT INTO pi_guard.pruned (one, through_ms) VALUES (1, -1) ON CONFLICT (one) DO NOTHING;
CREATE TABLE IF NOT EXISTS pi_guard.synced (
    source      text PRIMARY KEY,
    log_id      text NOT NULL,
    seq         bigint NOT NULL,
    end_offset  bigint NOT NULL,
    record_hash text NOT NULL
);
-- Single use: a consume holds a shared advisory lock that a prune takes exclusively, so it
-- waits for a prune in flight and then reads its watermark (a clock stepping back never
-- revives an id); consumes never wait for each other (an in-memory lock, no row write).
CREATE OR REPLACE FUNCTION pi_guard.consume(p_id text, p_expires bigint, p_at bigint)
RETURNS text LANGUAGE plpgsql SECURITY DEFINER SET search_path = pi_guard, pg_temp AS $$
DECLARE
    watermark bigint;
BEGIN
    PERFORM pg_advisory_xact_lock_shared(hashtext('pi_guard.pruned'), 1);
    SELECT through_ms INTO watermark FROM pruned WHERE one = 1;
    IF watermark IS NULL THEN
        RAISE EXCEPTION 'pi_guard.pruned has no watermark row';
    END IF;
    IF p_expires > watermark THEN
        INSERT INTO consumed (evidence_id, expires_at_ms, consumed_at_ms)
        VALUES (p_id, p_expires, p_at) ON CONFLICT (evidence_id) DO NOTHING;
        IF FOUND THEN
            RETURN 'inserted';
        END IF;
    END IF;
    IF EXISTS (SELECT 1 FROM consumed WHERE evidence_id = p_id) THEN
        RETURN 'already-consumed';
    END IF;
    RETURN 'forgotten';
END $$;
-- The watermark only grows; ids at or below it are forgotten (and refused). It never
-- passes the server's clock plus an hour: a host whose clock (or whose caller) is far
-- ahead cannot make every id "forgotten" for everyone.
CREATE OR REPLACE FUNCTION pi_guard.prune(p_cutoff bigint)
RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pi_guard, pg_temp AS $$
DECLARE
    watermark bigint;
    removed bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('pi_guard.pruned'), 1);
    UPDATE pruned SET through_ms = greatest(
        through_ms,
        least(p_cutoff, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 3600000)
    ) WHERE one = 1
    RETURNING through_ms INTO watermark;
    DELETE FROM consumed WHERE expires_at_ms <= watermark;
    GET DIAGNOSTICS removed = ROW_COUNT;
    RETURN removed;
END $$;
-- The highest WebAuthn sign count seen per operator credential (a counter that does not go
-- up means a cloned authenticator; both 0: an authenticator without a counter).
CREATE TABLE IF NOT EXISTS pi_guard.sign_counts (
    credential_id text PRIMARY KEY,
    sign_count    bigint NOT NULL
);
CREATE OR REPLACE FUNCTION pi_guard.advance_sign_count(p_credential text, p_count bigint)
RETURNS boolean LANGUAGE plpgsql SECURITY DEFINER SET search_path = pi_guard, pg_temp AS $$
BEGIN
    INSERT INTO sign_counts AS s (credential_id, sign_count) VALUES (p_credential, p_count)
    ON CONFLICT (credential_id) DO UPDATE SET sign_count = excluded.sign_count
    WHERE excluded.sign_count > s.sign_count OR (excluded.sign_count = 0 AND s.sign_count = 0);
    RETURN FOUND;
END $$;
REVOKE ALL ON FUNCTION pi_guard.advance_sign_count(text, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION pi_guard.consume(text, bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION pi_guard.prune(bigint) FROM PUBLIC;
CREATE TABLE IF NOT EXISTS pi_guard.audit_records (
    source     text NOT NULL,
    seq        bigint NOT NULL CHECK (seq >= 0),
    line       bytea NOT NULL,
    shipped_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, seq)
);
CREATE TABLE IF NOT EXISTS pi_guard.audit_heads (
    source     text NOT NULL,
    sha256     text NOT NULL,
    records    bigint NOT NULL CHECK (records >= 0),
    head       bytea NOT NULL,
    shipped_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, sha256)
);
CREATE OR REPLACE FUNCTION pi_guard.append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the pi-operator-guard audit store is append-only (% on %)',
        TG_OP, TG_TABLE_NAME;
END $$;
CREATE OR REPLACE TRIGGER audit_records_append_only
    BEFORE UPDATE OR DELETE ON pi_guard.audit_records
    FOR EACH ROW EXECUTE FUNCTION pi_guard.append_only();
CREATE OR REPLACE TRIGGER audit_records_no_truncate
    BEFORE TRUNCATE ON pi_guard.audit_records
    FOR EACH STATEMENT EXECUTE FUNCTION pi_guard.append_only();
CREATE OR REPLACE TRIGGER audit_heads_append_only
    BEFORE UPDATE OR DELETE ON pi_guard.audit_heads
    FOR EACH ROW EXECUTE FUNCTION pi_guard.append_only();
CREATE OR REPLACE TRIGGER audit_heads_no_truncate
    BEFORE TRUNCATE ON pi_guard.audit_heads
    FOR EACH STATEMENT EXECUTE FUNCTION pi_guard.append_only();
"""

_PRESENT = (
    "SELECT to_regprocedure('pi_guard.consume(text,bigint,bigint)') IS NOT NULL "
    "AND to_regprocedure('pi_guard.prune(bigint)') IS NOT NULL "
    "AND to_regprocedure('pi_guard.advance_sign_count(text,bigint)') IS NOT NULL "
    "AND to_regclass('pi_guard.synced') IS NOT NULL "
    "AND to_regclass('pi_guard.audit_heads') IS NOT NULL "
    "AND to_regclass('pi_guard.audit_records') IS NOT NULL"
)


def _password(url: str) -> str | None:
    try:
        value = conninfo_to_dict(url).get("password")
    except psycopg.Error:
        return None
    return str(value) if value else None


def explain(exc: BaseException, url: str) -> str:
    """One line for a psycopg error, never with the URL's password in it."""
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        text = f"permission denied ({_first_line(exc)}); see the grants in the deployment guide"
    elif isinstance(exc, pg_errors.QueryCanceled):
        text = "the server did not answer in time (statement timeout)"
    elif isinstance(exc, pg_errors.AdminShutdown | pg_errors.CrashShutdown):
        text = "the server shut down or restarted during the request"
    elif isinstance(exc, psycopg.OperationalError):
        text = f"connection failed or lost: {_first_line(exc)}"
    elif isinstance(exc, psycopg.Error):
        text = f"database error: {_first_line(exc)}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    secret = _password(url)
    if secret:
        text = text.replace(secret, "***")
    return text


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0] if lines else type(exc).__name__
    return text[:300]


def connect(url: str) -> psycopg.Connection[Any]:
    """An autocommit connection with timeouts, keepalives and ``synchronous_commit=on``.

    Raises :class:`psycopg.Error` (the caller explains it with :func:`explain`).
    """
    given = conninfo_to_dict(url)
    extra = {k: v for k, v in _DEFAULTS.items() if k not in given}
    options = f"{_TIMEOUTS} {given.get('options', '')} {_DURABLE}"
    return psycopg.connect(url, autocommit=True, options=options, **extra)


def ensure_schema(conn: psycopg.Connection[Any]) -> None:
    """Create the ``pi_guard`` schema when it is missing (needs the owner's rights once)."""
    row = conn.execute(_PRESENT).fetchone()
    if row is not None and row[0]:
        return
    with conn.transaction():
        # Two first users at once: one creates, the other waits and finds it done.
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('pi_guard.schema'))")
        row = conn.execute(_PRESENT).fetchone()
        if row is None or not row[0]:
            conn.execute(SCHEMA_SQL.encode())
