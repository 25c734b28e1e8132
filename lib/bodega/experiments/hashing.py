"""Content hashes that decide whether a grid cell must run again.

A cell's key is the sha256 of a canonical JSON of its inputs: hashes of the data files, of the
victim directory (weights + config), of the stage notebook's source (code and markdown, not
outputs, so re-committing executed outputs does not invalidate results), of the library code that
computes results and the versions of the packages it calls, and the cell's parameters.
"""
from __future__ import annotations

import ast
import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

import nbformat

from bodega.layout import CELL_MARKER
from bodega.io import file_sha256

MARKER = CELL_MARKER
"""The file a finished (or running) cell leaves in its output directory; excluded from tree hashes."""

def tree_sha256(root: str | Path, exclude: tuple[str, ...] = (MARKER,)) -> str:
    """Hash every file under ``root`` (relative path + content), skipping markers and hidden files."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"cannot hash {root}: not a directory")
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root)
        if relative.name in exclude or any(part.startswith(".") for part in relative.parts):
            continue
        digest.update(str(relative.as_posix()).encode() + b"\0" + file_sha256(path).encode() + b"\n")
    return digest.hexdigest()


def notebook_source_sha256(path: str | Path) -> str:
    """Hash the cell types and sources of a notebook, ignoring outputs and metadata."""
    notebook = nbformat.read(str(path), as_version=4)
    canonical = [[cell.cell_type, cell.source] for cell in notebook.cells]
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


def key_of(inputs: dict[str, Any]) -> str:
    """The cell key: sha256 of the inputs as canonical JSON."""
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


# Parts of the package that only orchestrate or render: editing them cannot change a result.
# Display and notebook glue live in them (``report``: tables, figures, diffs; ``notebook``: the stage
# notebooks' paths and on-demand data and victim; ``paths``: the project root and portable paths), so
# a figure's bins or a table's rounding re-runs nothing. No grid cell runs AtomEval.
# ``profiles.py`` is mostly prose (the deviations); what a profile makes the code do enters each
# cell's inputs as data instead (:func:`profile_settings`), so rewording a deviation re-runs nothing.
# ``api.py`` wraps a user's classifier and calls the runner; ``stages`` holds copies of the stage notebooks
# (hashed as notebooks); ``published`` the paper's values; ``errors.py`` exception types.
NOT_RESULT_CODE = ("experiments", "report", "notebook", "commands", "atomeval", "cli.py", "__main__.py",
                   "paths.py", "profiles.py", "api.py", "stages", "published", "errors.py")

VICTIM_UNUSED_CODE = ("attacks", "scoring", "mlm")
"""Subpackages training never calls: a fix to an attacker or a scorer keeps the trained victims."""

# Third-party packages whose version can change a number (models, tokenisers, lexicons, metrics).
RESULT_PACKAGES = ("torch", "transformers", "tokenizers", "peft", "sentence-transformers", "OpenAttack",
                   "nltk", "spacy", "Levenshtein", "numpy", "safetensors", "gguf", "bitsandbytes")


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


def python_code_sha256(path: str | Path) -> str:
    """Hash a module's syntax tree without docstrings, comments or layout: only edits to what runs count."""
    tree = _strip_docstrings(ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path)))
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def result_code_sha256(package_root: str | Path | None = None, unused: tuple[str, ...] = ()) -> str:
    """One hash of the ``bodega`` code that computes results, and of the versions of the packages it calls.

    A change to a victim, attack, scorer or data converter therefore re-runs the cells it may affect;
    a change to the grid runner, the report code or a docstring does not. ``unused`` names further
    top-level parts the cell never calls.
    """
    root = Path(package_root) if package_root else Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in NOT_RESULT_CODE + unused or "__pycache__" in relative.parts:
            continue
        digest.update(relative.as_posix().encode() + b"\0" + python_code_sha256(path).encode() + b"\n")
    for package in RESULT_PACKAGES:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{package}=={version}\n".encode())
    return digest.hexdigest()


class HashCache:
    """Memoises file and code hashes within one grid run (data files and code are shared by many cells).

    ``package_root`` is the ``bodega`` folder whose code the keys hash (default: the one imported).
    """

    def __init__(self, package_root: str | Path | None = None) -> None:
        self._files: dict[tuple[str, float, int], str] = {}
        self._code: dict[tuple[str, ...], str] = {}
        self.package_root = package_root

    def file(self, path: str | Path) -> str:
        """A data file's sha256, read once per (path, modification time, size)."""
        path = Path(path).resolve()
        stat = path.stat()
        key = (str(path), stat.st_mtime, stat.st_size)
        if key not in self._files:
            self._files[key] = file_sha256(path)
        return self._files[key]

    def notebook(self, path: str | Path) -> str:
        """A stage notebook's source hash (:func:`notebook_source_sha256`)."""
        return notebook_source_sha256(path)

    def code(self, unused: tuple[str, ...] = ()) -> str:
        """The result code's hash (:func:`result_code_sha256`), leaving out the parts ``unused`` names."""
        if unused not in self._code:
            self._code[unused] = result_code_sha256(self.package_root, unused)
        return self._code[unused]


def profile_settings(name: str, victim: str | None = None, task: str | None = None) -> dict[str, Any]:
    """What a profile makes the code do, as data for a cell key: the model of each role, the hub switch
    and, for one victim, its training settings. Its deviations (prose) are left out."""
    from dataclasses import asdict

    from bodega.profiles import get_profile

    profile = asdict(get_profile(name))
    profile.pop("deviations")
    if victim is not None:
        profile["epochs"] = get_profile(name).epochs_for(task, victim)
        profile["models"] = {victim: profile["models"].get(victim)}
    return profile
