"""The appender and its recovery: ``AuditLog`` (:mod:`.log`), the signer and trusted keys
(:mod:`.signing`), an event's data as written (:mod:`.events`), what a crash may leave after
the head (:mod:`.crash`), durable file steps (:mod:`.files`), the check of the whole log up
to its head (:mod:`.integrity`), and the operator's ``recover_log`` (:mod:`.recover`).

The top floor of ``audit``: builds on ``audit._records``, ``audit.tlog``,
``audit._redaction`` and (for ``recover_log`` only) ``audit._checking``.
"""
