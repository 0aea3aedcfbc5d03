"""Preview redaction: text patterns, detect-secrets' detectors and argv-aware spans.

Imports only ``audit._errors``; the appender (``audit._writing``) redacts through it.
"""
