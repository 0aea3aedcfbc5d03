"""Cloud CLIs and the guard's own: the options that may come before their subcommand.

``aws --profile P s3 rm``, ``gcloud --project P … delete``, ``pi-guard --home H …``: a rule's
``subcommand`` skips these values. Their paths are not known.
"""

from __future__ import annotations

from guard._policy.bash.programs.card import Card, words

__all__ = ["AWS", "GCLOUD", "PI_GUARD"]


AWS = Card(names=words("aws"), global_options=words("--profile --region --output --endpoint-url"))
"""The AWS CLI's card."""

GCLOUD = Card(
    names=words("gcloud"), global_options=words("--project --account --configuration --format")
)
"""gcloud's card."""

PI_GUARD = Card(names=words("pi-guard"), global_options=words("--home"))
"""The guard's own CLI."""
