"""Inline JavaScript (``node -e``/``-p``): a small reader that accepts only what it understands.

``node -e CODE`` runs unasked when CODE reads, token by token, as one of a few forms, judged
like ``python -c "print(…)"``: ``console.log(…)`` of literals, arithmetic, arrays, small
objects and ``process.version``-like facts; ``require('./a/project/file')`` (the same as
``node a/project/file.js``, which runs unasked), with member access and calls with such
values on what it exports; ``require('a-package')`` of ``node_modules`` with member access
only. Everything else asks: any backslash (``\\u0072equire``), comments, computed member
access, ``eval``/``Function``/``import()``/``globalThis``, ``process.env``, a core module
(``fs``, ``child_process``, ``node:…``), a path with ``..`` or a hidden part (``.git``,
``.env``), member names that climb to ``Function`` (``constructor``, ``__proto__``) or into
the module system (``require``, ``module``, ``_load``). :func:`node_code` reads node's own
options the same way: only the few listed here; a preload (``-r``, ``--import``,
``--loader``), ``-i``, more than one code flag or arguments after the code ask.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["NODE_CORE", "NodeCode", "node_allowed", "node_code"]


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_MAX_CODE = 2000
_MAX_NESTING = 24
_MAX_SPECIFIER = 256

NODE_CORE = _set("""
    _http_agent _http_client _http_common _http_incoming _http_outgoing _http_server
    _stream_duplex _stream_passthrough _stream_readable _stream_transform _stream_wrap
    _stream_writable _tls_common _tls_wrap assert async_hooks buffer child_process cluster
    console constants crypto dgram diagnostics_channel dns domain events fs http http2 https
    inspector module net os path perf_hooks process punycode querystring readline repl sea
    sqlite stream string_decoder sys test test_runner timers tls trace_events tty url util v8
    vm wasi worker_threads zlib
    """)
"""node's core modules by their bare names (``require('fs')``): never a project's package.

node has added new core modules under ``node:`` only since v18, and a ``node:`` name asks
anyway; tests compare this set with the installed node's ``builtinModules``."""

_TOKEN = re.compile(
    r"(?P<space>[ \t\r\n]+)"
    r"|(?P<num>\d+(?:\.\d+)?)"
    r"|(?P<str>'[^'\\\n\r]*'|\"[^\"\\\n\r]*\")"
    r"|(?P<tpl>`[^`\\$]*`)"
    r"|(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)"
    r"|(?P<op>[-+*/%()\[\]{},.:;])",
    re.ASCII,
)
_CONSOLE = frozenset({"log", "info", "error", "warn", "debug"})
_PROCESS = frozenset({"version", "platform", "arch", "execPath"})
_CONSTANTS = frozenset({"true", "false", "null"})
# Member names that climb from any object to Function (``x.constructor.constructor(code)``),
# call something with another ``this`` or reach the module system and the process.
_MEMBER_ASKS = _set("""
    constructor prototype call apply bind caller callee arguments require module mainModule
    parent children process binding eval Function globalThis global
    """)
_RELATIVE = re.compile(r"\./(?:[\w@+-][\w.@+-]*/)*[\w@+-][\w.@+-]*", re.ASCII)
_PACKAGE = re.compile(r"(?:@[a-z0-9][\w.-]*/)?[a-z0-9][\w.-]*", re.ASCII)

Kind = Literal["value", "console", "project", "package"]


class _Refused(Exception):
    """The code is not one of the forms the reader understands (so it asks)."""


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    newline: bool  # a line break before it (where JavaScript may insert a semicolon)


