"""Inline code glued to its flag (``perl -e'…'``, ``php -r'…'``) is checked like spaced code.

perl, ruby, php and lua accept the code in the same word as the flag; the guard let
``perl -e'system("rm -rf ~")'`` through without asking before it read that form.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.walker import analyze


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    ("command", "language", "code"),
    [
        ("perl -e'system(\"rm -rf ~\")'", "perl", 'system("rm -rf ~")'),
        ("perl -E'unlink 1'", "perl", "unlink 1"),
        ("perl -le'unlink 1'", "perl", "unlink 1"),
        ("ruby -e'File.delete(1)'", "ruby", "File.delete(1)"),
        ("php -r'unlink(1);'", "php", "unlink(1);"),
        ("php -B'unlink(1);'", "php", "unlink(1);"),
        ("php -R'unlink(1);'", "php", "unlink(1);"),
        ("php -E'unlink(1);'", "php", "unlink(1);"),
        ("lua -e'os.remove(1)'", "lua", "os.remove(1)"),
    ],
)
def test_glued_inline_code_is_checked(command: str, language: str, code: str) -> None:
    assert findings(command) == [("inline-code", f"inline {language} code: {code}")]


def test_glued_code_in_a_bundle_is_checked_after_the_next_word() -> None:
    assert findings("perl -ne'unlink' f") == [
        ("inline-code", "inline perl code: f"),
        ("inline-code", "inline perl code: unlink"),
    ]


def test_glued_code_quoted_strings_are_kept_for_path_rules() -> None:
    script = analyze("perl -e'unlink \"/etc/passwd\"'", cwd="/w", home="/h")
    assert [c.code_strings for c in script.commands] == [("/etc/passwd",)]


@pytest.mark.parametrize(
    "command",
    [
        "perl -w x.pl",
        "perl -MPOSIX x.pl",
        "perl -pe",
        "ruby -w x.rb",
        "php -n x.php",
        "php -d x.php",
        "lua -i x.lua",
        "lua -l x.lua",
        "node -pe '1+1'",
        "perl --e'x'",
        "perl yes.pl",
        "ruby yes.rb",
        "php r.php",
        "lua e.lua",
    ],
)
def test_options_without_glued_code_add_nothing(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    "command",
    [
        "perl -e'system(\"rm -rf ~\")'",
        "ruby -e'FileUtils.rm_rf(Dir.home)'",
        "php -r'system(\"rm -rf ~\");'",
        "lua -e'os.execute(\"rm -rf ~\")'",
    ],
)
def test_glued_destructive_code_asks(bash: Callable[[str], Verdict], command: str) -> None:
    verdict = bash(command)
    assert verdict.verdict == "confirm"
    assert "builtin.inline-code" in verdict.rule_ids


@pytest.mark.parametrize(
    "command",
    ["perl -I lib -e'unlink 1'", "perl -w -I lib -E'unlink 1'", "ruby -I lib -e'unlink 1'"],
)
def test_glued_code_after_an_option_value_is_still_checked(command: str) -> None:
    language = command.split()[0]
    assert ("inline-code", f"inline {language} code: unlink 1") in findings(command)
