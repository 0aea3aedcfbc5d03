"""The cards beside git's, attacked through several spellings: what each program destroys is
named and asked about, what it runs or writes unseen asks, reading stays quiet."""

from __future__ import annotations

import shlex
from collections.abc import Callable

import pytest

from guard._policy import Verdict
from guard._policy.bash.programs import CARDS, card_for, touched
from guard._policy.bash.programs.readers import READERS
from guard._policy.bash.walker import analyze

WRAPPERS: list[Callable[[str], str]] = [
    lambda c: c,
    lambda c: "command " + c,
    lambda c: "env " + c,
    lambda c: "nice " + c,
    lambda c: "bash -c " + shlex.quote(c),
    lambda c: "true && " + c,
    lambda c: f"({c})",
]

DESTRUCTIVE = [
    ("find . -delete", "builtin.find-delete"),
    ("find . -exec rm {} +", "builtin.find-exec"),
    ("find . -execdir /bin/rm -f {} ;", "builtin.find-exec"),
    ("sed -i s/a/b/ a.txt", "builtin.sed-in-place"),
    ("sed --in-place -e s/a/b/ a.txt", "builtin.sed-in-place"),
    ("gsed -i s/a/b/ a.txt", "builtin.sed-in-place"),
    ("rm -rf src", "builtin.rm"),
    ("/bin/rm -r -- a.txt", "builtin.rm"),
    ("unlink a.txt", "builtin.rm"),
    ("truncate -s 0 a.txt", "builtin.truncate"),
    ("shred -u a.txt", "builtin.shred"),
    ("trash src", "builtin.rm"),
    ("rsync -a --delete src/ dst/", "builtin.rsync-delete"),
    ("rsync -e 'sh -c id' a h:b", "builtin.inline-code"),
    ("scp -S ./evil a h:b", "builtin.inline-code"),
    ("tar xf x.tar", "builtin.opaque-write"),
    ("tar -C dst -xf x.tar", "builtin.opaque-write"),
    ("bsdtar -x -f x.tar", "builtin.opaque-write"),
    ("unzip x.zip", "builtin.opaque-write"),
    ("7z x a.7z", "builtin.opaque-write"),
    ("patch -p1 -i x.diff", "builtin.opaque-write"),
    ("zip -T x.zip a.txt", "builtin.inline-code"),
    ("wget -r https://h/", "builtin.opaque-write"),
    ("curl -J -O https://h/x", "builtin.opaque-write"),
    ("dd if=/dev/zero of=a.txt", "builtin.dd-output"),
    ("make --eval=x", "builtin.inline-code"),
    ("make SHELL=/bin/evil", "builtin.shell-environment"),
    ("gmake -f /dev/stdin", "builtin.shell-stdin"),
    ("awk -f /dev/stdin x", "builtin.shell-stdin"),
    ("gawk -v ENVIRON=x 'BEGIN{}'", "builtin.inline-code"),
    ("mawk -E x.awk", "builtin.inline-code"),
    ("awk 'BEGIN{system(\"rm -rf ~\")}'", "builtin.inline-code"),
    ("psql -c 'DROP TABLE x'", "builtin.sql-destructive"),
    ("sqlite3 db 'DELETE FROM t'", "builtin.sql-destructive"),
    ("duckdb -c 'COPY t TO 1'", "builtin.inline-code"),
    ("chmod -R 777 src", "builtin.chmod-recursive"),
]


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=range(len(WRAPPERS)))
@pytest.mark.parametrize(("command", "rule"), DESTRUCTIVE)
def test_each_card_asks_about_what_its_program_destroys_or_runs_however_wrapped(
    bash: Callable[[str], Verdict], wrapper: Callable[[str], str], command: str, rule: str
) -> None:
    text = wrapper(command)
    verdict = bash(text)
    assert verdict.verdict != "allow", text
    assert rule in verdict.rule_ids, (text, verdict.rule_ids)


