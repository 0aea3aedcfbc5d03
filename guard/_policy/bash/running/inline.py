"""Inline code: the few forms proven harmless, and the best-effort scan for the guard itself.

Inline interpreter code (``python -c``, awk programs, sed scripts, SQL given to a database
client; ``node -e`` is ``javascript``'s) asks unless it is one of the tiny forms below.
These checks only ever *allow*: Python is parsed with :mod:`ast` and must consist of imports
and ``print`` of plain values; awk, sed and SQL must match a small literal grammar. Nothing here
decides that code is safe by looking for bad words. :data:`GUARD_CODE` is the one scan:
it turns an ask into a block when code visibly reaches for the guard package (a miss
still asks).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

__all__ = [
    "GUARD_CODE",
    "awk_allowed",
    "python_allowed",
    "sed_allowed",
    "sql_allowed",
]

GUARD_CODE = re.compile(
    r"\bimport\s+(?:[\w.]+(?:\s+as\s+\w+)?\s*,\s*)*guard\b|\bfrom\s+guard\b"
    r"|['\"]guard(?:\.[\w.]*)?['\"]|\bguard\._|pi-guard|-\w*m\s*guard\b"
)
"""Inline code that visibly names the guard package or CLI (block; best effort only)."""


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PY_SAFE_DUNDERS = frozenset({"__version__", "__file__", "__name__", "__doc__"})


def _py_value(node: ast.AST) -> bool:
    """A plain value: constants, names, attribute and index access, operators. No calls."""
    if isinstance(node, ast.Constant | ast.Name):
        return not (isinstance(node, ast.Name) and node.id.startswith("__"))
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("__") and node.attr not in _PY_SAFE_DUNDERS:
            return False
        return _py_value(node.value)
    if isinstance(node, ast.Subscript):
        return _py_value(node.value) and _py_value(node.slice)
    if isinstance(node, ast.Slice):
        return all(p is None or _py_value(p) for p in (node.lower, node.upper, node.step))
    if isinstance(node, ast.BinOp):
        return _py_value(node.left) and _py_value(node.right)
    if isinstance(node, ast.UnaryOp):
        return _py_value(node.operand)
    if isinstance(node, ast.BoolOp):
        return all(_py_value(v) for v in node.values)
    if isinstance(node, ast.Compare):
        return _py_value(node.left) and all(_py_value(c) for c in node.comparators)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return all(_py_value(e) for e in node.elts)
    if isinstance(node, ast.JoinedStr):
        return all(_py_value(v) for v in node.values)
    if isinstance(node, ast.FormattedValue):
        return _py_value(node.value) and (node.format_spec is None or _py_value(node.format_spec))
    return False


def _py_import_ok(module: str, names: Sequence[ast.alias]) -> bool:
    """An import that runs no command-line entry point and does not rebind ``print``."""
    parts = module.split(".")
    if parts[0] in _PY_NO_IMPORT or "__main__" in parts:
        return False
    return all(
        a.name != "*" and (a.asname or a.name).split(".")[0] != "print" and "__main__" not in a.name
        for a in names
    )


def _py_statement(node: ast.stmt) -> bool:
    if isinstance(node, ast.Import):
        return all(_py_import_ok(a.name, [a]) for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and _py_import_ok(node.module or "", node.names)
    if not isinstance(node, ast.Expr):
        return False
    call = node.value
    if not isinstance(call, ast.Call):
        return _py_value(call)
    if not (isinstance(call.func, ast.Name) and call.func.id == "print"):
        return False
    return all(_py_value(a) for a in call.args) and all(
        k.arg is not None and _py_value(k.value) for k in call.keywords
    )


_PY_NO_IMPORT = frozenset({"guard", "antigravity", "this", "idlelib", "__hello__", "__phello__"})


def python_allowed(code: str) -> bool:
    """Python code of imports and ``print(...)`` of plain values only (parsed, not scanned)."""
    if len(code) > 2000:
        return False
    try:
        tree = ast.parse(code, mode="exec")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return bool(tree.body) and all(_py_statement(s) for s in tree.body)


# -- awk ---------------------------------------------------------------------------------------
_AWK_TOKEN = re.compile(
    r"""\s+|(?P<str>"(?:[^"\\\n]|\\.)*")|(?P<num>\d+(?:\.\d+)?)|(?P<word>[A-Za-z_]\w*)"""
    r"""|(?P<op>==|!=|<=|>=|&&|\|\||!~|\+\+|--|\+=|-=|\*=|/=|[{}();,$!~<=+\-*%?:])|(?P<slash>/)"""
)
# Every awk word that is not a plain user variable, and the few of them allowed here.
_AWK_RESERVED = _set("""
    BEGIN END BEGINFILE ENDFILE print printf getline next nextfile exit function func return
    if else while for do break continue delete in system close fflush length substr index
    split sub gsub gensub match sprintf sin cos atan2 exp log sqrt int rand srand tolower
    toupper strftime systime mktime and or xor lshift rshift compl asort asorti patsplit
    isarray typeof strtonum bindtextdomain dcgettext dcngettext
    """)
_AWK_ALLOWED_WORDS = _set("""
    BEGIN END print printf if else length substr index tolower toupper int sprintf
    NR NF FNR FS OFS RS ORS FILENAME
    """)


