"""``node -e``/``-p`` read like ``python -c``: the reader's harmless forms, and every spelling a
hostile model would use to hide code, a core module or a preload in them, which asks.

Each command goes through :func:`analyze`; an ``inline-code`` finding means the guard asks.
"""

from __future__ import annotations

import shlex

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guard._policy.bash.running.javascript import NodeCode, node_allowed, node_code
from guard._policy.bash.walker import analyze

ROUTINE = "node -e \"console.log(require('./src/greet.js')('pi'))\""


def checks(command: str) -> list[str]:
    return [f.check for f in analyze(command, cwd="/w", home="/h").findings]


def node_e(code: str, *options: str) -> str:
    return shlex.join(["node", *options, "-e", code])


HARMLESS = (
    "console.log(require('./src/greet.js')('pi'))",
    "require('./src/greet.js')",
    "require('./scripts/build.js').main()",
    "console.log(require('./src/greet')('a', 1 + 2, [1, 'b'], {name: 'x', 'n': 2}))",
    "console.log(require('./package.json').version)",
    "console.log(require('./package.json').scripts.test)",
    "console.log(require('left-pad').name)",
    "console.log(require('@scope/tool').version)",
    "require('dotenv-cli')",
    "console.log(require('./node_modules/left-pad/package.json').version)",
    "console.log(require('./lib/math.js').add(2, 3) * 2)",
    "console.log((1 + 2) * 3 % 2, -1, true, null)",
    "console.log(1);\nconsole.log(require('./src/greet.js')('x'))",
    "console.log(1)\nrequire('./src/a.js')",
    "console.debug(process.versions.node, process.platform, process.execPath)",
    "console.log({})",
    "console.log(require('./src/greet.js')()())",
)


@pytest.mark.parametrize("code", HARMLESS)
def test_harmless_code_runs_unasked(code: str) -> None:
    assert checks(node_e(code)) == []
    assert checks(shlex.join(["nodejs", "--eval", code])) == []


def test_the_routine_line_runs_unasked_like_running_the_file() -> None:
    assert checks(ROUTINE) == []
    assert checks("node src/greet.js") == []
    assert checks("python3 -c \"print('pi')\"") == []


@pytest.mark.parametrize(
    "command",
    [
        "node -p \"require('./src/greet.js')('pi')\"",
        "node --print \"require('./package.json').version\"",
        "node -pe \"require('left-pad').name\"",
        "node -p \"require('./src/a.js'); 1 + 2\"",
        "node --print=\"require('./src/greet.js')('pi')\"",
        "node --eval=\"console.log(require('./src/greet.js')('pi'))\"",
        'node --input-type=module -e "console.log(1)"',
        "node --input-type=commonjs -e \"console.log(require('./src/greet.js')('pi'))\"",
        "node --no-warnings -e \"console.log(require('./src/greet.js')('pi'))\"",
        'node -e "console.log(1)" --no-deprecation',
    ],
)
def test_print_mode_and_the_few_listed_options_run_unasked(command: str) -> None:
    assert checks(command) == []