@pytest.mark.parametrize(
    ("command", "written"),
    [
        ("find . -name x", []),
        ("find src -delete", ["src"]),
        ("find src -exec $X {} ;", ["src"]),
        ("sed s/a/b/ a.txt", ["s/a/b/", "a.txt"]),
        ("sed -i s/a/b/ a.txt", ["a.txt"]),
        ("sed -i -e s/a/b/ a.txt", ["a.txt"]),
        ("rm -rf a b", ["a", "b"]),
        ("shred -n 3 a.txt", ["a.txt"]),
        ("truncate -r ref a.txt", ["a.txt"]),
        ("mv a b dst", ["a", "b", "dst", "dst/a", "dst/b"]),
        ("cp -t dst a", ["dst"]),
        ("cp -r a dst", ["dst", "dst/a"]),
        ("ln -s target link", ["target", "link"]),
        ("install -m 755 a /usr/local/bin/a", ["/usr/local/bin/a"]),
        ("rsync -a src dst", ["dst"]),
        ("tar -c -f out.tar src", ["out.tar"]),
        ("tar cf out.tar src", ["out.tar"]),
        ("tar -xf in.tar -C dst", ["dst"]),
        ("zip out.zip a.txt", ["out.zip"]),
        ("curl -o out https://h/x", ["out"]),
        ("curl -O https://h/dir/name", ["./name"]),
        ("wget https://h/dir/name", ["./name"]),
        ("dd if=a of=b", ["b"]),
        ("make -C sub all", []),
        ("awk -f prog.awk a.txt", []),
        ("mawk 1 a.txt", ["1", "a.txt"]),
        ("sqlite3 db 'select 1'", []),
        ("grep -r -e x src", []),
        ("rg x src", []),
        ("tee a b", ["a", "b"]),
        ("touch -r ref a.txt", ["a.txt"]),
        ("mkdir -m 700 d", ["d"]),
        ("chmod 644 a.txt", ["a.txt"]),
        ("chown --reference=ref a.txt", ["a.txt"]),
    ],
)
def test_what_a_card_says_its_program_writes(command: str, written: list[str]) -> None:
    parsed = analyze(command, cwd="/w").commands[0]
    assert [w.value for w, use in touched(parsed) if use.write] == written, command


@pytest.mark.parametrize(
    "command",
    [
        "find . -name '*.py'",
        "sed -n 1,5p a.txt",
        "cp a.txt b.txt",
        "tar -tf x.tar",
        "unzip -l x.zip",
        "curl -s https://example.com",
        "make test",
        "patch --dry-run -p1 -i x.diff",
        "awk '{print}' a.txt",
        "mysql -e 'select 1'",
        "echo 'select 1' | sqlite3 db",
        "grep -r x src",
        "mkdir -p d",
    ],
)
def test_reading_asks_nothing(bash: Callable[[str], Verdict], command: str) -> None:
    assert bash(command).verdict == "allow", command


@pytest.mark.parametrize(
    ("program", "option"),
    sorted((name, option) for card in CARDS for name in card.names for option in card.code_options),
)
def test_every_option_a_card_says_carries_code_asks(program: str, option: str) -> None:
    for spelling in (f"{program} {option} x a", f"{program} {option}=x a"):
        checks = {f.check for f in analyze(spelling, cwd="/w").findings}
        # gdb runs a program too: as an opaque wrapper it asks before its card is asked.
        assert checks & {"inline-code", "opaque-wrapper"}, spelling


def test_a_card_without_a_shape_reads_every_word_as_written() -> None:
    card = card_for("gsed")
    assert card is not None and card.paths is None
    [parsed] = analyze("gsed s/a/b/ a.txt", cwd="/w").commands
    assert [(w.value, u.write) for w, u in touched(parsed)] == [("s/a/b/", True), ("a.txt", True)]


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=range(len(WRAPPERS)))
@pytest.mark.parametrize(
    "command",
    [
        "rm --no-preserve-root -rf /",
        "srm -r /etc",
        "shred -r ~",
        "trash ~",
        "rimraf /usr",
        "chmod -R 777 /",
        "chown -R me /etc",
        "find / -delete",
        "mv /usr x",
    ],
)
def test_a_card_that_says_catastrophic_blocks_a_recursive_change_of_the_system(
    bash: Callable[[str], Verdict], wrapper: Callable[[str], str], command: str
) -> None:
    text = wrapper(command)
    verdict = bash(text)
    assert verdict.verdict == "block", text
    assert "builtin.catastrophic-target" in verdict.rule_ids, text


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("ln -s /etc l && cat l/passwd", "builtin.link-then-use"),
        ("link a b && cat b", "builtin.link-then-use"),
        ("cp -s a b && cat b", "builtin.link-then-use"),
        ("cp --symbolic-link a b && cat b", "builtin.link-then-use"),
        ("echo x > s.sed && sed -f s.sed a", "builtin.inline-code"),
        ("echo x > s.awk && gawk -f s.awk a", "builtin.inline-code"),
        ("echo x > m && make -f m", "builtin.inline-code"),
    ],
)
def test_what_a_card_tells_the_built_in_checks(
    bash: Callable[[str], Verdict], command: str, rule: str
) -> None:
    assert rule in bash(command).rule_ids, command


