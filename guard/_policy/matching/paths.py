"""Which paths a simple command touches, and how: read, write, delete/overwrite, recursively.

Path rules match these mentions; the dialog shows the targets. Unknown programs get
their static arguments counted as read *and* write (fail closed); programs known to
only read, or not to touch files at all, are narrowed.
"""

from __future__ import annotations

import glob as globmod
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from guard._policy.bash.model import Command, Word
from guard._policy.bash.quoting import expand_braces

__all__ = ["Mention", "command_mentions", "has_flag", "split_args"]

_MAX_GLOB_RESULTS = 64

Normalizer = Callable[[str, str], "str | None"]


@dataclass(frozen=True, slots=True)
class Mention:
    """A path a command names: ``path`` normalized, ``raw`` as written."""

    path: str | None
    raw: str
    read: bool
    write: bool
    target: bool = False
    recursive: bool = False
    pattern: str | None = None
    """For a glob: the normalized pattern, checked against the rules as a pattern too."""


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NO_FILES = _set("""
    true false : test [ [[ export set unset exit return sleep date seq expr read
    wait kill jobs type which hash alias unalias shift local declare typeset readonly let pwd
    whoami id uname hostname env printenv history clear yes break continue getopts ulimit umask
    shopt bg fg disown eval trap nproc uptime ps pgrep pkill killall
""")
_READERS = _set("""
    echo printf cat less more head tail wc stat file ls du diff cmp md5sum sha1sum sha256sum
    sha512sum b2sum cksum bat jq yq xxd od hexdump strings base64 grep egrep fgrep rg ag ack cd
    pushd popd source . realpath readlink basename dirname uniq cut awk gawk column nl tac rev
    fold fmt paste join comm tree find fd fdfind locate pytest mypy ruff black flake8 pylint
    shellcheck eslint tsc node python python3 bash sh zsh make go cargo npm pnpm yarn npx git
    docker kubectl man info tldr sqlite3 psql mysql curl wget ssh scp tr xargs watch time
    timeout nice nohup sudo open xdg-open code
""")
_PRINTERS = _set("echo printf")
_DELETERS = _set("rm unlink shred srm rmdir trash trash-put rimraf truncate del")
_ALWAYS_RECURSIVE = _set("rimraf trash trash-put rsync rg ag ack")
_COPIERS = _set("cp install ln rsync scp ditto gcp")
# Options taking a value, per program: (short letters, long options).
_VALUE_OPTS: dict[str, tuple[str, frozenset[str]]] = {
    "truncate": ("sr", _set("--size --reference")),
    "mv": ("tS", _set("--target-directory --suffix")),
    "cp": ("tS", _set("--target-directory --suffix")),
    "ln": ("tS", _set("--target-directory --suffix")),
    "install": ("gmotS", _set("--group --mode --owner --target-directory --suffix")),
    "rsync": (
        "eBfT",
        _set("""
        --rsh --filter --exclude --include --temp-dir --exclude-from --include-from --files-from
        --backup-dir --suffix --chmod --log-file --partial-dir --compare-dest --copy-dest
        --link-dest
    """),
    ),
    "scp": ("cFiJloPS", frozenset()),
    "shred": ("nsu", _set("--iterations --size --random-source")),
    "mkdir": ("m", _set("--mode")),
    "touch": ("dtr", _set("--date --reference")),
    "sed": ("efl", _set("--expression --file --line-length")),
    "grep": (
        "efmABCdD",
        _set("""
        --regexp --file --max-count --context --after-context --before-context --include
        --exclude --exclude-dir
    """),
    ),
    "rg": (
        "efgtTmABCM",
        _set("""
        --regexp --file --glob --type --type-not --max-count --context --after-context
        --before-context --max-columns
    """),
    ),
    "tar": (
        "fCbTXIH",
        _set("""
        --file --directory --exclude --files-from --exclude-from --use-compress-program --format
    """),
    ),
    "zip": ("xibn", frozenset()),
    "git": ("Cc", _set("--git-dir --work-tree --namespace")),
}
_GIT_WORKTREE = _set("clean reset checkout restore stash rm switch")


