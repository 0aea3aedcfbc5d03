"""git: what it runs, which of its words name paths, and its irregular forms.

* **Runs.** ``-c``/``--config-env``/``--exec-path``/``--upload-pack``/``--receive-pack``
  before the subcommand, ``git config`` that writes, ``difftool -x``, ``grep -O``,
  ``rebase -x``/``--exec``, ``clone -u``/``-c``, ``ext::`` URLs, ``bisect run``,
  ``submodule foreach``; ``apply``/``am`` write files named inside the patch. Each asks (a
  ``git-config``, ``opaque-write`` or ``inline-code`` finding); a command git runs is walked.
* **Paths.** A work-tree subcommand (``clean``, ``reset``, ``checkout``, ``restore``,
  ``stash``, ``rm``, ``switch``) changes the paths it names, or the whole work tree;
  ``clone``, ``mv`` and ``worktree add`` write their directories; any other subcommand reads
  what it names.
* **Irregular forms.** ``checkout -- FILE`` names paths after ``--``; the words of ``stash``
  (``stash drop``), ``reset --hard HEAD`` and ``switch`` are commits, branches and stashes,
  never paths: the work tree (or only the stash) is what changes; ``reset PATHS`` without
  ``--hard`` changes the index entries of those paths.
* **Subcommand.** ``-C``, ``-c``, ``--git-dir`` … take a value before the subcommand.

What git reads from the machine (config keys that name programs, hooks) is the settings'
knowledge (``settings/surroundings``, ``settings/worktree_hooks``); the variables that steer
it (``GIT_CONFIG_*``, ``GIT_SSH`` …) are the shell model's (``model.SENSITIVE_VARIABLES``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.irregular import Touches, Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.parsing.syntax import SyntaxWalker
from guard._policy.bash.programs.card import Card, per_subcommand, words

__all__ = ["CARD"]


_SAFE_CONFIG = re.compile(
    r"(?i)(?:color\.[\w.-]+|advice\.\w+|user\.(?:name|email)|init\.defaultbranch|pull\.rebase"
    r"|core\.(?:quotepath|autocrlf|safecrlf)|commit\.gpgsign|tag\.gpgsign|protocol\.version"
    r"|merge\.conflictstyle|log\.\w+|safe\.directory|push\.autosetupremote)=.*"
)
_CONFIG_READ = words(
    "--get --get-all --get-regexp --get-urlmatch --list -l --show-origin --show-scope "
    "--get-color --get-colorbool --name-only -z --null"
)
# Long options that name a program git runs; git also takes any unambiguous abbreviation.
_RUN_LONG = ("--exec", "--upload-pack", "--receive-pack")

_READ = Use(read=True, write=False)
_CHANGED = Use(read=False, write=True, target=True)
_WORKTREE = frozenset(["clean", "reset", "checkout", "restore", "stash", "rm", "switch"])
_NAMES_NO_PATHS = frozenset(["stash", "reset", "switch"])
_STASH_TOUCHES_TREE = frozenset(["push", "save", "pop", "apply", "branch", "-p", "--patch"])
_RESET_TREE = frozenset(["--hard", "--merge", "--keep"])


# -- what it runs -----------------------------------------------------------------------------


def _runs(w: SyntaxWalker, command: Command) -> None:
    args = command.args
    i = 0
    while i < len(args):
        value = args[i].value
        if value in ("-c",) and i + 1 < len(args):
            setting = args[i + 1]
            if setting.value is None or not _SAFE_CONFIG.fullmatch(setting.value):
                w.finding(
                    "git-config", "git -c sets configuration that can run programs: " + setting.raw
                )
            i += 2
            continue
        if value is None:
            break
        if value.startswith(("--config-env", "--exec-path=", "--upload-pack", "--receive-pack")):
            w.finding("git-config", "git option that runs or chooses programs: " + value)
        if value in ("-C", "--git-dir", "--work-tree", "--namespace"):
            i += 2
            continue
        if not value.startswith("-"):
            break
        i += 1
    rest = args[i:]
    sub = rest[0].value if rest else None
    tail = rest[1:]
    if sub == "config":
        values = [t.value for t in tail]
        positional = [v for v in values if v is not None and not v.startswith("-")]
        reading = any(v in _CONFIG_READ for v in values) or len(positional) <= 1
        if not reading or None in values:
            w.finding("git-config", "git config changes configuration that can run programs")
    elif sub in ("difftool", "grep", "archive", "instaweb", "send-email", "hook", "p4", "svn"):
        risky = [
            t.value
            for t in tail
            if t.value is None
            or t.value.startswith(("-x", "--extcmd", "-O", "--open-files-in-pager", "--exec"))
            or t.value.startswith(("--httpd", "--smtp-server", "--browser"))
            or sub in ("hook", "instaweb")
        ]
        if risky:
            w.finding("git-config", f"git {sub} runs a program: {risky[0]}")
    elif sub in ("apply", "am") and not any(
        t.value in ("--check", "--stat", "--numstat", "--summary") for t in tail
    ):
        w.finding("opaque-write", f"git {sub} writes files named inside the patch")
    elif sub == "submodule" and any(t.value == "foreach" for t in tail):
        w.finding("inline-code", "git submodule foreach runs a command in every submodule")
        for word in tail:
            if word.value and " " in word.value:
                w.nested(word.value, "git submodule foreach")
    elif sub in ("rebase", "bisect", "clone", "fetch", "pull", "push", "ls-remote"):
        for j, word in enumerate(tail):
            text = word.value or ""
            program = _run_option(sub, text)
            if program is not None:
                w.finding("git-config", f"git {sub} {text} runs a program")
                if not program and j + 1 < len(tail):
                    program = tail[j + 1].value or ""
                if program:
                    w.nested(program, f"git {sub} {text}")
            elif sub == "clone" and (value_word := _clone_config(tail, j)) is not None:
                if value_word.value is None or not _SAFE_CONFIG.fullmatch(value_word.value):
                    w.finding(
                        "git-config",
                        "git clone -c sets configuration that can run programs: " + value_word.raw,
                    )
            elif text.startswith("ext::") or (sub == "bisect" and text == "run"):
                w.finding("git-config", f"git {sub} {text} runs a program")
                if text == "run":
                    w.run(
                        tail[j + 1 :], via=(*command.via, "git bisect run"), producers=[], texts=[]
                    )


def _run_option(sub: str, text: str) -> str | None:
    """The command a word of ``git SUB`` makes git run, or None when it runs nothing.

    Covers ``-x``/``--exec``, ``--upload-pack``, ``--receive-pack`` and clone's ``-u``, spelled
    out, abbreviated, ``=``-joined or glued into a cluster of short options (``-ixCMD``).
    "" means the command is the next word.
    """
    name, equals, value = text.partition("=")
    if len(name) > 2 and any(option.startswith(name) for option in _RUN_LONG):
        return value if equals else ""
    letter = {"rebase": "x", "clone": "u"}.get(sub)
    if letter and text.startswith("-") and not text.startswith("--") and letter in text[1:]:
        return text[text.index(letter, 1) + 1 :]
    return "" if text == "-x" else None


def _clone_config(tail: Sequence[Word], j: int) -> Word | None:
    """The setting of ``git clone -c``/``--config`` at ``tail[j]``, or None."""
    text = tail[j].value or ""
    if text in ("-c", "--config"):
        return tail[j + 1] if j + 1 < len(tail) else Word(None, "")
    if text.startswith("--config="):
        return Word(text.split("=", 1)[1], tail[j].raw)
    if text.startswith("-c") and len(text) > 2:
        return Word(text[2:], tail[j].raw)
    return None


# -- which words name paths -------------------------------------------------------------------


def _paths(
    command: Command, flags: Sequence[Word], values: Sequence[Word], positionals: Sequence[Word]
) -> Touches:
    """A work-tree subcommand changes the paths it names (or the whole tree); others read."""
    sub = positionals[0].value if positionals else None
    rest = positionals[1:]
    written = _writes(sub, rest)
    if written is not None:  # what else it names is read, as for any other subcommand
        named = {id(word) for word, _ in written}
        return [*written, *((w, _READ) for w in (*rest, *values) if id(w) not in named)]
    if sub not in _WORKTREE:
        return [(word, _READ) for word in (*rest, *values)]
    args = command.args
    dashdash = [i for i, w in enumerate(args) if w.value == "--"]
    explicit = list(args[dashdash[0] + 1 :]) if dashdash else list(rest)
    if not dashdash and sub in _NAMES_NO_PATHS:
        # git-stash(1), git-reset(1) --hard, git-switch(1): their words are subcommands,
        # commits and stashes, never paths; the work tree (or only the stash) is what changes.
        whole = sub != "stash" or (rest[0].value if rest else "push") in _STASH_TOUCHES_TREE
        if sub == "reset" and not any(f.value in _RESET_TREE for f in flags):
            return [(word, _CHANGED) for word in explicit]  # git reset PATHS: the index
        return [(Word.literal(command.cwd), _CHANGED)] if whole else []
    changed = Use(read=True, write=True, target=True)
    if not explicit:
        return [(Word.literal(command.cwd), _CHANGED)]
    return [(word, changed) for word in explicit]


def _writes(sub: str | None, rest: Sequence[Word]) -> Touches | None:
    """The paths ``git clone``, ``git mv`` and ``git worktree add`` write (git-clone(1): the
    directory, by default the repository's name; git-mv(1): sources and destination;
    git-worktree(1) ``add <path>``), or ``None`` for another subcommand."""
    changed = Use(read=True, write=True, target=True, recursive=True)
    if sub == "clone" and rest:
        if len(rest) >= 2:
            return [(rest[1], changed)]
        url = rest[0].value
        if url is None:
            return [(rest[0], changed)]  # unknown until it runs: asks
        name = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
        name = name[: -len(".git")] if name.endswith(".git") else name
        return [(Word(name or ".", rest[0].raw), changed)]
    if sub == "mv":
        return [(word, changed) for word in rest]
    if sub == "worktree" and rest and rest[0].value == "add" and len(rest) > 1:
        return [(rest[1], changed)]
    return None


CARD = Card(
    names=words("git"),
    paths=Shape(
        short_values="Cc", long_values=words("--git-dir --work-tree --namespace"), reader=_paths
    ),
    runs=_runs,
    global_options=words(
        "-C -c --git-dir --work-tree --namespace --config-env --exec-path --super-prefix"
    ),
    long_options=words("--template --config"),
    abbreviates=True,
    subcommand_options=per_subcommand(
        {
            "reset": "--hard --merge --keep",
            "clean": "--force",
            "push": "--force --force-with-lease --force-if-includes --mirror --delete --prune",
            "branch": "--delete --force --move --copy",
            "checkout": "--force --discard-changes",
            "switch": "--force --discard-changes",
            "restore": "--worktree",
            "gc": "--prune --aggressive",
            "worktree": "--force",
            "update-ref": "--stdin",
            "reflog": "--expire --expire-unreachable --all",
            "stash": "",
        }
    ),
    subcommands=words("""
        add am annotate apply archive bisect blame branch bundle cat-file check-ignore checkout
        checkout-index cherry cherry-pick clean clone commit commit-tree config count-objects
        describe diff diff-files diff-index diff-tree difftool fast-export fast-import fetch
        filter-branch for-each-ref format-patch fsck gc grep hash-object help init instaweb log
        ls-files ls-remote ls-tree merge merge-base mergetool mv notes prune pull push range-diff
        read-tree rebase reflog remote repack replace request-pull reset restore rev-list
        rev-parse revert rm send-email shortlog show show-ref sparse-checkout stash status
        submodule switch symbolic-ref tag update-index update-ref upload-pack receive-pack
        var verify-commit whatchanged worktree write-tree
        """),
)
"""git's card."""
