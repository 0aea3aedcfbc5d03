"""Static analysis of bash commands on tree-sitter: what runs, on which paths.

``syntax`` walks the tree, ``walker`` follows what simple commands run (wrappers, ``cd``,
``eval`` …), ``wrappers`` and ``interpreters`` unwrap programs that run other programs, and
``model`` holds the results. It only decides when to ask; it is not a sandbox.
"""
