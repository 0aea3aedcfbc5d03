"""Array-element targets of ``read`` and ``printf -v`` in the bash analysis.

bash assigns ``NAME[0]`` to the scalar ``NAME`` itself, so ``printf -v 'PATH[0]' …`` or
``read 'PATH[0]'`` change ``PATH`` exactly like ``printf -v PATH …``: the element form must
ask the same, while an element of an ordinary array stays harmless.
"""

from __future__ import annotations

import pytest

from guard._policy.bash.walker import analyze

ASSIGNS_PATH = (
    "shell-environment",
    "assigns PATH, which changes what later commands run or where their paths point",
)


def findings(command: str) -> list[tuple[str, str]]:
    return [(f.check, f.detail) for f in analyze(command, cwd="/w", home="/h").findings]


@pytest.mark.parametrize(
    "command",
    [
        "printf -v 'PATH[0]' %s /tmp/evil; ls",
        "read 'PATH[0]' <<< /tmp/evil",
        "read -r x 'PATH[0]'",
        "mapfile 'PATH[0]'",  # bash refuses it; asking is the safe side
    ],
)
def test_an_element_of_a_sensitive_variable_asks(command: str) -> None:
    assert findings(command) == [ASSIGNS_PATH]


@pytest.mark.parametrize(
    "command",
    [
        "printf -v 'arr[1]' %s x",
        "read 'arr[1]'",
        "read -a arr",
        "read -p 'Continue [y/n]? ' yn",  # a prompt with brackets is not a name
    ],
)
def test_an_element_of_an_ordinary_array_has_no_finding(command: str) -> None:
    assert findings(command) == []


@pytest.mark.parametrize(
    "command",
    [
        "read 'PATH[a[0]]' <<< /tmp/evil",  # the subscript is arithmetic: a[0] is 0
        "printf -v 'PATH[i[1]]' %s /tmp/evil",
        "read -r x 'PATH[a[b[0]]]'",
    ],
)
def test_a_subscript_with_brackets_of_its_own_still_names_the_variable(command: str) -> None:
    assert findings(command) == [ASSIGNS_PATH]
