"""Checking a whole log: one pass over its lines (:mod:`.scan`), the fault kinds
(:mod:`.faults`) and ``verify_log`` against the signed head (:mod:`.verify`).

Builds on ``audit._records`` and ``audit.tlog``; never imports the appender or the report.
"""
