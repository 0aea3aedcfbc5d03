"""Property: for commands from a small grammar, ``covers`` says covered exactly when the
command is one plain action of the grant's program and arguments with every target inside.

The expectation is computed from the generated structure (which words are static, which
names the glob holds), not by asking the analysis or the matcher.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.guard.grants.conftest import World

# The grant of each program: (base command, its fixed words); each is "same-directory",
# so its glob is <workspace>/*.txt.
BASES = {
    "rm": ("rm -f a.txt", ("-f",)),
    "mv": ("mv a.txt b.txt", ()),
    "cp": ("cp c.md b.txt", ("c.md",)),
    "chmod": ("chmod 600 a.txt", ("600",)),
}
FIXED = {
    "rm": (("-f",), ("-rf",), (), ("-f", "-v")),
    "mv": ((), ("-f",), ("-n",)),
    "cp": (("c.md",), ("-r", "c.md"), ("../../../elsewhere/x.txt",)),
    "chmod": (("600",), ("644",), ("-R", "600")),
}
# Static target words inside the glob (any quoting), and words that are not.
INSIDE = ("a.txt", "b.txt", "new.txt", "'b.txt'", '"a.txt"', "./a.txt", "sub/../b.txt")
OUTSIDE = (
    "c.md",
    "sub/a.txt",
    "other/x.txt",
    "../../../elsewhere/x.txt",
    "to-md.txt",  # a symlink in the glob, to c.md
    "to-away.txt",  # a symlink in the glob, out of the workspace
    "sub",
)
DYNAMIC = ("$(echo a.txt)", "`echo b.txt`", '"$X"', "$X.txt", "*.txt", "{a,b}.txt", "a?.txt")


@dataclass(frozen=True)
class Simple:
    program: str
    fixed: tuple[str, ...]
    targets: tuple[str, ...]

    def text(self) -> str:
        return " ".join((self.program, *self.fixed, *self.targets))


@st.composite
def simples(draw: st.DrawFn, program: str) -> Simple:
    chosen = draw(st.sampled_from([program, program, "rm", "mv", "cp", "chmod"]))
    fixed = draw(st.sampled_from(FIXED[chosen]))
    words = st.sampled_from(INSIDE + INSIDE + OUTSIDE + DYNAMIC)
    # cp reads every operand but the last: one destination keeps the grammar's meaning simple
    targets = draw(st.lists(words, min_size=1, max_size=1 if chosen == "cp" else 3))
    return Simple(chosen, fixed, tuple(targets))


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, list[Simple], list[str]]:
    program = draw(st.sampled_from(sorted(BASES)))
    first = draw(simples(program))
    joined = st.tuples(st.sampled_from([";", "&&", "|"]), simples(program))
    rest = draw(st.one_of(st.just([]), st.lists(joined, min_size=1, max_size=2)))
    return program, [first, *(s for _, s in rest)], [sep for sep, _ in rest]


def expected(program: str, parts: list[Simple]) -> bool:
    if len(parts) != 1:
        return False
    (part,) = parts
    return (
        part.program == program
        and part.fixed == BASES[program][1]
        and all(word in INSIDE for word in part.targets)
    )


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(case=cases())
def test_covered_exactly_when_one_plain_action_inside_the_glob(
    world: World, case: tuple[str, list[Simple], list[str]]
) -> None:
    app = world.workspace
    for name, target in (("to-md.txt", app / "c.md"), ("to-away.txt", world.outside / "x.txt")):
        if not (app / name).is_symlink():
            (app / name).symlink_to(target)
    program, parts, separators = case
    command = parts[0].text()
    for sep, part in zip(separators, parts[1:], strict=True):
        command += f" {sep} {part.text()}"
    pattern = world.pattern(BASES[program][0], "same-directory")
    assert pattern.globs == (f"{app}/*.txt",)
    coverage = world.bash_covers(pattern, command)
    event(coverage.reason)
    assert coverage.covered is expected(program, parts), (command, coverage)
