"""The developer's lock covers what pyproject.toml asks for, pinned and hash-checked.

``make`` installs ``requirements/dev.lock`` with ``--require-hashes``; a requirement added to
pyproject.toml but not to the lock would be missing from every fresh environment, and one
whose pin no longer satisfies its range would install what the project does not accept.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "requirements" / "dev.lock"
# A CPython 3.11 on Linux: the environment `make` builds.
ENV = {"python_version": "3.11", "sys_platform": "linux", "platform_system": "Linux"}


def locked() -> dict[str, tuple[Version, list[str]]]:
    """name -> (pinned version, hashes), from the lock's ``name==version \\ --hash=…`` entries."""
    entries: dict[str, tuple[Version, list[str]]] = {}
    text = LOCK.read_text(encoding="utf-8").replace("\\\n", " ")
    for line in text.splitlines():
        if not line or line[0] in "# ":
            continue
        spec, _, rest = line.partition(" --hash=")
        requirement = Requirement(spec.strip())
        if requirement.marker is not None and not requirement.marker.evaluate(ENV):
            continue
        (pin,) = requirement.specifier
        assert pin.operator == "==", line
        hashes = re.findall(r"sha256:([0-9a-f]{64})", "--hash=" + rest)
        entries[canonicalize_name(requirement.name)] = (Version(pin.version), hashes)
    return entries


def wanted() -> list[Requirement]:
    """Every requirement of the project, its ``postgres`` extra and its ``dev`` group."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    groups = project["dependency-groups"]

    def group(name: str) -> list[str]:
        out: list[str] = []
        for item in groups[name]:
            out += group(item["include-group"]) if isinstance(item, dict) else [item]
        return out

    specs = (
        project["project"]["dependencies"]
        + project["project"]["optional-dependencies"]["postgres"]
        + group("dev")
    )
    return [Requirement(spec) for spec in specs]


def test_every_requirement_is_pinned_in_the_lock_within_its_range() -> None:
    pins = locked()
    for requirement in wanted():
        if requirement.marker is not None and not Marker(str(requirement.marker)).evaluate(ENV):
            continue
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement} is not in {LOCK.name}: run `make lock`"
        version, _ = pins[name]
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{LOCK.name} pins {name}=={version}, outside {requirement}: run `make lock`"
        )


def test_every_pin_is_hash_checked() -> None:
    pins = locked()
    assert len(pins) > 20
    for name, (_, hashes) in pins.items():
        assert hashes, f"{name} has no --hash in {LOCK.name}"