def _tokens(code: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    newline = False
    while pos < len(code):
        found = _TOKEN.match(code, pos)
        if found is None:
            raise _Refused
        pos = found.end()
        kind = found.lastgroup or ""
        if kind == "space":
            newline = newline or "\n" in found.group(0) or "\r" in found.group(0)
            continue
        out.append(_Token(kind, found.group(0), newline))
        newline = False
    return out


def _require_kind(specifier: str) -> Kind:
    """``project`` for ``./a/file``, ``package`` for a ``node_modules`` package; else refused.

    Short enough that the command's path checks read it (its strings up to 512 characters).
    """
    if len(specifier) > _MAX_SPECIFIER:
        raise _Refused
    if _RELATIVE.fullmatch(specifier):
        parts = specifier.split("/")[1:]
        return "package" if "node_modules" in parts else "project"
    if _PACKAGE.fullmatch(specifier) is None or specifier in NODE_CORE:
        raise _Refused
    return "package"


class _Reader:
    """Recursive descent over the tokens; every method raises :class:`_Refused` or consumes."""

    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.depth = 0

    def peek(self, text: str | None = None) -> _Token | None:
        """The next token (``text``: only if it is that operator or word)."""
        token = self.tokens[self.pos] if self.pos < len(self.tokens) else None
        if text is not None and (token is None or token.text != text):
            return None
        return token

    def take(self, text: str | None = None, kind: str | None = None) -> _Token:
        """Consume the next token, which must be ``text`` / of ``kind`` when they are given."""
        token = self.peek(text)
        if token is None or (kind is not None and token.kind != kind):
            raise _Refused
        self.pos += 1
        return token

    def program(self, *, prints: bool) -> None:
        kinds: list[Kind] = [self.value()]
        while self.peek() is not None:
            token = self.peek(";")
            if token is not None:
                self.pos += 1
                if self.peek() is None:
                    break
            else:
                nxt = self.tokens[self.pos]
                # A line break ends a statement only before a word that cannot continue it.
                if not (nxt.newline and nxt.kind == "name" and nxt.text in ("console", "require")):
                    raise _Refused
            kinds.append(self.value())
        effects = kinds[:-1] if prints else kinds
        if any(kind == "value" for kind in effects):
            raise _Refused

    def value(self) -> Kind:
        kind = self.term()
        while self.peek("+") or self.peek("-"):
            self.pos += 1
            self.term()
            kind = "value"
        return kind

    def term(self) -> Kind:
        kind = self.unary()
        while self.peek("*") or self.peek("/") or self.peek("%"):
            self.pos += 1
            self.unary()
            kind = "value"
        return kind

    def unary(self) -> Kind:
        if self.peek("-") or self.peek("+"):
            self.pos += 1
            self.primary()
            return "value"
        return self.primary()

    def primary(self) -> Kind:
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise _Refused
        try:
            return self._primary()
        finally:
            self.depth -= 1

    def _primary(self) -> Kind:
        token = self.take()
        if token.kind in ("num", "str", "tpl") or token.text in _CONSTANTS:
            return "value"
        if token.text == "(":
            self.value()
            self.take(")")
            return "value"
        if token.text == "[":
            self.items("]")
            return "value"
        if token.text == "{":
            self.members()
            return "value"
        if token.text == "console":
            self.take(".")
            if self.take(kind="name").text not in _CONSOLE:
                raise _Refused
            self.take("(")
            self.items(")")
            return "console"
        if token.text == "process":
            self.take(".")
            name = self.take(kind="name").text
            if name == "versions":
                if self.peek("."):
                    self.pos += 1
                    self.take(kind="name")
            elif name not in _PROCESS:
                raise _Refused
            return "value"
        if token.text == "require":
            return self.required()
        raise _Refused

    def items(self, end: str) -> None:
        """Values separated by commas up to ``end`` (no holes, no trailing comma)."""
        if self.peek(end):
            self.pos += 1
            return
        self.value()
        while self.peek(","):
            self.pos += 1
            self.value()
        self.take(end)

    def members(self) -> None:
        """An object literal's ``key: value`` pairs (plain keys; no ``__proto__``)."""
        if self.peek("}"):
            self.pos += 1
            return
        while True:
            key = self.take()
            name = key.text.strip("'\"") if key.kind == "str" else key.text
            if key.kind not in ("name", "str") or name.startswith("_") or not name:
                raise _Refused
            self.take(":")
            self.value()
            if self.peek("}"):
                self.pos += 1
                return
            self.take(",")

    def required(self) -> Kind:
        """``require('<specifier>')`` and what follows: ``.name`` and (project only) calls."""
        self.take("(")
        specifier = self.take(kind="str").text[1:-1]
        self.take(")")
        kind = _require_kind(specifier)
        while True:
            if self.peek("."):
                self.pos += 1
                name = self.take(kind="name").text
                if name.startswith("_") or name in _MEMBER_ASKS:
                    raise _Refused
            elif self.peek("(") and kind == "project":
                self.pos += 1
                self.items(")")
            else:
                return kind


def node_allowed(code: str, *, prints: bool) -> bool:
    """Whether ``node -e CODE`` (``prints``: ``node -p CODE``) reads as one of the harmless
    forms (see the module's docstring); anything the reader does not understand is ``False``."""
    if len(code) > _MAX_CODE:
        return False
    try:
        tokens = _tokens(code)
        if not tokens:
            return False
        reader = _Reader(tokens)
        reader.program(prints=prints)
    except (_Refused, RecursionError):
        return False
    return True


@dataclass(frozen=True)
class NodeCode:
    """What ``node ARGS`` runs as inline code: the code (``None`` when it is only known at
    runtime), whether its value is printed (``-p``), and why its options ask (``None``: they
    do not)."""

    code: str | None
    prints: bool
    problem: str | None


_NODE_FLAGS = frozenset(
    {"--no-warnings", "--no-deprecation", "--enable-source-maps", "--trace-warnings"}
)
_INPUT_TYPES = frozenset({"--input-type=module", "--input-type=commonjs"})
_BUNDLE = re.compile(r"-[A-Za-z]*[ep][A-Za-z]*")
_EVAL = {"-e": False, "--eval": False, "-p": True, "--print": True, "-pe": True}


def node_code(args: Sequence[str | None]) -> NodeCode | None:
    """Read ``node ARGS`` for inline code (``None``: there is no ``-e``/``-p``, a script runs).

    node reads its options up to the script, before and after the code, and only the last
    code flag counts: so every other argument must be one of a few harmless flags.
    """
    codes: list[tuple[str | None, bool]] = []
    problem: str | None = None
    i = 0
    while i < len(args):
        value = args[i]
        head = (value or "").split("=", 1)[0]
        if value is not None and value in _EVAL:
            if i + 1 >= len(args):
                return None  # node refuses to start: "-e requires an argument"
            codes.append((args[i + 1], _EVAL[value]))
            i += 2
            continue
        if value is not None and _BUNDLE.fullmatch(value):  # node refuses -ep, -ie: ask
            codes.append((args[i + 1] if i + 1 < len(args) else None, False))
            problem = problem or "bundled flags: " + value
            i += 2
            continue
        if value is not None and head in ("--eval", "--print") and "=" in value:
            codes.append((value.split("=", 1)[1], head == "--print"))
        elif value is None:
            problem = problem or "an argument only known at runtime"
        elif not codes and problem is None and not value.startswith("-"):
            return None  # a script runs; what follows is its argv
        elif value not in _NODE_FLAGS and value not in _INPUT_TYPES:
            problem = problem or "node option or argument the analysis does not read: " + value
        i += 1
    if not codes:
        return None
    if len(codes) > 1:
        problem = "more than one -e/-p (node runs only the last)"
    code, prints = codes[-1]
    return NodeCode(code, prints, problem)
