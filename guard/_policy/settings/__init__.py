"""What the policy is configured to be: the layer files and what this machine supplies.

``models`` holds the typed shapes (rules, settings, verdicts, the description), ``config``
reads and validates one layer file, ``installation`` and ``surroundings`` give the
placeholders their values (the guard's own files; what runs outside the sandbox, the
credential files), ``homes`` every guard home this user opened. Nothing here matches a tool
call; :mod:`guard._policy.matching` does.
"""
