"""Argv-aware secret spans in a shell command line: what text detectors cannot see.

A secret-scanning rule set works on text; many command-line secrets have no
recognisable shape and are only secrets because of *where* they stand: the
``-pPASS`` of ``mysql``, the ``-p PASS`` of ``sshpass``, the ``user:PASS`` of
``curl -u``. This module splits a command line into simple commands and words
(quote-aware: ``'…'``, ``"…"``, ``$'…'`` ANSI-C quoting, backslash escapes; an
unterminated quote runs to the end), finds the program of each simple command
(past ``NAME=value`` assignments and wrappers such as ``sudo`` or ``env``) and
returns the character spans of option values that are credentials.

It never raises on malformed input: a command it cannot make sense of yields
fewer spans, and the text detectors still run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["credential_spans"]

_SEPARATORS = frozenset(";&|()\n`")
_SPACE = frozenset(" \t\r\v\f")
_WORD_END = _SEPARATORS | _SPACE | frozenset("<>")


@dataclass(frozen=True, slots=True)
class _Word:
    start: int
    end: int
    text: str
    """The word with quotes removed and escapes resolved (approximately)."""


def _words(line: str) -> list[list[_Word]]:
    """Simple commands of ``line``, each a list of words with their spans."""
    commands: list[list[_Word]] = [[]]
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in _SPACE:
            i += 1
            continue
        if c in _SEPARATORS:
            if commands[-1]:
                commands.append([])
            i += 1
            continue
        if c in "<>":
            # A redirection ends the word; its target is a word of its own.
            i += 1
            continue
        start = i
        parts: list[str] = []
        while i < n and line[i] not in _WORD_END:
            c = line[i]
            if c == "\\" and i + 1 < n:
                parts.append(line[i + 1])
                i += 2
            elif c == "'":
                j = line.find("'", i + 1)
                j = n if j < 0 else j
                parts.append(line[i + 1 : j])
                i = j + 1
            elif c == "$" and i + 1 < n and line[i + 1] == "'":
                i += 2
                while i < n and line[i] != "'":
                    if line[i] == "\\" and i + 1 < n:
                        parts.append(line[i : i + 2])
                        i += 2
                    else:
                        parts.append(line[i])
                        i += 1
                i += 1
            elif c == '"':
                i += 1
                while i < n and line[i] != '"':
                    if line[i] == "\\" and i + 1 < n:
                        parts.append(line[i + 1])
                        i += 2
                    else:
                        parts.append(line[i])
                        i += 1
                i += 1
            else:
                parts.append(c)
                i += 1
        i = min(i, n)
        commands[-1].append(_Word(start, i, "".join(parts)))
    return [c for c in commands if c]


# Wrappers whose first non-option word is the real program.
_WRAPPERS = frozenset(
    {"sudo", "doas", "env", "nice", "nohup", "time", "exec", "command", "builtin", "stdbuf"}
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")

# program -> options whose *next word* (or attached value) is a secret.
# "attached" options take the value glued on (``-pPASS``); a bare ``-p`` of mysql prompts.
_SEPARATE: dict[str, frozenset[str]] = {
    "sshpass": frozenset({"-p"}),
    "docker": frozenset({"-p"}),
    "podman": frozenset({"-p"}),
    "nerdctl": frozenset({"-p"}),
    "buildah": frozenset({"-p"}),
    "skopeo": frozenset({"-p"}),
    "helm": frozenset({"-p"}),
    "redis-cli": frozenset({"-a"}),
    "ldapsearch": frozenset({"-w"}),
    "ldapadd": frozenset({"-w"}),
    "ldapmodify": frozenset({"-w"}),
    "ldapdelete": frozenset({"-w"}),
    "ldapwhoami": frozenset({"-w"}),
    "ldappasswd": frozenset({"-w", "-s"}),
    "openssl": frozenset({"-passin", "-passout", "-pass", "-k", "-password"}),
    "sqlcmd": frozenset({"-P"}),
    "bcp": frozenset({"-P"}),
    "zip": frozenset({"-P"}),
    "unzip": frozenset({"-P"}),
    "keytool": frozenset({"-storepass", "-keypass", "-srcstorepass", "-deststorepass"}),
}
_ATTACHED: dict[str, frozenset[str]] = {
    "mysql": frozenset({"-p"}),
    "mysqldump": frozenset({"-p"}),
    "mysqladmin": frozenset({"-p"}),
    "mysqlimport": frozenset({"-p"}),
    "mysqlshow": frozenset({"-p"}),
    "mysqlcheck": frozenset({"-p"}),
    "mysqlpump": frozenset({"-p"}),
    "mariadb": frozenset({"-p"}),
    "mariadb-dump": frozenset({"-p"}),
    "sshpass": frozenset({"-p"}),
    "redis-cli": frozenset({"-a"}),
    "7z": frozenset({"-p"}),
    "7za": frozenset({"-p"}),
    "unrar": frozenset({"-p"}),
    "rar": frozenset({"-p"}),
}
# program -> options whose value is ``user:password`` (the part after the first ':' is secret).
_USERPASS: dict[str, frozenset[str]] = {
    "curl": frozenset({"-u", "--user", "-U", "--proxy-user"}),
    "smbclient": frozenset({"-U", "--user"}),
    "rpcclient": frozenset({"-U", "--user"}),
    "smbmap": frozenset({"-p"}),
}


_AWS_SECRET_SETTING = re.compile(r"(?i)(?:secret|session_token|password)")
_LOGIN_ONLY = frozenset({"docker", "podman", "nerdctl", "buildah", "skopeo", "helm"})


def _program(words: list[_Word]) -> tuple[str, int]:
    """The program's basename and the index of its first argument."""
    i = 0
    while i < len(words):
        text = words[i].text
        if _ASSIGNMENT.match(text):
            i += 1
            continue
        name = text.rsplit("/", 1)[-1]
        if name in _WRAPPERS:
            i += 1
            # Skip the wrapper's options (and sudo -u USER and similar option values).
            while i < len(words) and words[i].text.startswith("-"):
                takes_value = words[i].text in {"-u", "-g", "-n", "-C", "-p", "-o", "-e", "-i"}
                i += 2 if takes_value and name in {"sudo", "doas", "nice", "stdbuf"} else 1
            continue
        return name, i + 1
    return "", len(words)


