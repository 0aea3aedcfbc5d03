"""Which arguments of a program name paths, and how (read, written, deleted …).

``touches`` is the one table of that knowledge (read by ``touched``), ``irregular`` the
readers of the programs no row can say, ``arguments`` flags, option values and operands as
getopt reads them. It imports ``bash.model`` and nothing else of the analysis; the path
matching (``matching/paths``) reads it.
"""
