"""The stage notebooks the grid executes (data, victim, attack), shipped with the package.

In a checkout these files are links to ``notebooks/``; in an installed wheel they are copies,
so ``bodega grid run`` works in any folder, without the repository.
"""
from __future__ import annotations

from pathlib import Path

from bodega.errors import MissingFileError

NAMES = ("prepare_data.ipynb", "train_victim.ipynb", "attack.ipynb")


def stage_notebook(name: str) -> Path:
    """The installed copy of stage notebook ``name`` (one of :data:`NAMES`)."""
    path = Path(__file__).resolve().parent / name
    if name not in NAMES or not path.is_file():
        raise MissingFileError(f"no stage notebook {name!r} installed with the package (it has {', '.join(NAMES)}); "
                               "set notebooks: in the grid file to your own copies")
    return path
