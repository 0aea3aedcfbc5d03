"""Rules compiled for matching: bash command shapes, path globs and tool names."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

from guard._policy.bash.model import Command, Word
from guard._policy.bash.programs import abbreviates, card_for, global_options_of
from guard._policy.matching.globs import PathMatcher, compile_globs
from guard._policy.matching.paths import Mention
from guard._policy.settings.models import LayerName, Rule
from guard._policy.settings.surroundings import CREDENTIAL_RULES

__all__ = [
    "GLOBAL_VALUE_OPTIONS",
    "CompiledRule",
    "compile_rule",
    "first_subcommand_words",
    "leading_positionals",
]


# Options taking a value that may come before a program's subcommand (``git -C dir reset``):
# each program's card says them (``bash/programs``).
GLOBAL_VALUE_OPTIONS: dict[str, frozenset[str]] = global_options_of()

_VERDICT_RANK = {"allow": 0, "confirm": 1, "block": 2}


@lru_cache(maxsize=4096)
def _alternatives(spec: str) -> tuple[frozenset[str], tuple[str, ...]]:
    """``a|b|c*`` as (literal alternatives, glob alternatives); compiled once per spec."""
    alternatives = [p for p in spec.split("|") if p]
    literal = frozenset(a for a in alternatives if not any(ch in a for ch in "*?["))
    return literal, tuple(a for a in alternatives if a not in literal)


def first_subcommand_words(rule: Rule) -> frozenset[str] | None:
    """The literal words a rule's subcommand starts with; None if any (no subcommand, globs)."""
    if not rule.subcommand:
        return None
    literal, globs = _alternatives(rule.subcommand[0])
    return None if globs else literal


def _word_matches(word: Word, spec: str) -> bool:
    value = word.value
    if value is None:
        return True  # only known at runtime: could be anything (fail closed)
    return _text_matches(value, spec)


def _text_matches(value: str, spec: str) -> bool:
    literal, globs = _alternatives(spec)
    return value in literal or any(fnmatchcase(value, g) for g in globs)


def _operand_matches(word: Word, specs: Sequence[str]) -> bool:
    """For an exception: the word is known and matches, and so does each side of a
    ``src:dst`` (a git refspec ``me/fix:main`` pushes to ``main``)."""
    value = word.value
    if value is None or word.glob:
        return False  # only known at runtime (a value, a glob's expansion): never relaxed
    parts = [value]
    if ":" in value and "://" not in value:
        parts += value.lstrip("+").split(":")
    return all(any(_text_matches(part, spec) for spec in specs) for part in parts)


def _every_operand_matches(command: Command, program: str, rule: Rule) -> bool:
    """An exception's ``args``: every operand after its subcommand (each positional word, an
    option's value too) matches one of them, and there is at least one."""
    positionals, _ = leading_positionals(command, program)
    operands = positionals[len(rule.subcommand) :]
    return bool(operands) and all(_operand_matches(w, rule.args) for w in operands)


@lru_cache(maxsize=4096)
def _flag_forms(spec: str) -> tuple[tuple[str, ...], str, tuple[str, ...]]:
    """(exact long/single-dash names, bundled short letters, globs) of a flag spec."""
    literal, globs = _alternatives(spec)
    short = "".join(n[1] for n in literal if len(n) == 2 and n[0] == "-" and n[1] != "-")
    names = tuple(n for n in literal if not (len(n) == 2 and n[0] == "-" and n[1] != "-"))
    return names, short, globs


def _flag_present(args: Sequence[Word], spec: str, abbreviated: bool = False) -> bool:
    """Whether a flag of ``spec`` is among ``args``; ``abbreviated``: a long one also
    abbreviated (``--forc`` for ``--force``), as the program reads it."""
    names, short, globs = _flag_forms(spec)
    for word in args:
        value = word.value
        if value is None:
            return True  # only known at runtime: could be this flag (fail closed)
        if value == "--":
            break
        if value[:1] != "-" or value == "-":
            continue
        if value[1:2] != "-" and short and any(ch in short for ch in value[1:]):
            return True
        for name in names:
            if value == name or value.startswith(name + "="):
                return True
            if abbreviated and abbreviates(value, name):
                return True
        if globs:
            head = value.split("=", 1)[0]
            if any(fnmatchcase(head, g) for g in globs):
                return True
    return False


