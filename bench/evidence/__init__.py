"""``make bench``'s evidence sections: recording and checking evidence against storage floors.

``bench_inprocess`` (durable ``record`` and ``consume``, the JWT peer), ``bench_verify``
(``audit verify`` throughput), ``bench_startup`` (the appender's start-up check),
``bench_scaling`` (1 to 8 processes on one ledger and one log), ``bench_postgres`` (the
PostgreSQL ledger). Script-style like the rest of ``bench/``: ``run.py`` puts this folder
and ``bench/`` on ``sys.path``, so a section imports ``harness``, ``floors``, ``loggen`` and
its siblings by name.
"""
