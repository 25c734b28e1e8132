"""``python -m bodega``: the ``bodega`` command."""
import sys

from bodega.cli import main

if __name__ == "__main__":
    sys.exit(main())
