"""``make bench``'s sections, one module each: what ``bench/run.py`` measures against a floor.

Script-style like the rest of ``bench/``: ``run.py`` puts this folder and ``bench/`` on
``sys.path``, so a section imports ``harness``, ``floors``, ``loggen`` and its sibling
sections by name. The sections with a ``__main__`` also run alone
(``python bench/sections/bench_policy.py``).
"""