_AWK_REGEX_AFTER = frozenset({"", "{", "}", ";", "(", ",", "~", "!~", "&&", "||", "!"})
_AWK_REGEX_BODY = re.compile(r"(?:[^/\\\n]|\\.)*/")


def awk_allowed(program: str) -> bool:
    """An awk program in a tiny grammar: patterns, ``print``/``printf`` to stdout, fields.

    No output redirection (``>`` is refused outright; ``>=`` is fine), no pipes, no
    ``getline``/``system``/``close``, no ``ENVIRON``/``ARGV``/``PROCINFO``, no ``@``.
    """
    if len(program) > 500:
        return False
    pos = 0
    previous = ""
    while pos < len(program):
        found = _AWK_TOKEN.match(program, pos)
        if found is None:
            return False
        pos = found.end()
        kind = found.lastgroup
        text = found.group(0)
        if kind is None:
            continue
        special = text in _AWK_RESERVED or text[0].isupper()
        if kind == "word" and special and text not in _AWK_ALLOWED_WORDS:
            return False
        if kind == "slash" and previous in _AWK_REGEX_AFTER:
            end = _AWK_REGEX_BODY.match(program, pos)
            if end is None:
                return False
            pos = end.end()
            text = "regex"
        previous = text
    return True


# -- sed ---------------------------------------------------------------------------------------
_SED_SIMPLE = set("pdDnNgGhHxlPzF=")
_SED_S_FLAGS = set("gpiIM0123456789")


def _sed_delimited(script: str, i: int, parts: int) -> int:
    """Index after ``parts`` delimited parts starting at the delimiter ``script[i]``."""
    if i >= len(script) or script[i] in "\\\n":
        return -1
    delim = script[i]
    i += 1
    for _ in range(parts):
        while i < len(script) and script[i] != delim:
            if script[i] == "\\":
                i += 1
            elif script[i] == "\n" and delim != "\n":
                return -1
            i += 1
        if i >= len(script):
            return -1
        i += 1
    return i


def _sed_address(script: str, i: int) -> int:
    if i < len(script) and script[i] == "$":
        return i + 1
    if i < len(script) and script[i].isdigit():
        while i < len(script) and (script[i].isdigit() or script[i] == "~"):
            i += 1
        return i
    if i < len(script) and script[i] in "/\\":
        if script[i] == "\\":
            i += 1
        i = _sed_delimited(script, i, 1)
        while 0 <= i < len(script) and script[i] in "IM":
            i += 1
        return i
    return i


def sed_allowed(script: str) -> bool:
    """A sed script of printing, deleting, substituting and the like, never ``e``/``w``/``r``.

    Parsed command by command; anything not understood makes it ask.
    """
    i = 0
    n = len(script)
    while i < n:
        ch = script[i]
        if ch in " \t\n;}":
            i += 1
            continue
        i = _sed_address(script, i)
        if 0 <= i < n and script[i] == ",":
            i = _sed_address(script, i + 1)
            if 0 <= i < n and script[i] in "+~":
                i += 1
                while i < n and script[i].isdigit():
                    i += 1
        if i < 0 or i >= n:
            return False
        while i < n and script[i] in " !":
            i += 1
        if i >= n:
            return False
        command = script[i]
        i += 1
        if command == "{" or command in _SED_SIMPLE:
            continue
        if command in "qQ":
            while i < n and (script[i].isdigit() or script[i] == " "):
                i += 1
            continue
        if command == "#":
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        if command in ":btT":
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if command in "aic":
            end = script.find("\n", i)
            i = n if end < 0 else end
            continue
        if command == "y":
            i = _sed_delimited(script, i, 2)
            if i < 0:
                return False
            continue
        if command == "s":
            i = _sed_delimited(script, i, 2)
            if i < 0:
                return False
            while i < n and script[i] not in ";\n}":
                if script[i] not in _SED_S_FLAGS and script[i] != " ":
                    return False
                i += 1
            continue
        return False
    return True


# -- SQL ---------------------------------------------------------------------------------------
_SQL_FUNCTIONS = _set("""
    count sum min max avg lower upper length coalesce round abs now version date datetime
    current_date current_timestamp typeof
    """)
_SQL_READ = re.compile(r"(?is)\s*(?:select|show|describe|desc|explain)\b[^;\\]*;?\s*")
_SQL_CALL = re.compile(r"(\w+)\s*\(")
_SQL_WRITE_WORDS = re.compile(r"(?i)\b(?:into|outfile|dumpfile)\b")
_SQL_META = re.compile(
    r"\s*(?:\.(?:tables|schema|indexes|databases|dbinfo|headers\s+on|mode\s+\w+)(?:\s+[\w.%]+)?"
    r"|\\(?:d[tnuvfis]*\+?|l\+?|conninfo)(?:\s+[\w.*]+)?)\s*"
)


def sql_allowed(text: str) -> bool:
    """One reading statement (``SELECT``/``SHOW``/``EXPLAIN`` …) or a listing meta-command.

    Function calls are limited to a few aggregates; ``SELECT … INTO OUTFILE`` is refused,
    and so is any client escape (psql's ``\\!``, sqlite's ``.shell``), which do not fit.
    """
    if _SQL_META.fullmatch(text):
        return True
    if not _SQL_READ.fullmatch(text) or _SQL_WRITE_WORDS.search(text):
        return False
    return all(m.group(1).lower() in _SQL_FUNCTIONS for m in _SQL_CALL.finditer(text))
