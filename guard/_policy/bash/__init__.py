"""Static analysis of bash commands on tree-sitter: what runs, on which paths.

Floors under ``walker`` (``analyze``), each on ``model`` (the results) and nothing above
it: ``parsing/`` turns bash text into commands and words (``tree`` the tree-sitter parser,
``syntax`` the walk of statements, ``words`` a word's value, ``redirects``, ``quoting``);
``operands/`` reads a program's arguments (``arguments``, the ``Shape`` of ``touches``,
``irregular``); ``programs/`` holds one card per program (what it runs, which words are
paths, its irregular forms), on both; ``running/`` says what a program runs (``wrappers``
and ``interpreters`` unwrap programs that run other programs, ``inline`` reads inline
code, ``streams`` what reaches stdin, ``programs`` asks the cards and holds the rest), on
``programs/``. It only decides when to ask; it is not a sandbox.
"""
