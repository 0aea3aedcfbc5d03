"""Static analysis of bash commands on tree-sitter: what runs, on which paths.

Three floors under ``walker`` (``analyze``), each on ``model`` (the results) and nothing
above it: ``parsing/`` turns bash text into commands and words (``tree`` the tree-sitter
parser, ``syntax`` the walk of statements, ``words`` a word's value, ``redirects``,
``quoting``); ``running/`` says what a program runs (``wrappers`` and ``interpreters``
unwrap programs that run other programs, ``inline`` reads inline code, ``streams`` what
reaches stdin, ``programs`` the rest), on ``parsing/``; ``operands/`` says which words
name paths (``touches``, ``irregular``, ``arguments``), read by the path matching. It only
decides when to ask; it is not a sandbox.
"""
