"""Static analysis of bash commands on tree-sitter: what runs, on which paths.

``syntax`` walks the tree (``tree`` reads its nodes, ``words`` a word's value,
``redirects`` redirections and heredocs), ``walker`` follows what simple commands run
(wrappers, ``cd``, ``eval`` …), ``wrappers`` and ``interpreters`` unwrap programs that run
other programs, ``touches`` says which words name paths, and ``model`` holds the results. It
only decides when to ask; it is not a sandbox.
"""
