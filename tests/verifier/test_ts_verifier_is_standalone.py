"""The TypeScript verifier is independent: Node built-ins only, nothing of ours, no dependency."""

from __future__ import annotations

import json
import re
from pathlib import Path

VERIFIER = Path(__file__).resolve().parents[2] / "verifier"
IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']""", re.MULTILINE | re.DOTALL
)


def test_no_dependencies_of_any_kind() -> None:
    manifest = json.loads((VERIFIER / "package.json").read_text())
    for field in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
        assert field not in manifest, field
    assert manifest["type"] == "module"
    assert not (VERIFIER / "package-lock.json").exists()


def test_sources_import_node_builtins_and_each_other_only() -> None:
    sources = sorted((VERIFIER / "src").glob("*.ts")) + sorted((VERIFIER / "test").glob("*.ts"))
    assert len(sources) >= 12
    assert sum(len(IMPORT.findall(s.read_text())) for s in sources) >= 50  # the pattern sees them
    for source in sources:
        text = source.read_text()
        assert "require(" not in text, source
        for target in IMPORT.findall(text):
            assert target.startswith(("node:", "./", "../src/")), (source.name, target)
            if target.startswith("."):
                assert target.endswith(".ts"), (source.name, target)
                assert (source.parent / target).resolve().is_relative_to(VERIFIER), target
        # the verifier never shells out to Python or anything else
        assert "child_process" not in text, source
