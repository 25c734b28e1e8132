"""``python -m bodega``: the ``bodega`` command, importing nothing from the current folder.

``python -m`` puts the current folder first on ``sys.path`` (the installed ``bodega`` script does
not), so a ``yaml.py`` or a ``py:`` plug-in module lying there would be imported in place of the
real one. It is taken off before the command loads anything; name a plug-in by its file
(``py:./mine.py:build``) or put its folder on ``PYTHONPATH`` on purpose.
"""
import os
import sys


def without_current_folder(path: list[str], current: str) -> list[str]:
    """``path`` less its first entry when that is the current folder (``""`` or its absolute name)."""
    return path[1:] if path and path[0] in ("", current) else path


if __name__ == "__main__":
    sys.path[:] = without_current_folder(sys.path, os.getcwd())
    from bodega.cli import main

    sys.exit(main())