def split_args(
    args: Sequence[Word], short_value: str = "", long_value: frozenset[str] = frozenset()
) -> tuple[list[Word], list[Word], list[Word]]:
    """(flags, option values, positionals); after ``--`` everything is positional."""
    flags: list[Word] = []
    values: list[Word] = []
    positionals: list[Word] = []
    i = 0
    only_positional = False
    while i < len(args):
        word = args[i]
        value = word.value
        if only_positional or value is None or value == "-" or not value.startswith("-"):
            positionals.append(word)
            i += 1
            continue
        if value == "--":
            only_positional = True
            i += 1
            continue
        flags.append(word)
        if value.startswith("--"):
            if "=" in value:
                values.append(Word(value.split("=", 1)[1], word.raw))
            elif value in long_value and i + 1 < len(args):
                values.append(args[i + 1])
                i += 1
            i += 1
            continue
        letters = value[1:]
        for j, ch in enumerate(letters):
            if ch in short_value:
                if j < len(letters) - 1:
                    values.append(Word(letters[j + 1 :], word.raw))
                elif i + 1 < len(args):
                    values.append(args[i + 1])
                    i += 1
                break
        i += 1
    return flags, values, positionals


def has_flag(flags: Sequence[Word], *names: str) -> bool:
    """Whether one of ``names`` (``-r`` may be bundled as ``-rf``; ``--x`` or ``--x=v``) is set."""
    for word in flags:
        value = word.value
        if value is None:
            continue
        for name in names:
            if len(name) == 2 and name[0] == "-" and name[1] != "-":
                if not value.startswith("--") and name[1] in value[1:]:
                    return True
            elif value == name or value.startswith(name + "="):
                return True
    return False


def _option_value(
    flags_and_values: Sequence[Word], args: Sequence[Word], *names: str
) -> list[Word]:
    """Values given to options ``names`` (``-o X``, ``-oX``, ``--output=X``, ``--output X``)."""
    out: list[Word] = []
    for i, word in enumerate(args):
        value = word.value
        if value is None:
            continue
        for name in names:
            if value == name and i + 1 < len(args):
                out.append(args[i + 1])
            elif name.startswith("--") and value.startswith(name + "="):
                out.append(Word(value.split("=", 1)[1], word.raw))
            elif (
                len(name) == 2
                and not name.startswith("--")
                and value.startswith(name)
                and (len(value) > 2 and not value.startswith("--"))
            ):
                out.append(Word(value[2:], word.raw))
    return out


