"""Bash text to our model: the parse tree walked into commands, words and redirections.

``tree`` is the tree-sitter parser made safe (a node's text, what a node is), ``syntax`` the
walk of statements (lists, pipelines, subshells, substitutions), ``words`` a word's value as
bash sees it, ``redirects`` redirections and heredocs, ``quoting`` bash's quoting and brace
expansion. It imports ``bash.model`` and nothing else of the analysis; it never says what a
program does with its arguments (``running/`` and ``operands/`` do).
"""
