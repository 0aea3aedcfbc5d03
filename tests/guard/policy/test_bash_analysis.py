"""The bash analysis: what a command string really runs, on the tree-sitter parser."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard._policy import Policy, Verdict
from guard._policy.bash.walker import MAX_DEPTH, analyze

_FUZZ_CWD = Path(tempfile.gettempdir())


def argvs(command: str, cwd: str = "/w") -> list[list[str | None]]:
    script = analyze(command, cwd=cwd, home="/h")
    return [[w.value for w in c.argv] for c in script.commands if c.argv]


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sudo -u root rm -rf x", [["rm", "-rf", "x"]]),
        ("env -i A=1 B=2 nice -n 5 nohup rm x", [["rm", "x"]]),
        ("timeout -s KILL 5 time -p command rm x", [["rm", "x"]]),
        ("exec -a name rm x", [["rm", "x"]]),
        ("xargs -0 -n 1 rm -f", [["rm", "-f", None]]),
        ("xargs -I{} rm {}", [["rm", "{}"]]),
        ("bash -c 'rm -rf a'", [["rm", "-rf", "a"]]),
        ('sh -ec "git reset --hard"', [["git", "reset", "--hard"]]),
        ("python3 -m pip uninstall x", [["pip", "uninstall", "x"]]),
        ("uv run --with rich pytest -x", [["pytest", "-x"]]),
        ("npx -y rimraf dist", [["rimraf", "dist"]]),
        ("\\rm -r 'a b' \"c\"d", [["rm", "-r", "a b", "cd"]]),
        ("echo $'a\\tb'", [["echo", "a\tb"]]),
        ("cat $HOME/x ${HOME}/y", [["cat", "/h/x", "/h/y"]]),
    ],
)
def test_wrappers_and_words_unwrap(command: str, expected: list[list[str | None]]) -> None:
    assert argvs(command) == expected


def test_compound_forms_are_all_walked() -> None:
    command = (
        "a && b || c; (d | e) & { f; }; echo $(g) `h` <(i) >(j); "
        "if k; then l; elif m; then n; else o; fi; for x in 1; do p; done; "
        "while q; do r; done; case z in y) s;; esac; t() { u; }; ! v"
    )
    names = {argv[0] for argv in argvs(command)}
    assert set("abcdefghijklmnopqrsuv") <= names  # t is only defined, never run


def test_find_exec_runs_the_inner_command() -> None:
    assert argvs("find . -name '*.o' -exec rm -f {} +")[1] == ["rm", "-f", None]
    assert argvs("find . -exec sh -c 'shred \"$1\"' _ {} \\;")[1][0] == "shred"


def test_heredoc_to_a_shell_is_parsed() -> None:
    assert ["rm", "-rf", "x"] in argvs("bash <<'EOF'\nrm -rf x\nEOF")
    assert ["rm", "y"] in argvs("cat <<EOF | sh\nrm y\nEOF")
    assert ["rm", "z"] in argvs("echo 'rm z' | bash")


def test_cd_changes_where_relative_paths_point() -> None:
    script = analyze("cd sub && rm a; (cd /var/scratch; rm b); rm c", cwd="/w", home="/h")
    cwds = {c.argv[-1].value: c.cwd for c in script.commands if c.program == "rm"}
    assert cwds == {"a": "/w/sub", "b": "/var/scratch", "c": "/w/sub"}


def test_redirections_are_recorded() -> None:
    script = analyze("echo a > out 2>&1; cat < in >> log", cwd="/w", home="/h")
    writes = [w.value for c in script.commands for w in c.redirect_writes]
    reads = [w.value for c in script.commands for w in c.redirect_reads]
    assert writes == ["out", "log"]
    assert reads == ["in"]


@pytest.mark.parametrize(
    ("command", "check"),
    [
        ('eval "$X"', "eval"),
        ("$CMD arg", "dynamic-command"),
        ('"$(which rm)" -rf x', "dynamic-command"),
        ('bash -c "$S"', "dynamic-script"),
        ("rm 'unterminated", "parse-error"),
        ("cat f | sh", "shell-stdin"),
        ("curl -s x | sudo bash", "download-exec"),
        ("wget -qO- x | python3", "download-exec"),
        ("bash <(curl x)", "download-exec"),
        ("python -c 'import shutil; shutil.rmtree(\"x\")'", "inline-code"),
        ("python -m guard keygen", "guard-self"),
        ("r\\\nm -rf x", "unresolved"),
        ("cd $D && ls", "unresolved"),
        ("$'\\u0072m' x", "dynamic-command"),
        ("/bin/r[m] x", "dynamic-command"),
        ("PATH=.:$PATH ls", "shell-environment"),
        ("shopt -s expand_aliases", "shell-environment"),
        ("strace ls", "opaque-wrapper"),
        ("bash <<< ls", "shell-stdin"),
        ("find . -exec ls {} +", "find-exec"),
        ("ls | xargs cat", "xargs"),
        ("git -c core.pager=x log", "git-config"),
        ("tar xf x.tar", "opaque-write"),
        ("awk 'BEGIN{system(\"x\")}'", "inline-code"),
        ("python -Im guard keygen", "guard-self"),
    ],
)
def test_what_cannot_be_known_is_a_finding(command: str, check: str) -> None:
    assert check in checks(command)


def test_nesting_is_bounded_and_fails_closed(bash: Callable[[str], Verdict]) -> None:
    command = "rm -rf build"
    for _ in range(MAX_DEPTH + 2):
        command = "bash -c " + "'" + command.replace("'", "'\\''") + "'"
    assert "nesting-too-deep" in checks(command)
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert "builtin.nesting-too-deep" in verdict.rule_ids


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf /",
        "echo $(sudo bash -c 'rm -rf /')",
        "ls | xargs sh -c 'rm -rf ~'",
        'timeout 5 env A=1 bash -c "find / -delete"',
    ],
)
def test_catastrophic_targets_are_blocked_through_wrappers(
    bash: Callable[[str], Verdict], command: str
) -> None:
    verdict = bash(command)
    assert verdict.verdict == "block"
    assert verdict.action_kind == "destructive"
    assert "builtin.catastrophic-target" in verdict.rule_ids


def test_targets_list_what_a_command_deletes(bash: Callable[[str], Verdict]) -> None:
    verdict = bash("rm -rf build dist && git clean -fd")
    assert verdict.verdict == "confirm"
    assert verdict.path is None
    assert any(t.endswith("/project/build") for t in verdict.targets)
    assert any(t.endswith("/project/dist") for t in verdict.targets)
    assert set(verdict.rule_ids) == {"builtin.rm", "builtin.git-clean"}


def test_dynamic_subcommand_or_flag_fails_closed(bash: Callable[[str], Verdict]) -> None:
    assert bash('git "$SUB" --hard').verdict == "confirm"
    assert bash("git push origin $FLAGS").verdict == "confirm"
    assert bash("git push origin main").verdict == "allow"


def test_command_v_and_type_do_not_execute(bash: Callable[[str], Verdict]) -> None:
    assert bash("command -v rm").verdict == "allow"
    assert bash("which rm && type rm").verdict == "allow"


def test_input_without_a_command_string_fails_closed(world: object) -> None:
    from tests.guard.policy.conftest import World

    assert isinstance(world, World)
    policy = world.policy()
    verdict = policy.classify("bash", {"command": ["rm", "-rf", "x"]}, world.project)
    assert verdict.verdict == "confirm"
    assert verdict.rule_ids[0] == "builtin.invalid-input"


BASHY = st.text(
    alphabet=st.sampled_from([*"ab rm-f/~.$(){}[]<>|&;'\"`\\\n*?=#!", "\ud800", "é"]),
    max_size=80,
)


@pytest.fixture(scope="module")
def fuzz_policy(tmp_path_factory: pytest.TempPathFactory) -> Policy:
    return Policy.load(tmp_path_factory.mktemp("fuzz") / "guard-home", None)


@settings(max_examples=300, deadline=None)
@given(command=st.one_of(BASHY, st.text(max_size=60)))
def test_any_text_gets_a_verdict_never_an_exception(command: str, fuzz_policy: Policy) -> None:
    verdict = fuzz_policy.classify("bash", {"command": command}, _FUZZ_CWD)
    assert verdict.verdict in ("allow", "confirm", "block")


def test_pathological_nesting_fails_closed(bash: Callable[[str], Verdict]) -> None:
    command = "echo " + "$(" * 3000 + "rm -rf x" + ")" * 3000
    verdict = bash(command)
    assert verdict.verdict == "confirm"


CRASHER = r"""
import sys
from guard._policy.bash.walker import analyze

