"""``python -I -m guard._warm serve``: the launcher pi spawns (:mod:`guard._warm.launch`);
``python -I -m guard._warm --fork-server HOME IDLE``: a home's fork server, as a launcher
starts it (:mod:`guard._warm.server`)."""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["--fork-server"]:
        from guard._warm.server import main as serve_home

        serve_home(sys.argv[2:])
    else:
        from guard._warm.launch import main

        main(sys.argv[1:])
