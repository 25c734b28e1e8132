"""The project root, and portable paths in results files: no absolute path of the machine that wrote them.

Neither changes a number, so cell keys do not hash this module (see ``experiments/hashing.py``).

A results file or a book data file is read on other machines (a cluster node, a fresh clone), so
an absolute path in it is at best noise and at worst a lookup that fails there. Two kinds of
absolute path are rewritten, inside string values only (numbers, keys and every other text are
left as they are):

- a packaged resource (a path through ``site-packages/<package>/<subdir>`` of a
  :data:`bodega.resources.SPECS` role) becomes ``resource:<role>``, as ``victim.json`` now stores
  it; loading resolves the role again on the reading machine;
- a resource built once into the cache (``<cache>/bodega/<role>/...``, e.g. a decoder converted from
  GGUF, whose tokenizer trims the texts) becomes ``resource:<role>`` as well;
- a path under the project ``root`` becomes relative to it (POSIX form);
- any other path under the home folder (a traceback's Python installation, say) starts with ``~``.

Older files, written before their writers stored portable paths, are repaired with
``bodega portable-paths FILE... --root <the project root of the machine that wrote them>``.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

from bodega.errors import BodegaError, MissingFileError
from bodega.io import atomic_write_json, atomic_write_text

# An absolute path starts at a "/" that no word, dot, dash, colon or other slash precedes
# (so "1/2", "a/b" and "http://x/y" are not paths) and runs to whitespace, a quote or a bracket.
_ABSOLUTE = re.compile(r"(?<![\w.:/~-])/[^\s\"'<>()\[\]{},;|]+")


def project_root(start: str | Path = ".") -> Path:
    """The checkout holding pyproject.toml and lib/bodega, from ``start`` upwards (notebooks run in notebooks/);
    outside a checkout (the package installed with pip, run in a folder of the user's) ``start`` itself, so that
    ``data/`` and ``results/`` are read and written there."""
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").exists() and (folder / "lib" / "bodega").exists():
            return folder
    return here


RAW_ENV = "BODEGA_RAW"  # the folder of the raw corpora (PR2/, HN/, FC/, RD/), where no option names one


def raw_root(explicit: str | Path | None = None) -> Path:
    """The folder holding the raw corpora: ``explicit`` (a command's option, a grid's ``raw_root:``, a notebook's
    parameter) where given, else ``$BODEGA_RAW``. There is no default: the corpora are not part of the package."""
    if explicit:
        return Path(explicit)
    if os.environ.get(RAW_ENV):
        return Path(os.environ[RAW_ENV])
    raise MissingFileError(f"no raw corpora folder: pass --raw-root (a grid file: raw_root:) or set {RAW_ENV} to the "
                           "folder holding PR2/, HN/, FC/ and RD/ (`bodega data fetch` puts each corpus there)")


def _resource_of(path: PurePosixPath) -> tuple[str, PurePosixPath] | None:
    """(role, path inside it) when ``path`` lies in an installed package of a resource role."""
    from bodega.resources import SPECS

    parts = path.parts
    for spec in SPECS.values():  # SPECS order decides between roles sharing one package
        if spec.package is None:
            continue
        wanted = ("site-packages", spec.package, *PurePosixPath(spec.package_subdir).parts)
        for start in range(len(parts) - len(wanted) + 1):
            if parts[start:start + len(wanted)] == wanted:
                return spec.role, PurePosixPath(*parts[start + len(wanted):])
    return None


def _built_resource_of(path: PurePosixPath) -> str | None:
    """The role of a resource built into the cache (``.../.cache/bodega/<role>/...`` or under
    :func:`bodega.resources.cache_dir`); the folder inside it is the role's own business."""
    from bodega.resources import SPECS, cache_dir

    parts = path.parts
    for start in range(len(parts) - 2):
        if parts[start:start + 2] == (".cache", "bodega") and parts[start + 2] in SPECS:
            return parts[start + 2]
    cache = PurePosixPath(cache_dir().as_posix())
    if cache in path.parents:
        role = path.relative_to(cache).parts[0]
        return role if role in SPECS else None
    return None


def portable_path(path: str, root: str | Path) -> str:
    """One absolute path as ``resource:<role>[/inside]``, as relative to ``root``, as ``~/...`` under the home
    folder, or unchanged."""
    pure = PurePosixPath(path)
    built = _built_resource_of(pure)
    if built is not None:
        return f"resource:{built}"
    found = _resource_of(pure)
    if found is not None:
        role, inside = found
        return f"resource:{role}" + ("" if str(inside) == "." else f"/{inside}")
    base = PurePosixPath(Path(root).as_posix())
    if pure == base:
        return "."
    if base in pure.parents:
        return pure.relative_to(base).as_posix()
    home = PurePosixPath(Path.home().as_posix())
    if len(home.parts) > 1 and home in pure.parents:  # a home of "/" would swallow every path
        return "~/" + pure.relative_to(home).as_posix()
    return path


def portable_text(text: str, root: str | Path) -> str:
    """``text`` with each absolute path in it made portable (see :func:`portable_path`)."""
    return _ABSOLUTE.sub(lambda match: portable_path(match.group(0), root), text)


def portable(value: Any, root: str | Path) -> Any:
    """A copy of a JSON-like value whose string values hold no resource or project path of a machine."""
    if isinstance(value, str):
        return portable_text(value, root)
    if isinstance(value, dict):
        return {key: portable(item, root) for key, item in value.items()}
    if isinstance(value, list):
        return [portable(item, root) for item in value]
    return value


def rewrite_json_file(path: str | Path, root: str | Path) -> bool:
    """Rewrite a JSON file in place with portable paths; True when something changed."""
    path = Path(path)
    try:
        before = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise BodegaError(f"{path}: not a JSON file ({error}); only JSON files can be rewritten") from error
    after = portable(before, root)
    if after == before:
        return False
    # Rewrite the text itself where that gives the same values, so that a file keeps its layout (an
    # executed notebook stays as nbformat wrote it); otherwise write the rewritten values.
    text = portable_text(path.read_text(encoding="utf-8"), root)
    try:
        same = json.loads(text) == after
    except json.JSONDecodeError:
        same = False
    if same:
        atomic_write_text(path, text)
    else:
        atomic_write_json(path, after)
    return True