def command_mentions(command: Command, normalize: Normalizer, home: str) -> list[Mention]:
    """Every path ``command`` names, with how it uses it."""
    out: list[Mention] = []

    def add(
        word: Word, *, read: bool, write: bool, target: bool = False, recursive: bool = False
    ) -> None:
        value = word.value
        if value is None:
            # Only known at runtime: recorded without a path, which asks (fail closed).
            out.append(Mention(None, word.raw, read, write, target, recursive))
            return
        if not value or value == "-" or "://" in value or "\x00" in value:
            return
        texts = [value]
        if word.brace:
            expanded = expand_braces(value)
            if expanded is None:
                out.append(Mention(None, word.raw, read, write, target, recursive))
                return
            texts = list(dict.fromkeys([*expanded, value]))
        for text in texts:
            if text.startswith(("~+", "~-")) or (text[:1] == "~" and text[1:2].isdigit()):
                out.append(Mention(None, word.raw, read, write, target, recursive))
                continue
            candidates = [text]
            if text.startswith("~") and not text.startswith("~/") and text != "~":
                candidates = [os.path.expanduser(text)]
            pattern: str | None = None
            if word.glob:
                pattern = normalize(candidates[0], command.cwd)
                candidates.extend(_expand_glob(candidates[0], command.cwd, home))
            for candidate in candidates:
                path = normalize(candidate, command.cwd)
                if path is not None:
                    shown = word.raw if candidate == value else candidate
                    out.append(
                        Mention(path, shown, read, write, target, recursive, pattern=pattern)
                    )
                    pattern = None

    for word in command.redirect_writes:
        if word.value in ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"):
            continue
        add(word, read=False, write=True, target=True)
    for word in (*command.redirect_reads, *command.named):
        add(word, read=True, write=False)
    for text in command.code_strings:
        add(Word.literal(text), read=True, write=True)
    program = command.program
    if program is None:
        for word in command.args:
            add(word, read=True, write=True)
        return out
    args = command.args
    short, long = _VALUE_OPTS.get(program, ("", frozenset()))
    flags, values, positionals = split_args(args, short, long)

    if program in _NO_FILES:
        return out
    if program in _PRINTERS:
        for word in args:
            if word.value is not None:
                add(word, read=True, write=False)
        return out
    if program in _DELETERS:
        recursive = program in _ALWAYS_RECURSIVE or has_flag(flags, "-r", "-R", "--recursive")
        for word in positionals:
            add(word, read=False, write=True, target=True, recursive=recursive)
        return out
    if program == "mv":
        for word in (*positionals, *_option_value(flags, args, "-t", "--target-directory")):
            add(word, read=True, write=True, target=True, recursive=True)
        return out
    if program in _COPIERS:
        recursive = program in _ALWAYS_RECURSIVE or has_flag(
            flags, "-r", "-R", "-a", "--recursive", "--archive"
        )
        target_dirs = _option_value(flags, args, "-t", "--target-directory")
        sources = positionals if target_dirs else positionals[:-1]
        dests = target_dirs or positionals[-1:]
        for word in sources:
            add(word, read=True, write=program in ("ln",), recursive=recursive)
        for word in dests:
            add(word, read=False, write=True, target=True, recursive=recursive)
        return out
    if program == "tee":
        for word in positionals:
            add(word, read=False, write=True, target=True)
        return out
    if program in ("touch", "mkdir"):
        for word in positionals:
            add(word, read=False, write=True)
        return out
    if program in ("chmod", "chown", "chgrp"):
        recursive = has_flag(flags, "-R", "--recursive")
        rest = positionals if has_flag(flags, "--reference") else positionals[1:]
        for word in rest:
            add(word, read=False, write=True, target=True, recursive=recursive)
        return out
    if program in ("sed", "perl") and has_flag(flags, "-i", "--in-place"):
        scripted = has_flag(flags, "-e", "--expression", "-f", "--file", "-E")
        files = positionals if scripted else positionals[1:]
        for word in files:
            add(word, read=True, write=True, target=True)
        return out
    if program == "dd":
        for word in args:
            value = word.value or ""
            if value.startswith("of="):
                add(Word(value[3:], word.raw), read=False, write=True, target=True)
            elif value.startswith("if="):
                add(Word(value[3:], word.raw), read=True, write=False)
        return out
    if program == "find":
        destructive = any(w.value == "-delete" for w in args) or any(
            w.value in ("-exec", "-execdir", "-ok", "-okdir") and _deletes(args[i + 1 : i + 2])
            for i, w in enumerate(args)
        )
        for word in args:
            head = word.value or ""
            if head.startswith(("-", "(", "!")) or head == ")":
                break
            add(word, read=True, write=destructive, target=destructive, recursive=destructive)
        return out
    if program in ("curl", "wget"):
        _downloads(command, program, args, flags, positionals, add)
        return out
    if program in ("tar", "zip"):
        old_style = program == "tar" and bool(positionals) and positionals[0] is args[0]
        first = (args[0].value or "") if args else ""
        creating = (
            program == "zip" or has_flag(flags, "-c", "--create") or (old_style and "c" in first)
        )
        if program == "zip":
            archives = positionals[:1]
        elif old_style and "f" in first:
            archives = positionals[1:2]
        else:
            archives = _option_value(flags, args, "-f", "--file")
        for word in archives:
            add(word, read=not creating, write=creating, target=creating)
        for word in _option_value(flags, args, "-C", "--directory"):
            add(word, read=creating, write=not creating, target=not creating, recursive=True)
        skip = 1 if program == "zip" else (1 + len(archives) if old_style else 0)
        members = [w for w in positionals[skip:] if w not in archives]
        for word in members:
            add(word, read=True, write=False, recursive=True)
        return out
    if program in ("grep", "egrep", "fgrep"):
        recursive = has_flag(flags, "-r", "-R", "--recursive", "--dereference-recursive")
        patterned = has_flag(flags, "-e", "--regexp", "-f", "--file")
        for word in positionals if patterned else positionals[1:]:
            add(word, read=True, write=False, recursive=recursive)
        for word in values:
            add(word, read=True, write=False)
        return out
    if program in ("rg", "ag", "ack"):
        patterned = has_flag(flags, "-e", "--regexp", "-f", "--file")
        for word in positionals if patterned else positionals[1:]:
            add(word, read=True, write=False, recursive=True)
        return out
    if program == "git":
        sub = positionals[0].value if positionals else None
        rest = positionals[1:]
        if sub in _GIT_WORKTREE:
            dashdash = [i for i, w in enumerate(args) if w.value == "--"]
            explicit = list(args[dashdash[0] + 1 :]) if dashdash else rest
            for word in explicit:
                add(word, read=True, write=True, target=True)
            if not explicit:
                add(Word.literal(command.cwd), read=False, write=True, target=True)
            return out
        for word in (*rest, *values):
            add(word, read=True, write=False)
        return out
    if program in ("docker", "podman", "nerdctl"):
        for word in _option_value(flags, args, "-v", "--volume", "--mount"):
            source: str | None = word.value
            if source is not None and "=" in source:
                fields = dict(f.split("=", 1) for f in source.split(",") if "=" in f)
                source = fields.get("source", fields.get("src", ""))
            elif source is not None:
                source = source.split(":", 1)[0]
            if source is None or source.startswith(("/", ".", "~")):
                add(Word(source, word.raw), read=True, write=True, target=True, recursive=True)
    reader = program in _READERS
    for word in (*positionals, *values):
        add(word, read=True, write=not reader)
    for word in positionals:
        value = word.value or ""
        key, sep, rest_value = value.partition("=")
        if sep and key.isidentifier():
            add(Word(rest_value, word.raw), read=True, write=not reader)
    return out


