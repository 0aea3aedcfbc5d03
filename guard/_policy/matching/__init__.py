"""Matching a tool call against the policy: which paths it touches and which rules it hits.

``paths`` says what a shell command touches (from ``bash/``'s analysis), ``rules`` and
``globs`` (with ``patterns``) match rules, ``checks`` holds the built-in checks,
``classify`` turns one tool call into a verdict, ``writable`` and ``realpath`` are the path
helpers shared with the sandbox and the grants. It reads ``settings``; it never loads a
layer (``layering`` above does).
"""
