"""Package faces that import each public name on first use (PEP 562).

A face lists its names under ``typing.TYPE_CHECKING`` for mypy and in ``_HOMES`` (name to
defining module) for this; ``tests/test_exported_members.py`` keeps the two and ``__all__``
equal. One copy per root package: audit, planning and guard import nothing of each other's
private modules.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence

__all__ = ["exports"]


def exports(
    package: str, homes: Mapping[str, str], public: Sequence[str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the face ``package``: a name of ``homes`` is
    imported from its module when first asked for and then kept on the package."""
    namespace = sys.modules[package].__dict__

    def attribute(name: str) -> object:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def names() -> list[str]:
        return sorted([*namespace, *public])

    return attribute, names
