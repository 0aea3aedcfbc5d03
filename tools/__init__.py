"""Repo-only tooling: never part of the wheel."""
