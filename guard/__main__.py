"""``python -m guard`` is ``pi-guard``."""

from guard._cli import run

if __name__ == "__main__":
    run()
