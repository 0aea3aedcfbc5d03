"""tee, touch, mkdir, chmod and its kin: the files they create or change in place.

``tee`` overwrites its operands; ``touch`` and ``mkdir`` write theirs (a new file or
directory, nothing lost); ``chmod``, ``chown``, ``chgrp`` change theirs (recursively with
``-R``), the first operand being the mode or owner unless ``--reference`` gives it. None of
them runs anything.
"""

from __future__ import annotations

from guard._policy.bash.operands.irregular import Use
from guard._policy.bash.operands.touches import Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["MKDIR", "MODES", "TEE", "TOUCH"]


_CREATED = Use(read=False, write=True)

TEE = Card(
    names=words("tee"),
    paths=Shape(operands=Use(read=False, write=True, target=True)),
    abbreviates=True,
    short_options="aip",
)
"""tee's card: every operand overwritten."""

TOUCH = Card(
    names=words("touch"),
    paths=Shape(short_values="dtr", long_values=words("--date --reference"), operands=_CREATED),
    writes_content=False,
    abbreviates=True,
    short_options="acd:fhmr:t:",
)
"""touch's card."""

MKDIR = Card(
    names=words("mkdir"),
    paths=Shape(short_values="m", long_values=words("--mode"), operands=_CREATED),
    writes_content=False,
    abbreviates=True,
    short_options="m:pvZ",
)
"""mkdir's card."""

MODES = Card(
    names=words("chmod chown chgrp"),
    paths=Shape(
        operands=Use(read=False, write=True, target=True),
        first_unless=("--reference",),
        recursive=("-R", "--recursive"),
    ),
    catastrophic=True,
    writes_content=False,
    long_options=words("--no-preserve-root --dereference --reference --from"),
    abbreviates=True,
    short_options="cfvhRHLP",
)
"""chmod, chown, chgrp: their operands changed."""
