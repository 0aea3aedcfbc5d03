"""The warm start: a per-home fork server that has imported what a sidecar needs, and the
launcher pi spawns, which gets its sidecar forked from there (or starts one cold).

``launch`` is the launcher (standard library and :mod:`guard._home` only), ``wire`` the
protocol on ``<home>/warm.sock``, ``facts`` what a process is (namespaces, cgroup, the code
stamp), ``server`` the fork server and ``child`` its child becoming the sidecar. Every
session still has a sidecar process of its own; the fork server holds no session's state.

Nothing of guard imports this wing: it stands above the command line its children run
(doctor's check of a home's fork server is :func:`guard._pi.check_warm`), and it is entered
as ``python -I -m guard._warm``.
"""

__all__: list[str] = []