def _value_span(line: str, word: _Word, offset_in_text: int) -> tuple[int, int]:
    """The span of ``word`` from the source character that yields ``word.text[offset:]``.

    Quoted words are redacted whole past the option (an exact offset mapping through
    quotes is not worth it): the option name stays, everything after it goes.
    """
    raw = line[word.start : word.end]
    if raw == word.text:
        return word.start + offset_in_text, word.end
    prefix = word.text[:offset_in_text]
    if raw.startswith(prefix):
        return word.start + len(prefix), word.end
    return word.start, word.end


def credential_spans(line: str) -> list[tuple[int, int]]:
    """Character spans of ``line`` that hold credentials by their place on a command line."""
    spans: list[tuple[int, int]] = []
    for words in _words(line):
        program, first = _program(words)
        if not program:
            continue
        separate = _SEPARATE.get(program, frozenset())
        if program in _LOGIN_ONLY and not any(w.text == "login" for w in words[first:]):
            separate = frozenset()  # docker run -p 8080:80 is a port, docker login -p a password
        attached = _ATTACHED.get(program, frozenset())
        userpass = _USERPASS.get(program, frozenset())
        i = first
        while i < len(words):
            word = words[i]
            text = word.text
            nxt = words[i + 1] if i + 1 < len(words) else None
            if (
                program == "aws"
                and text == "set"
                and i >= 1
                and words[i - 1].text == "configure"
                and i + 2 < len(words)
                and _AWS_SECRET_SETTING.search(words[i + 1].text)
            ):
                # aws configure set aws_secret_access_key VALUE
                spans.append((words[i + 2].start, words[i + 2].end))
                i += 3
                continue
            if text in separate and nxt is not None:
                spans.append((nxt.start, nxt.end))
                i += 2
                continue
            if text in userpass and nxt is not None:
                colon = nxt.text.find(":") if program != "smbclient" else nxt.text.find("%")
                if colon >= 0 and colon + 1 < len(nxt.text):
                    spans.append(_value_span(line, nxt, colon + 1))
                i += 2
                continue
            for option in userpass:
                if option.startswith("--") and text.startswith(option + "="):
                    value = text[len(option) + 1 :]
                    colon = value.find(":")
                    if colon >= 0 and colon + 1 < len(value):
                        spans.append(_value_span(line, word, len(option) + 2 + colon))
                elif not option.startswith("--") and text.startswith(option) and text != option:
                    value = text[len(option) :]
                    colon = value.find(":")
                    if colon >= 0 and colon + 1 < len(value):
                        spans.append(_value_span(line, word, len(option) + 1 + colon))
            for option in attached | separate:
                if (
                    not option.startswith("--")
                    and len(option) == 2
                    and text.startswith(option)
                    and len(text) > 2
                ):
                    spans.append(_value_span(line, word, 2))
            i += 1
    return spans
