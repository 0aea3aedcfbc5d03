"""A script writing the files of ``.git`` that steer the operator's git (objects borrowed
from elsewhere, attributes, grafts, a shallow cut, a sparse checkout, the common directory,
the config, a hook) is held, as pi's ``write`` tool asks about them; git's own bookkeeping
is applied as before. Real overlay, real git, the sidecar's predicate (git internals are
not protected as such in the review)."""

from __future__ import annotations

import pytest

from tests.guard.effects.conftest import Overlay, snapshot
from tests.guard.effects.test_review import git_aware_protected, make_repo, review

STEERING = {
    "alternates": "printf '/elsewhere/objects\\n' > .git/objects/info/alternates",
    "alternates-python": "python3 -c \"open('.git/objects/info/alternates','w')"
    ".write('/tmp/x/objects\\n')\"",
    "http-alternates": "echo https://example.invalid/objects >> .git/objects/info/http-alternates",
    "attributes": "echo '* -diff' > .git/info/attributes",
    "attributes-tee": "echo 'src/* filter=x' | tee -a .git/info/attributes >/dev/null",
    "grafts": "git rev-parse HEAD > .git/info/grafts",
    "shallow": "git rev-parse HEAD > .git/shallow",
    "sparse": "echo /src > .git/info/sparse-checkout",
    "commondir": "echo /tmp/other > .git/commondir",
    "config-append": "cp .git/config c && echo '[core]' >> c && mv c .git/config",
    "hook": "printf '#!/bin/sh\\necho hooked\\n' > .git/hooks/post-checkout",
    "hook-by-copy": "cp .git/hooks/pre-commit.sample .git/hooks/pre-commit",
}


@pytest.mark.parametrize("name", sorted(STEERING))
def test_a_script_writing_what_steers_git_is_held(overlay: Overlay, name: str) -> None:
    ws = overlay.workspace
    make_repo(ws)
    before = snapshot(ws / ".git")
    _, _, result = review(overlay, STEERING[name], protected=git_aware_protected(ws))
    assert result.decision == "held", result
    assert {h.reason for h in result.held} == {"protected"}
    after = snapshot(ws / ".git")
    assert {k: v for k, v in after.items() if "objects/" not in k or "info" in k} == {
        k: v for k, v in before.items() if "objects/" not in k or "info" in k
    }


ROUTINE = {
    "commit": "echo more >> README.md && git -c user.name=a -c user.email=a@a commit -qam more",
    "gc": "git gc -q",
    "branch": "git checkout -q -b topic",
    "sample-hook-read": "cat .git/hooks/pre-commit.sample > /dev/null",
    "new-repository": "git init -q sub && echo x > sub/f",
}


@pytest.mark.parametrize("name", sorted(ROUTINE))
def test_git_s_own_bookkeeping_is_applied(overlay: Overlay, name: str) -> None:
    make_repo(overlay.workspace)
    _, _, result = review(overlay, ROUTINE[name], protected=git_aware_protected(overlay.workspace))
    assert result.decision in ("applied", "empty"), result
    assert result.held == ()
