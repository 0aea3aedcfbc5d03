"""What a program runs: the programs that run other programs, code or what stdin carries.

``wrappers`` unwraps ``env``, ``xargs``, ``sudo`` …, ``interpreters`` shells and language
runtimes, ``inline`` and ``javascript`` read their inline code, ``streams`` says what
reaches a program's stdin, ``programs`` the programs that run code or write what the
command does not name (asking a program's card first, ``bash/programs``). It imports
``bash.model``, ``parsing/`` (to walk the code a program runs) and ``programs/``, never
``walker``.
"""
