"""Containers and clusters: the host paths a container mounts, and the options before a
subcommand.

* **Paths.** The host side of ``-v``/``--volume``/``--mount`` (when it is a path) is
  written, recursively: a container may change all of it. ``docker`` reads what else it
  names; ``podman`` and ``nerdctl`` are otherwise read like a program nothing is known of.
* **Subcommand.** ``docker -H HOST rm``, ``kubectl -n NS delete``, ``helm --kube-context C
  uninstall``: a rule's ``subcommand`` skips these values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from guard._policy.bash.model import Command, Word
from guard._policy.bash.operands.arguments import option_value
from guard._policy.bash.operands.irregular import Touches, Use
from guard._policy.bash.operands.touches import UNKNOWN, Shape
from guard._policy.bash.programs.card import Card, words

__all__ = ["DOCKER", "HELM", "KUBECTL", "NERDCTL", "OC", "PODMAN"]


_READ = Use(read=True, write=False)
_READER = Shape(operands=_READ, values=_READ, assignments=True)
_KUBE = words("-n --namespace --context --cluster --kubeconfig -s --server --user --token --as")


def _paths(
    command: Command, flags: Sequence[Word], values: Sequence[Word], _: Sequence[Word]
) -> Touches:
    """The host side of ``-v``/``--volume``/``--mount``, when it is a path."""
    out: Touches = []
    for word in option_value(command.args, "-v", "--volume", "--mount"):
        source: str | None = word.value
        if source is not None and "=" in source:
            fields = dict(f.split("=", 1) for f in source.split(",") if "=" in f)
            source = fields.get("source", fields.get("src", ""))
        elif source is not None:
            source = source.split(":", 1)[0]
        if source is None or source.startswith(("/", ".", "~")):
            out.append((Word(source, word.raw), Use(True, True, target=True, recursive=True)))
    return out


DOCKER = Card(
    names=words("docker"),
    paths=replace(_READER, reader=_paths),
    global_options=words(
        "-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey"
    ),
)
"""docker's card."""

PODMAN = Card(
    names=words("podman"),
    paths=replace(UNKNOWN, reader=_paths),
    global_options=words("--connection -c --url --root --runroot --log-level"),
)
"""podman's card."""

NERDCTL = Card(names=words("nerdctl"), paths=replace(UNKNOWN, reader=_paths))
"""nerdctl's card."""

KUBECTL = Card(names=words("kubectl"), paths=_READER, global_options=_KUBE)
"""kubectl's card."""

OC = Card(names=words("oc"), global_options=_KUBE)
"""OpenShift's ``oc``: only the options before its subcommand are known."""

HELM = Card(names=words("helm"), global_options=words("-n --namespace --kube-context --kubeconfig"))
"""helm's card: only the options before its subcommand are known."""