Add = Callable[..., None]
_CURL_VALUE_LETTERS = "odHXuAebcFTwxmKCrEYyzUQP"


def _bundled_values(args: Sequence[Word], letter: str, value_letters: str) -> list[Word]:
    """Values of the short option ``letter`` also inside bundles (``curl -so FILE``)."""
    out: list[Word] = []
    for i, word in enumerate(args):
        value = word.value
        if value is None or not value.startswith("-") or value.startswith("--"):
            continue
        for j, ch in enumerate(value[1:], start=1):
            if ch in value_letters:
                if ch == letter:
                    rest = value[j + 1 :]
                    if rest:
                        out.append(Word(rest, word.raw))
                    elif i + 1 < len(args):
                        out.append(args[i + 1])
                break
    return out


def _downloads(
    command: Command,
    program: str,
    args: Sequence[Word],
    flags: Sequence[Word],
    positionals: Sequence[Word],
    add: Add,
) -> None:
    """curl/wget: ``-o FILE``, ``--output-dir``/``-P DIR``, and names taken from URLs."""
    if program == "curl":
        outputs = _option_value(flags, args, "--output")
        outputs += _bundled_values(args, "o", _CURL_VALUE_LETTERS)
        dirs = _option_value(flags, args, "--output-dir")
        remote = has_flag(flags, "-O", "--remote-name", "--remote-name-all")
    else:
        outputs = _option_value(flags, args, "-O", "--output-document")
        dirs = _option_value(flags, args, "-P", "--directory-prefix")
        remote = not outputs
    for word in outputs:
        if dirs and word.value is not None and not word.value.startswith("/"):
            for base in dirs:
                joined = None if base.value is None else base.value + "/" + word.value
                add(Word(joined, word.raw), read=False, write=True, target=True)
        else:
            add(word, read=False, write=True, target=True)
    for base in dirs:
        add(base, read=False, write=True, target=True, recursive=True)
    for word in positionals:
        value = word.value or ""
        if "://" not in value:
            add(word, read=True, write=False)
            continue
        name = value.split("://", 1)[1].split("?", 1)[0].split("#", 1)[0]
        name = name.rsplit("/", 1)[-1] if "/" in name else ""
        if remote and name:
            for base in dirs or [Word.literal(".")]:
                if base.value is not None:
                    add(Word.literal(base.value + "/" + name), read=False, write=True, target=True)


def _deletes(words: Sequence[Word]) -> bool:
    """Whether the command starting at ``words`` (``find -exec …``) may delete files."""
    if not words:
        return False
    value = words[0].value
    return value is None or os.path.basename(value) in _DELETERS


def _expand_glob(pattern: str, cwd: str, home: str) -> list[str]:
    """What an unquoted glob expands to now (bounded); hidden files only if asked for."""
    if pattern == "~" or pattern.startswith("~/"):
        pattern = home + pattern[1:]
    try:
        found = globmod.iglob(pattern, root_dir=cwd if not pattern.startswith("/") else None)
        out: list[str] = []
        for item in found:
            out.append(item)
            if len(out) >= _MAX_GLOB_RESULTS:
                break
    except (OSError, ValueError):
        return []
    return out