@pytest.mark.parametrize(
    "command",
    ["cp a b && cat b", "touch s.sh && cat s.sh", "chmod +x a && ls", "rm -rf build"],
)
def test_no_card_fact_asks_where_nothing_is_at_stake(
    bash: Callable[[str], Verdict], command: str
) -> None:
    ids = bash(command).rule_ids
    assert not {"builtin.link-then-use", "builtin.catastrophic-target"} & set(ids), command


@pytest.mark.parametrize(
    "command",
    [
        "echo '1e rm -rf ~' > s.sed && gsed -f s.sed a",
        "printf 'BEGIN{system(\"id\")}' > s.awk && mawk -f s.awk",
        "echo x > s.awk && nawk -f s.awk a",
        "echo x > s.awk && busybox-awk -f s.awk a",
        "echo 'all:;rm -rf ~' > m && gmake -f m",
    ],
)
def test_a_script_written_then_run_by_another_name_of_the_program_asks(
    bash: Callable[[str], Verdict], command: str
) -> None:
    """gsed, mawk, nawk, busybox-awk and gmake run the files they read, as sed, awk and make
    do: a script written in the same call was once run without a question."""
    assert "builtin.inline-code" in bash(command).rule_ids, command


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=range(len(WRAPPERS)))
@pytest.mark.parametrize(
    "command",
    [
        "vim +'!rm -rf ~' a",
        "vi +:!id a",
        "view -c '!id' a",
        "nvim -l x.lua",
        "emacs --eval '(shell-command \"id\")'",
        "Rscript -e 'system(\"id\")'",
        "julia --eval='run(`id`)'",
        "pwsh -EncodedCommand AAAA",
        "tclsh -c 'exec id'",
        "less -o log a",
        "man -P sh ls",
        "sort --compress-program=sh a",
        "split --filter='sh -c id' a",
    ],
)
def test_code_an_option_or_a_plus_word_carries_asks(
    bash: Callable[[str], Verdict], wrapper: Callable[[str], str], command: str
) -> None:
    text = wrapper(command)
    assert "builtin.inline-code" in bash(text).rule_ids, text


@pytest.mark.parametrize(
    "command",
    ["echo x > s.R && Rscript s.R", "echo x > s.jl && julia s.jl", "echo x > s.tcl && tclsh s.tcl"],
)
def test_a_runtime_running_a_file_written_in_the_same_call_asks(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert "builtin.inline-code" in bash(command).rule_ids, command


@pytest.mark.parametrize("command", ["vim a.txt", "less a.txt", "man ls", "sort a.txt"])
def test_an_editor_or_pager_without_code_asks_nothing(
    bash: Callable[[str], Verdict], command: str
) -> None:
    assert "builtin.inline-code" not in bash(command).rule_ids, command


@pytest.mark.parametrize("program", sorted(READERS.names))
def test_a_reader_reads_every_word_it_names_and_writes_none(program: str) -> None:
    [parsed] = analyze(f"{program} -x a.txt --opt=b K=c", cwd="/w").commands
    uses = [(w.value, u.read, u.write) for w, u in touched(parsed)]
    read = [("a.txt", True, False), ("K=c", True, False), ("b", True, False), ("c", True, False)]
    assert uses == read, program