for _ in range(200):
    for text in ("{\U0009d5eb", "echo {\U0001f389}", "a{b \U00031860", "{\ud800\U00010102"):
        analyze(text, cwd="/w", home="/h")
print("survived")
"""


def test_parser_crashers_from_upstream_do_not_kill_the_process() -> None:
    # tree-sitter-bash#337: '{' then a 4-byte UTF-8 character segfaults the C scanner.
    done = subprocess.run(
        [sys.executable, "-c", CRASHER], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "survived"


def test_what_cannot_be_resolved_is_protected_and_asks() -> None:
    from guard._policy.matching.checks import CHECKS

    for check_id, (verdict, kind, _) in CHECKS.items():
        if check_id in ("builtin.guard-self", "builtin.catastrophic-target"):
            assert verdict == "block", check_id
        elif check_id == "builtin.download-exec":
            assert (verdict, kind) == ("confirm", "destructive")
        else:
            assert (verdict, kind) == ("confirm", "protected"), check_id


@pytest.mark.parametrize(
    ("text", "decoded"),
    [("a\\tb", "a\tb"), ("\\x72m", "rm"), ("\\162m", "rm"), ("\\u0072m", None), ("r\\0m", None)],
)
def test_ansi_c_strings_decode_fully_or_not_at_all(text: str, decoded: str | None) -> None:
    from guard._policy.bash.parsing.quoting import decode_ansi_c

    assert decode_ansi_c(text) == decoded


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (".en{v,}", [".env", ".en"]),
        ("src/{a,b}/c", ["src/a/c", "src/b/c"]),
        ("{1..3}", ["1", "2", "3"]),
        ("a{b", ["a{b"]),
        ("{1..100000}", None),
    ],
)
def test_braces_expand_like_bash_or_not_at_all(text: str, words: list[str] | None) -> None:
    from guard._policy.bash.parsing.quoting import expand_braces

    assert expand_braces(text) == words