# -- what a hostile model writes: each asks ---------------------------------------------------
HOSTILE = (
    # core modules, in every spelling
    "console.log(require('child_process').execSync('rm -rf notes'))",
    'require("fs").rmSync("notes", {recursive: true})',
    "require('fs/promises').rm('notes')",
    "require('node:fs').rmSync('notes')",
    "require('node:child_process')",
    "require('child_process')",
    "require('vm').runInThisContext('1')",
    "require('module')._load('fs')",
    "require('worker_threads')",
    "require('process').exit(1)",
    "require('_stream_wrap')",
    "require('inspector')",
    "require('@scope/fs').x('y')",
    # the process and the module system
    "console.log(process.env)",
    "console.log(process.env.HOME)",
    "process.binding('fs')",
    "process.mainModule.require('fs')",
    "process.exit(1)",
    "console.log(process.argv)",
    "console.log(module.constructor._load('fs'))",
    "console.log(require.main)",
    "console.log(require.resolve('./x'))",
    "require.cache",
    "console.log(require('./x').module.require('fs'))",
    "console.log(require('./x').require('fs'))",
    "console.log(require('./x')._load('fs'))",
    "console.log(require('./x').mainModule)",
    # code from strings
    "eval('1')",
    "console.log(eval('1'))",
    "Function('return 1')()",
    "console.log(new Function('return 1')())",
    "console.log(require('./x').constructor.constructor('return process')())",
    "console.log(require('./x').__proto__)",
    "console.log(require('./x')('a').constructor)",
    "console.log(require('./x').prototype)",
    "console.log(require('./x').call(null, 'a'))",
    "console.log(require('./x').apply(null, ['a']))",
    "console.log(require('./x').bind(null)('a'))",
    "import('fs').then(console.log)",
    "console.log(import('fs'))",
    "setTimeout('1')",
    # computed and hidden names
    "globalThis['req' + 'uire']('fs')",
    "console.log(globalThis.require)",
    "console.log(global.process)",
    "console.log(this.constructor)",
    "console.log(require('./x')['constructor'])",
    "console.log(require('./x')[0])",
    "console.log(\\u0072equire('fs'))",
    "console.log(requir\\u0065('fs'))",
    "console.log(require('\\x66s'))",
    "console.log('a\\nb'); require('fs')",
    "console.log(`${require('fs')}`)",
    "console.log(`a`); require`fs`",
    "console.log(String.raw`x`)",
    "console.log(require(`fs`))",
    "console.log(require('f' + 's'))",
    "console.log(ｒequire('fs'))",
    "console.log(1)\u2028require('fs')",
    "console.log(1)\u00a0",
    # comments and statement tricks
    "console.log(1) // ; require('fs')",
    "console.log(1) /* */ ; require('fs')",
    "/* console.log(1) */ require('fs').rmSync('x')",
    "console.log(1)\n(require('fs'))",
    "console.log(1)\n[require('fs')]",
    "console.log(1)\n`x`",
    "console.log(1)\n.constructor",
    "console.log(1), require('fs')",
    "console.log(1); var require = 1",
    "console = {log: 1}",
    "console.log = eval",
    "require",
    "console.log(require('./x')(x => 1))",
    "console.log(require('./x')(function () {}))",
    "console.log(require('./x')?.a)",
    "console.log(require('./x') ? 1 : 2)",
    "console.log(a)",
    "console.log({__proto__: null})",
    "console.log({get a() { return 1 }})",
    "console.log({[x]: 1})",
    "console.log({...require('fs')})",
    "console.log(...[1])",
    # paths that are not the project's own files
    "console.log(require('../secrets.js'))",
    "console.log(require('./../x.js'))",
    "console.log(require('./src/../../x.js'))",
    "console.log(require('/etc/passwd'))",
    "console.log(require('~/x.js'))",
    "console.log(require('./.git/hooks/pre-commit'))",
    "console.log(require('./.env'))",
    "console.log(require('./.pi/x.js'))",
    "console.log(require('./src/.hidden.js'))",
    "console.log(require('.'))",
    "console.log(require('./'))",
    "console.log(require('./src//x.js'))",
    "console.log(require('./src\\\\x.js'))",
    "console.log(require('pkg/sub'))",
    "console.log(require('_private'))",
    "console.log(require('.bin'))",
    "console.log(require('./" + "a" * 600 + "/id_rsa'))",
    # a package's functions: ask (a project file's are that file's code)
    "console.log(require('left-pad')('x', 5))",
    "require('shelljs').exec('rm -rf notes')",
    "require('rimraf').sync('notes')",
    "require('./node_modules/shelljs').exec('rm -rf notes')",
)


@pytest.mark.parametrize("code", HOSTILE)
def test_hostile_code_asks(code: str) -> None:
    assert "inline-code" in checks(node_e(code)), code
    assert "inline-code" in checks(shlex.join(["node", "-p", code])), code


@pytest.mark.parametrize("code", ["1", "'use strict'", "process.version", "[1, 2]"])
def test_a_bare_value_asks_with_e_and_runs_unasked_with_p(code: str) -> None:
    assert checks(node_e(code)) == ["inline-code"]
    assert checks(shlex.join(["node", "-p", code])) == []


def test_code_that_requires_is_marked_as_importing() -> None:
    marked = [c.imports for c in analyze(ROUTINE, cwd="/w", home="/h").commands]
    assert marked == [True]
    assert [c.imports for c in analyze("node -e 'console.log(1)'", cwd="/w").commands] == [False]
    assert [c.imports for c in analyze("python3 -c 'import evil'", cwd="/w").commands] == [True]


