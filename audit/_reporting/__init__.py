"""What people read about a log: ``pi-guard audit report`` (the rows in :mod:`.rows`, the
classification in :mod:`.report`, grants in :mod:`.grants`, the tables in :mod:`.render`),
``show`` (:mod:`.show`), plain-text tables (:mod:`.table`) and what a recovery set aside
(:mod:`.recovered`).

Builds on ``audit._records`` only: it reads records, never the log's files or its head.
"""