def _static_flag_present(args: Sequence[Word], spec: str) -> bool:
    return _flag_present([w for w in args if w.value is not None], spec)


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A validated rule with its globs compiled, and the layer it came from."""

    rule: Rule
    layer: LayerName
    paths: PathMatcher | None
    exclude: PathMatcher | None
    target_paths: PathMatcher | None
    arg_regex: re.Pattern[str] | None

    @property
    def id(self) -> str:
        return self.rule.id

    @property
    def rank(self) -> int:
        return _VERDICT_RANK[self.rule.verdict]

    def tool_matches(self, tool_name: str) -> bool:
        return any(fnmatchcase(tool_name, pattern) for pattern in self.rule.tools)

    def applies_to_tool(self, tool_name: str) -> bool:
        return not self.rule.tools or self.tool_matches(tool_name)

    def program_matches(self, program: str) -> bool:
        return any(fnmatchcase(program, pattern) for pattern in self.rule.program)

    # -- path rules -------------------------------------------------------------------------
    def path_hit(self, path: str, *, read: bool, write: bool, recursive: bool) -> bool:
        if self.paths is None:
            return False
        access = self.rule.access
        if not ((read and "read" in access) or (write and "write" in access)):
            return False
        if self.exclude is not None and self.exclude.match(path):
            return False
        if self.paths.match(path):
            return True
        # Deleting, moving or copying a directory that holds a blocked path (the guard
        # home) is as bad as touching the path itself; reading one recursively (grep -r,
        # tar, cp -r of the home) reads the credentials in it.
        if not recursive:
            return False
        if self.paths.protects_beneath(path):
            return self.rule.verdict == "block" or (read and self.rule.id in CREDENTIAL_RULES)
        # A blocked glob's path beneath it is read too: grep over /proc/self reads environ.
        reads = read and "read" in access
        return reads and self.rule.verdict == "block" and self.paths.holds_beneath(path)

    def pattern_hit(self, mention: Mention, pattern: str) -> bool:
        """Whether a glob could name a path this rule covers.

        Against block rules always; against the others when the glob names a hidden path
        (``.e*v``, ``.git/hook?``) or is spelled at a protected name (``*.pem``,
        ``id_rsa*``). Other globs are checked on what they expand to (bash), or not at
        all (pi's search tools): see docs/policy.md, "Bash analysis".
        """
        if self.paths is None:
            return False
        access = self.rule.access
        if not ((mention.read and "read" in access) or (mention.write and "write" in access)):
            return False
        hidden = any(segment.startswith(".") for segment in pattern.split("/"))
        if self.rule.verdict == "block" or hidden:
            return self.paths.could_match(pattern, recursive=mention.recursive)
        return self.paths.could_match(pattern, recursive=mention.recursive, aimed=True)

    def mention_hits(self, mentions: Sequence[Mention], resolved: Mapping[str, str]) -> list[str]:
        """Paths among ``mentions`` this path rule covers (symlink-resolved forms too)."""
        hits: list[str] = []
        for mention in mentions:
            if mention.pattern is not None and self.pattern_hit(mention, mention.pattern):
                hits.append(mention.path or mention.pattern)
                continue
            if mention.path is None:
                continue
            forms = [mention.path]
            real = resolved.get(mention.path)
            if real is not None and real != mention.path:
                forms.append(real)
            for form in forms:
                if self.path_hit(
                    form, read=mention.read, write=mention.write, recursive=mention.recursive
                ):
                    hits.append(mention.path)
                    break
        return hits

    # -- command shapes ------------------------------------------------------------------
    def shape_matches(
        self,
        command: Command,
        mentions: Sequence[Mention],
        *,
        exception: bool = False,
        program_checked: bool = False,
    ) -> bool:
        """Whether ``command`` has this rule's shape (program, subcommand, flags, args …).

        For an exception (``allow``) rule every target must fall under ``target_paths``;
        for a restricting rule one is enough.
        """
        program = command.program
        rule = self.rule
        if program is None or not (program_checked or self.program_matches(program)):
            return False
        args = command.args
        if rule.subcommand and not _subcommand_matches(command, program, rule.subcommand):
            return False
        # A rule's own long flags match their abbreviations where the program takes them
        # (the card says so); never for an exception, which only relaxes.
        card = None if exception else card_for(program)
        short = card is not None and card.abbreviates
        if rule.flags and not any(_flag_present(args, flag, short) for flag in rule.flags):
            return False
        if rule.all_flags and not all(_flag_present(args, f, short) for f in rule.all_flags):
            return False
        if rule.unless_flags and any(_static_flag_present(args, f) for f in rule.unless_flags):
            return False
        if rule.args and not (
            _every_operand_matches(command, program, rule)
            if exception
            else any(_word_matches(w, p) for w in args for p in rule.args)
        ):
            return False
        if self.arg_regex is not None and not self._regex_hit(command):
            return False
        if self.target_paths is not None:
            targets = [m.path for m in mentions if m.target]
            if exception:
                if not targets or any(t is None or not self.target_paths.match(t) for t in targets):
                    return False
            elif not any(t is not None and self.target_paths.match(t) for t in targets):
                return False
        return True

    def _regex_hit(self, command: Command) -> bool:
        regex = self.arg_regex
        if regex is None:
            return False
        texts = [w.value for w in command.args if w.value is not None]
        texts.extend(command.stdin_texts)
        for producer in command.producers:
            texts.extend(w.value for w in producer.args if w.value is not None)
            texts.extend(producer.stdin_texts)
        return any(regex.search(text) for text in texts)


def leading_positionals(command: Command, program: str) -> tuple[tuple[Word, ...], bool]:
    """Positional words after the program's global options; cached on the command."""
    if command.leading is not None:
        return command.leading
    args = command.args
    value_options = GLOBAL_VALUE_OPTIONS.get(program, frozenset())
    positionals: list[Word] = []
    ambiguous = False
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        if value is None or not value.startswith("-") or value == "-":
            positionals.append(word)
        elif value == "--":
            positionals.extend(args[i + 1 :])
            break
        elif not positionals:
            if value in value_options:
                i += 1
            elif "=" not in value and not (len(value) > 2 and value[:2] in value_options):
                ambiguous = True  # an unknown option: it might take the next word as value
        i += 1
    command.leading = (tuple(positionals), ambiguous)
    return command.leading


def _subcommand_matches(command: Command, program: str, subcommand: Sequence[str]) -> bool:
    positionals, ambiguous = leading_positionals(command, program)
    for start in (0, 1) if ambiguous else (0,):
        window = positionals[start : start + len(subcommand)]
        if len(window) == len(subcommand) and all(
            _word_matches(w, p) for w, p in zip(window, subcommand, strict=True)
        ):
            return True
    return False


def compile_rule(
    rule: Rule,
    layer: LayerName,
    *,
    values: Mapping[str, str],
    home: str,
    anchor: str | None,
    case_sensitive: bool,
) -> CompiledRule:
    """Compile ``rule``'s globs and regex; raises :class:`GlobError` or ``re.error``."""

    def globs(patterns: Sequence[str]) -> PathMatcher | None:
        if not patterns:
            return None
        return compile_globs(
            patterns, values=values, home=home, anchor=anchor, case_sensitive=case_sensitive
        )

    return CompiledRule(
        rule=rule,
        layer=layer,
        paths=globs(rule.paths),
        exclude=globs(rule.exclude),
        target_paths=globs(rule.target_paths),
        arg_regex=re.compile(rule.arg_regex) if rule.arg_regex else None,
    )
