"""Database clients: the SQL they run (``psql -c``, ``mysql -e``, ``sqlite3 DB 'SQL'`` …).

The SQL in an option, after the database (``sqlite3``, ``duckdb``) or on stdin goes to the
walk's allowlist of harmless SQL (a read); anything else asks. ``psql``, ``mysql`` and
``sqlite3`` read what they name; the other clients' words are not known.
"""

from __future__ import annotations

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, words
from guard._policy.bash.programs.code import inline, option_values, positionals

__all__ = ["CLIENTS", "READING_CLIENTS"]


_READ = Use(read=True, write=False)
# Options of sqlite3 and duckdb that take a value, before the database and its SQL.
_SQL_AFTER = words("-cmd -separator -nullvalue -init")
_CLIENTS: dict[str, tuple[frozenset[str], bool]] = {
    # program: (options carrying SQL, whether a positional after the database is SQL)
    "psql": (words("-c --command"), False),
    "pgcli": (words("-c --command"), False),
    "mysql": (words("-e --execute"), False),
    "mariadb": (words("-e --execute"), False),
    "mycli": (words("-e --execute"), False),
    "sqlite3": (words("-cmd"), True),
    "litecli": (words("-e --execute"), False),
    "duckdb": (words("-c -s -cmd"), True),
    "sqlcmd": (words("-q -Q"), False),
    "clickhouse-client": (words("-q --query"), False),
    "cqlsh": (words("-e --execute"), False),
}


def _runs(w: SyntaxWalker, command: Command) -> None:
    options, positional_sql = _CLIENTS[command.program or ""]
    words = option_values(command.args, options)
    if positional_sql:
        positional = positionals(command.args, _SQL_AFTER)
        words.extend(positional[1:])
    if command.stdin_texts:
        words.extend(Word.literal(t) for t in command.stdin_texts)
    inline(w, command, words, "sql")


READING_CLIENTS = Card(
    names=words("psql mysql sqlite3"),
    paths=Shape(operands=_READ, values=_READ, assignments=True),
    runs=_runs,
)
"""The clients whose operands are read."""

CLIENTS = Card(names=frozenset(_CLIENTS) - READING_CLIENTS.names, runs=_runs)
"""The other clients: their SQL is read, their paths are not known."""
