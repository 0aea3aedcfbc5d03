"""``python -I -m guard._warm serve``: the launcher pi spawns (see :mod:`guard._warm.launch`)."""

import sys

from guard._warm.launch import main

if __name__ == "__main__":
    main(sys.argv[1:])
