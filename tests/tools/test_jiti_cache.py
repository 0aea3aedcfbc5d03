"""The harness hands a freshly installed shim the compiled form jiti made of the same source
(tools/pi/jiti_cache.py): only an entry of the same source, under the name jiti looks for, and
the real pi's jiti takes it as its own."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from tools.pi.harness import PinnedPi
from tools.pi.jiti_cache import seed_jiti_cache

SOURCE = "export default function (x: number): number {\n\treturn x + 1;\n}\n"


def _jiti(pi: PinnedPi) -> Path:
    modules = next(p for p in Path(pi.cli).parents if p.name == "node_modules")
    return modules / "jiti" / "lib" / "jiti.mjs"


def _load(pi: PinnedPi, tmp: Path, source: Path, env_tmp: Path) -> str:
    script = tmp / "load.mjs"
    script.write_text(
        "const { createJiti } = await import(process.argv[2]);\n"
        "const jiti = createJiti(import.meta.url, { moduleCache: false });\n"
        "const f = await jiti.import(process.argv[3], { default: true });\n"
        "console.log('result', f(1));\n"
    )
    done = subprocess.run(
        [str(pi.node), str(script), str(_jiti(pi)), str(source)],
        env={"PATH": "/usr/bin:/bin", "TMPDIR": str(env_tmp), "JITI_DEBUG": "1", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "result 2" in done.stdout, done.stdout + done.stderr
    return done.stdout + done.stderr


@pytest.mark.every_pi
def test_the_real_jiti_takes_the_entry_made_for_a_new_path(
    pinned_pi: PinnedPi, tmp_path: Path
) -> None:
    cache_tmp = tmp_path / "t"
    cache_tmp.mkdir()
    first, second = tmp_path / "a" / "ext", tmp_path / "b" / "ext"
    for directory in (first, second):
        directory.mkdir(parents=True)
        (directory / "index.ts").write_text(SOURCE)
    assert "[miss]" in _load(pinned_pi, tmp_path, first / "index.ts", cache_tmp)
    assert seed_jiti_cache(second, {"TMPDIR": str(cache_tmp)}) == 1
    assert "[hit]" in _load(pinned_pi, tmp_path, second / "index.ts", cache_tmp)


def test_only_an_entry_of_the_same_source_is_copied(tmp_path: Path) -> None:
    env = {"TMPDIR": str(tmp_path / "t") + "/"}
    cache = tmp_path / "t" / "jiti"
    extension = tmp_path / "x" / "ext"
    extension.mkdir(parents=True)
    assert seed_jiti_cache(extension, env) == 0  # no cache directory yet
    cache.mkdir(parents=True)
    (extension / "index.ts").write_text(SOURCE)
    (cache / "ext-index.00000000.mjs").write_bytes(b"stale /* v9-0123456789abcdef */\n")
    assert seed_jiti_cache(extension, env) == 0
    assert sorted(p.name for p in cache.iterdir()) == ["ext-index.00000000.mjs"]
    compiled = b"compiled " + b" /* v9-" + hashlib.md5(SOURCE.encode()).hexdigest()[:16].encode()
    (cache / "ext-index.11111111.mjs").write_bytes(compiled + b" */\n")
    assert seed_jiti_cache(extension, env) == 1
    real = os.path.realpath(extension / "index.ts").encode()
    seeded = cache / f"ext-index.{hashlib.md5(real).hexdigest()[:8]}.mjs"
    assert seeded.read_bytes() == compiled + b" */\n"
    seeded.write_bytes(b"jiti's own")  # never overwritten
    assert seed_jiti_cache(extension, env) == 0
    assert seeded.read_bytes() == b"jiti's own"
