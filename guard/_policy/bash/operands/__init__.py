"""Which arguments of a program name paths, and how (read, written, deleted …).

``touches`` reads a command through a ``Shape`` (``read_paths``) and holds the rows of the
programs without a card yet, ``irregular`` the readers of the programs no row can say,
``arguments`` flags, option values and operands as getopt reads them. It imports
``bash.model`` and nothing else of the analysis; the cards (``bash/programs``) build on it
and the path matching (``matching/paths``) reads it through them.
"""
