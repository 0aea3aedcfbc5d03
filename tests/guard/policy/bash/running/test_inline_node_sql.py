"""``node -e``/``-p`` code and SQL given to a database client that the bash analysis lets pass.

Each case goes through :func:`analyze`; an ``inline-code`` finding means the guard asks.
node passes ``console.log(<values>)`` statements (like ``python -c "print(…)"``) or, with
``-p``, a bare value (``require`` and the hostile spellings: ``test_javascript``). SQL passes
as one
reading statement whose function calls are a few aggregates (any letter case), or a listing
meta-command such as sqlite's ``.tables`` or psql's ``\\dt``.
"""

from __future__ import annotations

import shlex

import pytest

from guard._policy.bash.walker import analyze


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "node -e 'console.log(process.version)'",
        "node -e 'console.log(\"hi\");'",
        "nodejs -e 'console.log(1 + 2)'",
        "node -p 'console.log(process.arch)'",
        "node -p process.versions.node",
        "node -p '1 + 2'",
        # judged like python3 -c "print('a', 'b'); print(1 + 2)"
        "node -e \"console.log('a', 'b'); console.log(process.version)\"",
        "node --eval 'console.log(`done`)'",
        "node -e 'console.log([1, 2, 3])'",
        "nodejs -e \"console.info('x');console.error('y', 2 * 3);\"",
        "node -e 'console.log(\"rm -rf notes; ${x}\")'",
    ],
)
def test_node_version_and_literal_output_passes_without_asking(command: str) -> None:
    assert checks(command) == []


@pytest.mark.parametrize(
    "command",
    [
        "node -e process.version",
        "node -e 'console.log(require(\"fs\"))'",
        'node -p \'require("child_process").execSync("ls")\'',
        "node -e \"console.log('x'); require('fs').rmSync('notes', {recursive: true})\"",
        'node --eval \'console.log(`${require("fs").rmSync("notes")}`)\'',
        "node -e \"console.log(require('child_process').execSync('rm -rf notes'))\"",
        "node -e \"console.log('a'); process.exit(1)\"",
        "node -e \"console.log('a')\nrequire('fs').unlinkSync('x')\"",
        "node -e \"console.log([require('fs').rmSync('x')])\"",
        "node -e \"console.log('a'), require('fs').rmSync('x')\"",
    ],
)
def test_node_other_code_asks(command: str) -> None:
    assert checks(command) == ["inline-code"]


@pytest.mark.parametrize(
    "sql",
    [
        ".tables",
        ".schema t",
        "\\dt",
        "\\d+ t",
        "select count(*) from t",
        "SELECT COUNT(*) FROM t",
        "select max(a), lower(b) from t",
        "SELECT Upper(x) FROM t",
        "show tables",
    ],
)
def test_sql_reads_and_listings_pass_without_asking(sql: str) -> None:
    assert checks("sqlite3 app.db " + shlex.quote(sql)) == []
    assert checks("psql -c " + shlex.quote(sql)) == []


@pytest.mark.parametrize(
    "sql",
    [
        "select load_file('x')",
        "select * from t into outfile 'x'",
        "delete from t",
        ".shell ls",
        "\\! ls",
        "select pg_sleep(1)",
        "SELECT SLEEP(1)",
    ],
)
def test_sql_writes_escapes_and_other_functions_ask(sql: str) -> None:
    assert checks("sqlite3 app.db " + shlex.quote(sql)) == ["inline-code"]
    assert checks("psql -c " + shlex.quote(sql)) == ["inline-code"]