@pytest.mark.parametrize(
    "command",
    [
        # preloads, loaders and options the analysis does not read
        'node -r ./evil.js -e "console.log(1)"',
        'node --require ./evil.js -e "console.log(1)"',
        'node --require=./evil.js -e "console.log(1)"',
        'node -e "console.log(1)" -r ./evil.js',
        'node --import ./evil.mjs -e "console.log(1)"',
        'node --import=./evil.mjs -e "console.log(1)"',
        'node --loader ./evil.mjs -e "console.log(1)"',
        'node --experimental-loader=./evil.mjs -e "console.log(1)"',
        'node --experimental-default-type=module -e "console.log(1)"',
        'node --experimental-vm-modules -e "console.log(1)"',
        'node --env-file=.env -e "console.log(1)"',
        'node --inspect -e "console.log(1)"',
        'node --input-type module -e "console.log(1)"',
        'node --input-type=foo -e "console.log(1)"',
        'node -i -e "console.log(1)"',
        'node -ie "console.log(1)"',
        'node -ep "console.log(1)"',
        "node --preserve-symlinks -e \"console.log(require('./src/greet.js')('pi'))\"",
        "node --conditions=evil -e \"console.log(require('left-pad').name)\"",
        'node --stack-size=1 -e "console.log(1)"',
        # a script, arguments, stdin or more code beside it
        'node -e "console.log(1)" evil.js',
        'node -e "console.log(1)" -- evil.js',
        'node -e "console.log(1)" -',
        "node -e \"console.log(1)\" -e \"require('fs').rmSync('x')\"",
        "node -e \"require('fs').rmSync('x')\" -e \"console.log(1)\"",
        'node -p "1" --eval "console.log(1)"',
        'node -e "console.log(1)" $EXTRA',
        'node -e "$CODE"',
        'node -e "$(cat payload.js)"',
        # the environment
        "NODE_OPTIONS='-r ./evil.js' node -e \"console.log(1)\"",
        'NODE_OPTIONS=--require=./evil.js node -e "console.log(1)"',
        "env NODE_OPTIONS='-r ./evil.js' node -e \"console.log(1)\"",
        "export NODE_OPTIONS='-r ./evil.js'; node -e \"console.log(1)\"",
        "NODE_PATH=/tmp/evil node -e \"console.log(require('left-pad').name)\"",
    ],
)
def test_options_environment_and_extra_code_ask(command: str) -> None:
    assert checks(command) != [], command


def test_a_script_with_its_own_argv_runs_as_before() -> None:
    # node reads no options after the script: -e is the script's argument (the script runs).
    assert node_code(["x.js", "-e", "require('fs')"]) is None
    assert node_code(["-e"]) is None
    assert checks("node x.js --print") == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["-e", "1"], NodeCode("1", False, None)),
        (["-p", "1"], NodeCode("1", True, None)),
        (["-pe", "1"], NodeCode("1", True, None)),
        (["--print=1"], NodeCode("1", True, None)),
        (["--no-warnings", "-e", "1"], NodeCode("1", False, None)),
        (["-e", None], NodeCode(None, False, None)),
    ],
)
def test_node_code_reads_the_code_flag(args: list[str | None], expected: NodeCode) -> None:
    assert node_code(args) == expected


def test_the_last_code_flag_counts_and_more_than_one_asks() -> None:
    got = node_code(["-e", "require('fs')", "-e", "console.log(1)"])
    assert got is not None and got.code == "console.log(1)" and got.problem is not None


def test_a_long_or_deeply_nested_program_asks() -> None:
    assert node_allowed("console.log(" + "1 + " * 600 + "1)", prints=False) is False
    assert node_allowed("console.log(" + "[" * 200 + "]" * 200 + ")", prints=False) is False
    assert node_allowed("console.log(" + "(" * 30 + "1" + ")" * 30 + ")", prints=False) is False
    assert node_allowed("", prints=True) is False
    assert node_allowed(";", prints=True) is False


@pytest.mark.parametrize("base", HARMLESS)
@pytest.mark.parametrize(
    "tail",
    ["; require('fs')", "\nprocess.exit()", ";eval('1')", "\n(require('fs'))", ".constructor"],
)
def test_a_harmless_program_with_anything_after_it_asks(base: str, tail: str) -> None:
    assert node_allowed(base + tail, prints=False) is False


_PIECES = (
    "console.log(", "console.error(", ")", "(", "1", "'a'", "`t`", "+", "*", ",", ";", "\n",
    " ", "[", "]", "{", "}", "a:", ".x", "require('./src/a.js')", "require('left-pad')",
    "process.version", "true",
)  # fmt: skip
_DANGER = (
    "eval", "Function", ".constructor", "require('fs')", "process.env", "\\u0072", "//", "/*",
    "globalThis", "import(", "this", "require('../x')", "__proto__", "`${", ".call", "=",
    "require.main", "require(x)", "module", "process.exit", "require('node:os')", "new ", "=>", "?.",
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=12),
    st.sampled_from(_DANGER),
    st.lists(st.sampled_from(_PIECES), max_size=12),
    st.booleans(),
)
def test_no_program_with_a_dangerous_piece_outside_its_strings_is_allowed(
    before: list[str], danger: str, after: list[str], prints: bool
) -> None:
    """Pieces of the harmless forms around one piece that reaches further, spaced apart (so
    ``.constructor`` never grows into another member name): never allowed."""
    assert node_allowed(" ".join([*before, danger, *after]), prints=prints) is False
