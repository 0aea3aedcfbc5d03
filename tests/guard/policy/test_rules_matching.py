"""Rule matching in ``guard._policy.matching.rules``: which command shapes and paths a compiled rule covers.

Programs, subcommands after global options, flags (bundled short flags, ``--name=value``,
globs), runtime-only words that must fail closed, ``args``, ``arg_regex``, ``target_paths``,
path and pattern hits, and the per-program tables of options that take a value.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from guard._policy.bash.model import Command, Word
from guard._policy.matching.paths import Mention
from guard._policy.matching.rules import (
    GLOBAL_VALUE_OPTIONS,
    CompiledRule,
    compile_rule,
    first_subcommand_words,
    leading_positionals,
)
from guard._policy.settings.models import Rule

HOME = "/home/u"
PROJECT = "/srv/project"
RUNTIME = Word(None, "$X")


def rule(**fields: Any) -> CompiledRule:
    fields.setdefault("id", "team.r")
    fields.setdefault("verdict", "confirm")
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()}
    return compile_rule(
        Rule(**fields),
        "project",
        values={},
        home=HOME,
        anchor=PROJECT,
        case_sensitive=True,
    )


def words(*items: str | None) -> tuple[Word, ...]:
    return tuple(RUNTIME if item is None else Word.literal(item) for item in items)


def cmd(*argv: str | None, **extra: Any) -> Command:
    return Command(words(*argv), PROJECT, **extra)


def target(path: str | None) -> Mention:
    return Mention(path, path or "$X", False, True, target=True)


def shape(compiled: CompiledRule, *argv: str | None, **kwargs: Any) -> bool:
    mentions = kwargs.pop("mentions", ())
    return compiled.shape_matches(cmd(*argv), mentions, **kwargs)


# -- programs, tools, ranks -------------------------------------------------------------------


def test_id_and_rank_follow_the_rule() -> None:
    assert rule(id="team.x", program=["rm"]).id == "team.x"
    assert rule(program=["rm"], verdict="confirm").rank == 1
    assert rule(program=["rm"], verdict="block").rank == 2
    allow = rule(program=["rm"], verdict="allow", relaxes=["builtin.rm"])
    assert allow.rank == 0


def test_program_matches_any_of_its_globs() -> None:
    compiled = rule(program=["rm", "python3*"])
    assert compiled.program_matches("rm")
    assert compiled.program_matches("python3.12")
    assert not compiled.program_matches("rmdir")
    assert not compiled.program_matches("python")


def test_tool_names_match_as_globs_and_no_tools_means_every_tool() -> None:
    scoped = rule(program=["rm"], tools=["bash", "shell-*"])
    assert scoped.tool_matches("bash")
    assert scoped.tool_matches("shell-zsh")
    assert not scoped.tool_matches("read")
    assert scoped.applies_to_tool("shell-zsh")
    assert not scoped.applies_to_tool("read")
    unscoped = rule(program=["rm"])
    assert not unscoped.tool_matches("bash")
    assert unscoped.applies_to_tool("bash")
    assert unscoped.applies_to_tool("anything")


def test_a_command_without_a_program_never_has_a_shape() -> None:
    assert not rule(program=["*"]).shape_matches(Command((), PROJECT), ())


def test_program_checked_skips_the_program_test() -> None:
    compiled = rule(program=["rm"])
    assert not shape(compiled, "ls", "x")
    assert shape(compiled, "ls", "x", program_checked=True)
    assert shape(compiled, "rm", "x")


# -- subcommands -------------------------------------------------------------------------------


def test_first_subcommand_words_are_the_literal_alternatives() -> None:
    assert first_subcommand_words(Rule(id="a", verdict="block", program=("git",))) is None
    literal = Rule(id="a", verdict="block", program=("git",), subcommand=("reset|restore", "x"))
    assert first_subcommand_words(literal) == frozenset({"reset", "restore"})
    empty_alternative = Rule(id="a", verdict="block", program=("git",), subcommand=("reset||",))
    assert first_subcommand_words(empty_alternative) == frozenset({"reset"})
    for glob in ("re*", "re?et", "[r]eset"):
        globbed = Rule(id="a", verdict="block", program=("git",), subcommand=(f"push|{glob}",))
        assert first_subcommand_words(globbed) is None


def test_subcommand_words_match_literally_or_as_globs_and_in_order() -> None:
    compiled = rule(program=["git"], subcommand=["stash", "drop|cl*"])
    assert shape(compiled, "git", "stash", "drop")
    assert shape(compiled, "git", "stash", "clear")
    assert not shape(compiled, "git", "stash", "list")
    assert not shape(compiled, "git", "stash")
    assert not shape(compiled, "git", "drop", "stash")
    assert not shape(compiled, "git", "list", "stash", "drop")


def test_a_runtime_subcommand_word_fails_closed() -> None:
    compiled = rule(program=["git"], subcommand=["reset"])
    assert shape(compiled, "git", None)
    assert not shape(compiled, "git", "status")


def test_subcommand_after_global_value_options() -> None:
    compiled = rule(program=["git"], subcommand=["reset"])
    assert not shape(compiled, "git", "-C", "reset", "status")  # -C's value is "reset"
    assert shape(compiled, "git", "-C", "repo", "reset")
    assert shape(compiled, "git", "-Crepo", "reset")
    assert shape(compiled, "git", "--git-dir=x", "reset")


def test_an_unknown_option_may_take_the_next_word_so_both_windows_are_tried() -> None:
    compiled = rule(program=["git"], subcommand=["reset"])
    assert shape(compiled, "git", "--paginate", "reset")
    assert shape(compiled, "git", "--weird", "value", "reset")
    assert not shape(compiled, "git", "--weird", "a", "b", "reset")
    assert not shape(compiled, "git", "status", "reset")


def test_a_two_word_window_needs_both_words_after_an_ambiguous_option() -> None:
    compiled = rule(program=["docker"], subcommand=["compose", "down"])
    assert shape(compiled, "docker", "--debugx", "v", "compose", "down")
    assert not shape(compiled, "docker", "--debugx", "v", "compose")


# -- leading positionals -----------------------------------------------------------------------


def values(command: Command, program: str) -> tuple[list[str | None], bool]:
    positionals, ambiguous = leading_positionals(command, program)
    return [w.value for w in positionals], ambiguous


def test_leading_positionals_skip_global_value_options() -> None:
    assert values(cmd("git", "-C", "dir", "reset", "--hard"), "git") == (["reset"], False)
    assert values(cmd("git", "-c", "a=b", "push"), "git") == (["push"], False)


def test_leading_positionals_keep_dash_and_runtime_words_and_everything_after_dashdash() -> None:
    assert values(cmd("git", "-", "x"), "git") == (["-", "x"], False)
    assert values(cmd("git", None, "x"), "git") == ([None, "x"], False)
    assert values(cmd("git", "--", "-C", "--x", "y"), "git") == (["-C", "--x", "y"], False)
    assert values(cmd("git", "a", "--", "b"), "git") == (["a", "b"], False)


def test_options_after_the_first_positional_are_not_ambiguous() -> None:
    assert values(cmd("git", "reset", "--hard", "-C", "x"), "git") == (["reset", "x"], False)


def test_an_unknown_leading_option_is_ambiguous_but_not_with_equals_or_an_attached_value() -> None:
    assert values(cmd("git", "--bare", "x"), "git") == (["x"], True)
    assert values(cmd("git", "--bare=1", "x"), "git") == (["x"], False)
    assert values(cmd("git", "-Cdir", "x"), "git") == (["x"], False)
    assert values(cmd("git", "-C"), "git") == ([], False)
    # a two-letter value option spelled alone is not "attached"
    assert values(cmd("git", "-q", "x"), "git") == (["x"], True)
    # unknown programs have no value options: everything is ambiguous
    assert values(cmd("tool", "-C", "x", "y"), "tool") == (["x", "y"], True)


def test_leading_positionals_are_cached_on_the_command() -> None:
    command = cmd("git", "-C", "d", "reset")
    first = leading_positionals(command, "git")
    assert command.leading == first
    command.leading = ((Word.literal("cached"),), True)
    assert leading_positionals(command, "git") == ((Word.literal("cached"),), True)


EXPECTED_VALUE_OPTIONS = {
    "git": "-C -c --git-dir --work-tree --namespace --config-env --exec-path --super-prefix",
    "docker": "-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey",
    "podman": "--connection -c --url --root --runroot --log-level",
    "kubectl": "-n --namespace --context --cluster --kubeconfig -s --server --user --token --as",
    "oc": "-n --namespace --context --cluster --kubeconfig -s --server --user --token --as",
    "helm": "-n --namespace --kube-context --kubeconfig",
    "npm": "--prefix -w --workspace -C",
    "pnpm": "-C --dir --filter -F",
    "yarn": "--cwd",
    "apt-get": "-o -t -c --option --target-release --config-file",
    "apt": "-o -t -c --option --target-release --config-file",
    "pip": "--python --log --cache-dir",
    "pip3": "--python --log --cache-dir",
    "aws": "--profile --region --output --endpoint-url",
    "gcloud": "--project --account --configuration --format",
    "pi-guard": "--home",
    "conda": "-n --name -p --prefix",
}


def test_the_value_option_tables_are_exactly_these() -> None:
    assert {k: sorted(v) for k, v in GLOBAL_VALUE_OPTIONS.items()} == {
        k: sorted(v.split()) for k, v in EXPECTED_VALUE_OPTIONS.items()
    }


@pytest.mark.parametrize(
    ("program", "option"),
    [(p, o) for p, text in EXPECTED_VALUE_OPTIONS.items() for o in text.split()],
)
def test_each_global_value_option_hides_its_value_from_the_subcommand(
    program: str, option: str
) -> None:
    compiled = rule(program=[program], subcommand=["delete"])
    assert values(cmd(program, option, "delete", "list"), program) == (["list"], False)
    assert not shape(compiled, program, option, "delete", "list")
    assert shape(compiled, program, option, "value", "delete")


# -- flags -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["-f"], True),
        (["-rf"], True),
        (["-fr"], True),
        (["-r", "-v"], False),
        (["--force"], True),
        (["--force=yes"], True),
        (["--forced"], False),
        (["--f"], True),  # rm takes a prefix of its long option (getopt_long)
        (["--rf"], False),
        (["force"], False),
        (["-"], False),
        (["--", "-f"], False),
        (["--", "--force"], False),
        (["x", "-f"], True),
        ([None], True),
        (["-r", None], True),
        (["--", None], False),
    ],
)
def test_flags_short_bundled_long_and_runtime(argv: list[str | None], expected: bool) -> None:
    compiled = rule(program=["rm"], flags=["-f|--force"])
    assert shape(compiled, "rm", *argv) is expected


def test_a_single_dash_long_name_matches_only_as_a_whole_word() -> None:
    compiled = rule(program=["find"], flags=["-delete"])
    assert shape(compiled, "find", ".", "-delete")
    assert shape(compiled, "find", ".", "-delete=1")
    assert not shape(compiled, "find", ".", "-d")
    assert not shape(compiled, "find", ".", "-e")


def test_a_two_dash_flag_is_never_read_as_bundled_short_letters() -> None:
    compiled = rule(program=["git"], flags=["-d"])
    assert not shape(compiled, "git", "--dry-run")
    assert shape(compiled, "git", "-xd")


def test_flag_globs_match_the_name_before_equals() -> None:
    compiled = rule(program=["git"], flags=["--force*"])
    assert shape(compiled, "git", "--force-with-lease")
    assert shape(compiled, "git", "--force-with-lease=main")
    assert shape(compiled, "git", "--force")
    assert not shape(compiled, "git", "--no-force")
    assert not shape(compiled, "git", "-x=--force")


def test_a_glob_only_flag_spec_has_no_short_letters() -> None:
    compiled = rule(program=["git"], flags=["-[f]"])
    assert shape(compiled, "git", "-f")
    assert not shape(compiled, "git", "-xf")


def test_flags_any_all_flags_all() -> None:
    any_of = rule(program=["git"], flags=["--hard", "--merge"])
    assert shape(any_of, "git", "--merge")
    assert not shape(any_of, "git", "--soft")
    all_of = rule(program=["git"], all_flags=["-d|--delete", "-f|--force"])
    assert shape(all_of, "git", "-df")
    assert shape(all_of, "git", "--delete", "--force")
    assert not shape(all_of, "git", "--delete")
    assert not shape(all_of, "git", "-f")
    assert shape(all_of, "git", "-d", None)


def test_unless_flags_exclude_only_when_the_flag_is_really_there() -> None:
    compiled = rule(program=["git"], subcommand=["clean"], unless_flags=["-n|--dry-run"])
    assert shape(compiled, "git", "clean", "-fd")
    assert not shape(compiled, "git", "clean", "-fdn")
    assert not shape(compiled, "git", "clean", "--dry-run")
    # a runtime word might be -n, but it might as well not be: the rule still matches
    assert shape(compiled, "git", "clean", None)
    assert shape(compiled, "git", "clean", None, "-f")
    assert not shape(compiled, "git", "clean", None, "-n")


# -- args and arg_regex ------------------------------------------------------------------------


def test_args_match_any_argument_literally_or_as_a_glob() -> None:
    compiled = rule(program=["chmod"], args=["777", "*+s"])
    assert shape(compiled, "chmod", "-R", "777", "x")
    assert shape(compiled, "chmod", "u+s", "x")
    assert not shape(compiled, "chmod", "755", "x")
    assert not shape(compiled, "chmod")
    assert shape(compiled, "chmod", None, "x")  # runtime: could be 777


def test_arg_regex_searches_arguments_stdin_and_producers() -> None:
    compiled = rule(program=["psql"], arg_regex=r"(?i)drop\s+table")
    assert compiled.arg_regex is not None
    assert shape(compiled, "psql", "-c", "DROP TABLE users")
    assert not shape(compiled, "psql", "-c", "select 1")
    assert not shape(compiled, "psql", None)
    assert compiled.shape_matches(cmd("psql", stdin_texts=["drop table x"]), ())
    producer = cmd("echo", "drop  table x")
    assert compiled.shape_matches(cmd("psql", producers=[producer]), ())
    fed = cmd("cat", stdin_texts=["DROP TABLE t"])
    assert compiled.shape_matches(cmd("psql", producers=[fed]), ())
    quiet = cmd("echo", None, "select 1", stdin_texts=["select 2"])
    assert not compiled.shape_matches(cmd("psql", "x", producers=[quiet]), ())


def test_an_empty_arg_regex_compiles_to_nothing() -> None:
    compiled = rule(program=["psql"], arg_regex="")
    assert compiled.arg_regex is None
    assert shape(compiled, "psql")
    assert not compiled._regex_hit(cmd("psql", "x"))


# -- target paths ------------------------------------------------------------------------------


def test_target_paths_one_target_is_enough_for_a_restricting_rule() -> None:
    compiled = rule(program=["rm"], target_paths=["vendor/**"])
    inside, outside = target(f"{PROJECT}/vendor/a"), target(f"{PROJECT}/src/a")
    assert shape(compiled, "rm", mentions=[outside, inside])
    assert not shape(compiled, "rm", mentions=[outside])
    assert not shape(compiled, "rm", mentions=[target(None)])
    assert not shape(compiled, "rm", mentions=[])
    read_only = Mention(f"{PROJECT}/vendor/a", "vendor/a", True, False)
    assert not shape(compiled, "rm", mentions=[read_only])


def test_target_paths_every_target_must_fall_under_them_for_an_exception() -> None:
    compiled = rule(
        program=["rm"], target_paths=["build/**"], verdict="allow", relaxes=["builtin.rm"]
    )
    inside, outside = target(f"{PROJECT}/build/a"), target(f"{PROJECT}/src/a")
    assert shape(compiled, "rm", mentions=[inside], exception=True)
    assert shape(compiled, "rm", mentions=[inside, target(f"{PROJECT}/build/b")], exception=True)
    assert not shape(compiled, "rm", mentions=[inside, outside], exception=True)
    assert not shape(compiled, "rm", mentions=[inside, target(None)], exception=True)
    assert not shape(compiled, "rm", mentions=[], exception=True)
    reader = Mention(f"{PROJECT}/src/a", "src/a", True, False)
    assert shape(compiled, "rm", mentions=[inside, reader], exception=True)


def test_compile_rule_leaves_absent_globs_unset() -> None:
    compiled = rule(program=["rm"])
    assert (compiled.paths, compiled.exclude, compiled.target_paths) == (None, None, None)
    assert compiled.layer == "project"
    with_paths = rule(paths=["secrets/**"], exclude=["secrets/ok"])
    assert with_paths.paths is not None and with_paths.exclude is not None


# -- path rules --------------------------------------------------------------------------------


def test_a_rule_without_paths_hits_nothing() -> None:
    compiled = rule(program=["rm"])
    assert not compiled.path_hit("/x", read=True, write=True, recursive=True)
    mention = Mention(None, "*", True, True, pattern="/x/*")
    assert not compiled.pattern_hit(mention, "/x/*")


@pytest.mark.parametrize(
    ("access", "read", "write", "expected"),
    [
        (["read"], True, False, True),
        (["read"], False, True, False),
        (["write"], False, True, True),
        (["write"], True, False, False),
        (["read", "write"], True, False, True),
        (["read", "write"], False, True, True),
        (["read", "write"], False, False, False),
    ],
)
def test_path_hit_respects_access(
    access: list[str], read: bool, write: bool, expected: bool
) -> None:
    compiled = rule(paths=["secrets/**"], access=access, verdict="block")
    path = f"{PROJECT}/secrets/key"
    assert compiled.path_hit(path, read=read, write=write, recursive=False) is expected
    mention = Mention(None, "s*", read, write, pattern=f"{PROJECT}/secrets/*")
    assert compiled.pattern_hit(mention, f"{PROJECT}/secrets/*") is expected


def test_path_hit_honours_exclude() -> None:
    compiled = rule(paths=["secrets/**"], exclude=["secrets/public*"])
    assert compiled.path_hit(f"{PROJECT}/secrets/key", read=True, write=False, recursive=False)
    assert not compiled.path_hit(
        f"{PROJECT}/secrets/public.pem", read=True, write=False, recursive=False
    )


def test_a_recursive_touch_of_a_parent_counts_only_for_block_rules() -> None:
    blocking = rule(paths=["/srv/guard"], verdict="block")
    asking = rule(paths=["/srv/guard"], verdict="confirm")
    assert blocking.path_hit("/srv", read=False, write=True, recursive=True)
    assert not blocking.path_hit("/srv", read=False, write=True, recursive=False)
    assert not asking.path_hit("/srv", read=False, write=True, recursive=True)
    assert blocking.path_hit("/srv/guard", read=False, write=True, recursive=False)
    assert not blocking.path_hit("/opt", read=False, write=True, recursive=True)


def test_pattern_hit_unaimed_for_block_rules_and_hidden_globs_aimed_otherwise() -> None:
    mention = Mention(None, "*", True, False, pattern=f"{PROJECT}/*")
    confirm = rule(paths=["secrets.txt"], verdict="confirm")
    block = rule(paths=["secrets.txt"], verdict="block")
    # "*" could expand to secrets.txt: a block rule takes that, others wait for the expansion
    assert block.pattern_hit(mention, f"{PROJECT}/*")
    assert not confirm.pattern_hit(mention, f"{PROJECT}/*")
    hidden = rule(paths=[".env"], verdict="confirm")
    dotted = Mention(None, ".e*", True, False, pattern=f"{PROJECT}/.e*")
    assert hidden.pattern_hit(dotted, f"{PROJECT}/.e*")
    assert not hidden.pattern_hit(mention, f"{PROJECT}/*")
    aimed = rule(paths=["*.pem"], verdict="confirm")
    pem = Mention(None, "*.pem", True, False, pattern=f"{PROJECT}/*.pem")
    assert aimed.pattern_hit(pem, f"{PROJECT}/*.pem")


def test_mention_hits_reports_patterns_paths_and_symlink_targets() -> None:
    compiled = rule(paths=["secrets/**"], verdict="block")
    key = f"{PROJECT}/secrets/key"
    link = f"{PROJECT}/link"
    glob_with_path = Mention(f"{PROJECT}/secrets/k*", "secrets/k*", True, False, pattern=key)
    glob_only = Mention(None, "secrets/*", True, False, pattern=f"{PROJECT}/secrets/*")
    plain = Mention(key, "secrets/key", True, False)
    linked = Mention(link, "link", True, False)
    other = Mention(f"{PROJECT}/src", "src", True, False)
    unnamed = Mention(None, "$X", True, False)
    hits = compiled.mention_hits(
        [glob_with_path, glob_only, plain, linked, other, unnamed], {link: key}
    )
    assert hits == [f"{PROJECT}/secrets/k*", f"{PROJECT}/secrets/*", key, link]


def test_mention_hits_reports_a_path_once_even_if_both_forms_hit() -> None:
    compiled = rule(paths=["secrets/**"])
    key = f"{PROJECT}/secrets/key"
    mention = Mention(key, "secrets/key", True, False)
    assert compiled.mention_hits([mention], {key: f"{PROJECT}/secrets/real"}) == [key]
    assert compiled.mention_hits([mention], {key: key}) == [key]
    outside = Mention(f"{PROJECT}/a", "a", True, False)
    assert compiled.mention_hits([outside], {f"{PROJECT}/a": f"{PROJECT}/a"}) == []


def test_a_pattern_that_misses_falls_back_to_its_path() -> None:
    compiled = rule(paths=["secrets/**"])
    mention = Mention(f"{PROJECT}/secrets/key", "x", True, False, pattern=f"{PROJECT}/src/*")
    assert compiled.mention_hits([mention], {}) == [f"{PROJECT}/secrets/key"]


# -- boundaries found by mutation testing ------------------------------------------------------


def test_a_lone_dash_is_stdin_not_an_option() -> None:
    any_option = rule(program=["cat"], flags=["-*"])
    assert not shape(any_option, "cat", "-")
    assert shape(any_option, "cat", "-n")
    dash = rule(program=["cat"], flags=["-"])
    assert not shape(dash, "cat", "-")


def test_a_flag_glob_sees_only_the_name_before_the_first_equals() -> None:
    compiled = rule(program=["git"], flags=["--forc[e]"])
    assert shape(compiled, "git", "--force=1")
    assert shape(compiled, "git", "--force=a=b")
    assert shape(compiled, "git", "--force=a b")
    assert not shape(compiled, "git", "--force-x=1")


def test_a_recursive_glob_reaches_protected_paths_beneath_it() -> None:
    block = rule(paths=["/srv/guard/home"], verdict="block")
    shallow = Mention(None, "/srv/g*", False, True, pattern="/srv/g*")
    deep = Mention(None, "/srv/g*", False, True, recursive=True, pattern="/srv/g*")
    assert not block.pattern_hit(shallow, "/srv/g*")
    assert block.pattern_hit(deep, "/srv/g*")
    assert block.mention_hits([deep], {}) == ["/srv/g*"]
    aimed = rule(paths=["/srv/keys/*"], verdict="confirm")
    shallow = Mention(None, "/srv/*", False, True, pattern="/srv/*")
    deep = Mention(None, "/srv/*", False, True, recursive=True, pattern="/srv/*")
    assert not aimed.pattern_hit(shallow, "/srv/*")
    assert aimed.pattern_hit(deep, "/srv/*")


def test_mention_hits_passes_write_and_recursive_through() -> None:
    writes = rule(paths=["secrets/**"], access=["write"])
    key = f"{PROJECT}/secrets/key"
    assert writes.mention_hits([Mention(key, "k", False, True)], {}) == [key]
    assert writes.mention_hits([Mention(key, "k", True, False)], {}) == []
    block = rule(paths=["/srv/guard"], verdict="block")
    parent = Mention("/srv", "/srv", False, True, recursive=True)
    assert block.mention_hits([parent], {}) == ["/srv"]
    assert block.mention_hits([Mention("/srv", "/srv", False, True)], {}) == []


def test_a_mention_without_a_path_does_not_hide_the_next_one() -> None:
    compiled = rule(paths=["secrets/**"])
    key = f"{PROJECT}/secrets/key"
    unnamed = Mention(None, "$X", True, False)
    assert compiled.mention_hits([unnamed, Mention(key, "k", True, False)], {}) == [key]


def test_a_value_option_after_an_unknown_option_still_takes_its_value() -> None:
    assert values(cmd("git", "--bare", "-C", "dir", "reset"), "git") == (["reset"], True)


def test_an_attached_value_of_three_characters_is_not_ambiguous() -> None:
    assert values(cmd("git", "-Cx", "reset"), "git") == (["reset"], False)


def test_compile_rule_uses_the_placeholders_home_anchor_and_case_it_is_given() -> None:
    compiled = compile_rule(
        Rule(id="team.r", verdict="block", paths=("${GUARD_HOME}", "~/.ssh", "src/*.KEY")),
        "user",
        values={"GUARD_HOME": "/srv/guard"},
        home="/home/other",
        anchor="/repo",
        case_sensitive=False,
    )
    assert compiled.layer == "user"
    assert compiled.paths is not None
    assert compiled.paths.match("/srv/guard/x")
    assert compiled.paths.match("/home/other/.ssh/id")
    assert compiled.paths.match("/repo/src/a.key")
    assert not compiled.paths.match(f"{PROJECT}/src/a.key")
    target = compile_rule(
        Rule(id="team.t", verdict="block", program=("rm",), target_paths=("${GUARD_HOME}",)),
        "user",
        values={"GUARD_HOME": "/srv/guard"},
        home="/home/other",
        anchor="/repo",
        case_sensitive=False,
    )
    assert target.target_paths is not None
    assert target.target_paths.match("/SRV/guard/x")


def test_the_rules_module_builds_its_tables_in_a_fresh_interpreter() -> None:
    code = (
        "from guard._policy.matching.rules import GLOBAL_VALUE_OPTIONS as t; "
        "print(' '.join(sorted(t['git'])))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == sorted(EXPECTED_VALUE_OPTIONS["git"].split())


def test_compile_rule_keeps_case_sensitive_globs_case_sensitive() -> None:
    compiled = rule(program=["rm"], target_paths=["vendor/**"])
    assert compiled.target_paths is not None
    assert compiled.target_paths.match(f"{PROJECT}/vendor/a")
    assert not compiled.target_paths.match(f"{PROJECT}/VENDOR/a")
    with_paths = rule(paths=["secrets/**"])
    assert with_paths.paths is not None
    assert not with_paths.paths.match(f"{PROJECT}/Secrets/a")
