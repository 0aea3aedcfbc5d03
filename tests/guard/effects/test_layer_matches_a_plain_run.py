"""The property the effects review stands on: for random trees and random commands, the
effects read from the layer, applied to a copy of the tree, give exactly what the same
command does to a plain copy (real overlayfs in a user namespace, real shell)."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guard._effects import apply_effects, read_effects
from tests.guard.effects.conftest import Overlay, copy_tree, snapshot

pytestmark = pytest.mark.integration

NAMES = st.sampled_from(["a", "b", "c", "d.txt", "e"])
PATHS = st.lists(NAMES, min_size=1, max_size=3).map("/".join)
TEXT = st.text(alphabet="xyz\n", max_size=12)


def op_strategy() -> st.SearchStrategy[str]:
    q = shlex.quote
    return st.one_of(
        st.tuples(PATHS, TEXT).map(
            lambda t: f"mkdir -p $(dirname {t[0]}) && printf %s {q(t[1])} > {t[0]}"
        ),
        st.tuples(PATHS, TEXT).map(lambda t: f"printf %s {q(t[1])} >> {t[0]}"),
        PATHS.map(lambda p: f"rm -rf {p}"),
        PATHS.map(lambda p: f"mkdir -p {p}"),
        st.tuples(PATHS, PATHS).map(lambda t: f"mv -T {t[0]} {t[1]}"),
        st.tuples(PATHS, NAMES).map(lambda t: f"ln -sfn {t[1]} {t[0]}"),
        PATHS.map(lambda p: f"chmod 700 {p}"),
        PATHS.map(lambda p: f"rm -rf {p} && mkdir -p {p} && echo again > {p}/new"),
    )


def build(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        if any(p.exists() and not p.is_dir() for p in path.parents if p != root.parent):
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(text)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.dictionaries(PATHS, TEXT, max_size=6),
    ops=st.lists(op_strategy(), min_size=1, max_size=6),
)
def test_applied_effects_equal_a_plain_run(
    overlay: Overlay, files: dict[str, str], ops: list[str]
) -> None:
    root = overlay.workspace.parent
    for name in ("plain", "applied"):
        shutil.rmtree(root / name, ignore_errors=True)
    shutil.rmtree(overlay.workspace)
    overlay.workspace.mkdir()
    build(overlay.workspace, files)
    plain = root / "plain"
    copy_tree(overlay.workspace, plain)
    script = "; ".join(f"{op} 2>/dev/null" for op in ops)
    import subprocess

    subprocess.run(["/bin/sh", "-c", script], cwd=plain, check=False, capture_output=True)
    before = snapshot(overlay.workspace)
    layer, upper = overlay.run(script)
    assert snapshot(overlay.workspace) == before  # the layer took every change
    effects = read_effects(upper, overlay.workspace)
    applied = root / "applied"
    copy_tree(overlay.workspace, applied)
    apply_effects(effects, overlay.layers / layer, upper, applied)
    assert snapshot(applied) == snapshot(plain), (script, effects)
