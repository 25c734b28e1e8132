"""Content hashes that decide whether a grid cell must run again.

A cell's key is the sha256 of a canonical JSON of its inputs: hashes of the data files, of the
victim directory (weights + config), of the stage notebook's code cells (stripped as library modules are: no
markdown, outputs, comments, docstrings, log calls or messages, so rewording a page or re-committing executed
outputs reruns nothing), of the library modules the cell can execute (its import closure, without what only
reports or moves bytes) and the versions of the packages they call, and the cell's parameters.
"""
from __future__ import annotations

import ast
import hashlib
import json
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import nbformat

from bodega.errors import BodegaError
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


INJECTED = "injected-parameters"
"""The tag of the cell papermill writes with a run's parameters; it replaces any such cell of the notebook it
runs, so that cell's text never runs in a grid cell (the parameters enter each key as data)."""


def notebook_source_sha256(path: str | Path) -> str:
    """Hash what a stage notebook computes: its code cells, each stripped like a module
    (:func:`code_cell_sha256`); markdown, outputs, metadata, papermill's injected cell and code cells left empty
    (comments only) are left out."""
    notebook = nbformat.read(str(path), as_version=4)
    hashes = []
    for number, cell in enumerate(notebook.cells, 1):
        if cell.cell_type == "code" and INJECTED not in cell.get("metadata", {}).get("tags", []):
            hashes.append(code_cell_sha256(cell.source, f"{path}, cell {number}"))
    hashes = [sha for sha in hashes if sha != _code_sha256("")]
    return hashlib.sha256("\n".join(hashes).encode()).hexdigest()


def code_cell_sha256(source: str, where: str) -> str:
    """Hash a notebook code cell as :func:`python_code_sha256` hashes a module. IPython's own syntax is kept as
    text: a cell magic (``%%bash``) the whole cell, a line magic or shell line (``%time``, ``!pip``) that line;
    any other cell that is not Python is refused (``where`` names it), as its hash could not tell code from prose."""
    if source.lstrip().startswith("%%"):
        return hashlib.sha256(("cell magic\0" + source.strip()).encode()).hexdigest()
    try:
        return _code_sha256(source)
    except SyntaxError:
        pass  # IPython's syntax, or no code at all
    lines = [f"{line[:len(line) - len(line.lstrip())]}_ipython({line.strip()!r})"
             if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()]
    try:
        return _code_sha256("\n".join(lines))
    except SyntaxError as error:
        raise BodegaError(f"{where}: not Python (line {error.lineno}: {error.msg}); a stage notebook's code cells "
                          "must parse, IPython magics and shell lines each on a line of their own") from None


def key_of(inputs: dict[str, Any]) -> str:
    """The cell key: sha256 of the inputs as canonical JSON."""
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


ORCHESTRATION = ("bodega.io", "bodega.threads", "bodega.plugins", "bodega.data.corpora", "bodega.victims.cache",
                 "bodega.mlm.substitute_cache", "bodega.victims.reuse", "bodega.scoring.stream",
                 "bodega.scoring.interchange", "bodega.profiles", "bodega.paths", "bodega.layout", "bodega.records",
                 "bodega.registry", "bodega.attacks.run_folder", "bodega.attacks.user")
"""Modules a key's import closure never enters although result code imports them: they move bytes (files,
locks, caches, plug-ins, downloads, threads, the project's folders and file names, the typed records of its
files, a run folder's resume and lock, the loading of a user's attacker), never numbers. ``profiles`` is mostly
prose (the deviations); what a profile makes the code do enters each key as data (:func:`profile_settings`).
``registry`` only looks names up: a cell's key holds the canonical names the grid resolved (data), and the
modules registering a name's entry are in the closure, so the lookup's own code need not be.

The tests check that every module named here exists and that the modules they import which compute results
are in the closure through result code anyway: a pure part of one of these that computed a result would belong
in a module of its own, imported from here."""

# Third-party packages whose version can change a number (models, tokenisers, lexicons, metrics).
RESULT_PACKAGES = ("torch", "transformers", "tokenizers", "peft", "sentence-transformers", "OpenAttack",
                   "nltk", "spacy", "Levenshtein", "numpy", "safetensors", "gguf", "bitsandbytes")

LOG_OBJECTS = frozenset({"log", "logger", "logging", "warnings"})
"""Names whose method calls, as statements, only report (``log.info(...)``, ``warnings.warn(...)``)."""

PACKAGE = "bodega"
VICTIM_ENTRY = "bodega.victims.training"
"""Where a victim cell's code starts; the victim kind's own module is the other entry."""
ATTACK_ENTRY = "bodega.attacks.runner"
"""Where an attack cell's code starts (it scores too); :data:`ATTACK_INPUTS`, the attacker's recipe and the
victim kind's module are the other entries."""
ATTACK_INPUTS = "bodega.attacks.run_inputs"
"""What the attack stage attacks with (attacker, victim, rows): the run folder, outside every key, calls it."""


def _has_text(node: ast.AST) -> bool:
    return any(isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(n.value, str))
               for n in ast.walk(node))


def _is_log_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    owner = node.func.value if isinstance(node.func, ast.Attribute) else None
    while isinstance(owner, (ast.Attribute, ast.Call)):  # logging.getLogger(x).info(...)
        owner = owner.func if isinstance(owner, ast.Call) else owner.value
    return isinstance(owner, ast.Name) and owner.id in LOG_OBJECTS


def _is_docstring(statements: list) -> bool:
    return bool(statements) and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant) \
        and isinstance(statements[0].value.value, str)


class _WhatComputes(ast.NodeTransformer):
    """Drops what cannot change a result: docstrings, report-only calls (logging, warnings) as statements, the
    messages of raised errors (every argument of ``raise X(...)`` that holds text) and of asserts."""

    def generic_visit(self, node: ast.AST) -> ast.AST:
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and _is_docstring(body):
            node.body = body[1:]
        super().generic_visit(node)
        if isinstance(getattr(node, "body", None), list) and not node.body:
            node.body = [ast.Pass()]
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        return None if _is_log_call(node.value) else self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        if isinstance(node.exc, ast.Call):
            node.exc.args = [ast.Constant("") if _has_text(a) else a for a in node.exc.args]
            for keyword in node.exc.keywords:
                keyword.value = ast.Constant("") if _has_text(keyword.value) else keyword.value
        return self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        node.msg = None
        return self.generic_visit(node)


def python_code_sha256(path: str | Path) -> str:
    """Hash a module's syntax tree without what cannot change a result (:class:`_WhatComputes`), comments or
    layout: rewording a docstring, a log line or an error message moves no key."""
    return _code_sha256(Path(path).read_text(encoding="utf-8"))


@lru_cache(maxsize=4096)
def _code_sha256(source: str) -> str:
    tree = _WhatComputes().visit(ast.parse(source))
    return hashlib.sha256(ast.dump(tree, include_attributes=False).encode()).hexdigest()


def module_file(root: Path, module: str) -> Path | None:
    """The source file of ``bodega`` module ``module`` under package folder ``root`` (None: not a module there)."""
    path = root.joinpath(*module.split(".")[1:])
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(module: str, path: Path) -> set[str]:
    """Every ``bodega`` name a module imports, at module level or inside a function (``from a import b``
    gives ``a`` and ``a.b``, which may be a submodule); relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    return set(_imports(package, path.read_text(encoding="utf-8")))


@lru_cache(maxsize=4096)
def _imports(package: str, source: str) -> frozenset[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            source_module = ".".join(base + ([node.module] if node.module else []))
            names.update([source_module, *(f"{source_module}.{alias.name}" for alias in node.names)])
    return frozenset(name for name in names if name.split(".")[0] == PACKAGE)


def import_closure(root: str | Path, entries: tuple[str, ...]) -> dict[str, Path]:
    """The ``bodega`` modules that running ``entries`` can execute: their static import closure (packages'
    ``__init__`` included), not entering :data:`ORCHESTRATION`. Module name -> source file."""
    root, found, todo = Path(root), {}, list(entries)
    while todo:
        parts = todo.pop().split(".")
        for end in range(1, len(parts) + 1):
            module = ".".join(parts[:end])
            path = module_file(root, module)
            if module in found or module in ORCHESTRATION or parts[0] != PACKAGE or path is None:
                continue
            found[module] = path
            todo.extend(imported_modules(module, path))
    return found


def package_versions() -> list[str]:
    """``name==version`` of every package in :data:`RESULT_PACKAGES` (``absent`` when not installed)."""
    versions = []
    for package in RESULT_PACKAGES:
        try:
            versions.append(f"{package}=={metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package}==absent")
    return versions


def result_code_sha256(entries: tuple[str, ...], package_root: str | Path | None = None) -> str:
    """One hash of the ``bodega`` code that running ``entries`` can execute (:func:`import_closure`) and of
    the versions of the packages it calls.

    So an edit reruns exactly the cells whose code it touches: an attacker's search its attack cells, a
    victim kind's module its training and attack cells; a module no cell imports moves nothing.
    """
    root = Path(package_root) if package_root else Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for module, path in sorted(import_closure(root, entries).items()):
        digest.update(module.encode() + b"\0" + python_code_sha256(path).encode() + b"\n")
    digest.update("\n".join(package_versions()).encode())
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

    def code(self, entries: tuple[str, ...]) -> str:
        """The hash of the code ``entries`` run (:func:`result_code_sha256`), computed once per set of entries."""
        entries = tuple(sorted(set(entries)))
        if entries not in self._code:
            self._code[entries] = result_code_sha256(entries, self.package_root)
        return self._code[entries]


def victim_entries(kind: str) -> tuple[str, ...]:
    """The modules a training cell of victim ``kind`` starts from."""
    from bodega.victims.kinds import victim_module

    return VICTIM_ENTRY, victim_module(kind)


def attack_entries(attacker: str, kind: str) -> tuple[str, ...]:
    """The modules an attack cell of ``attacker`` against a victim of ``kind`` starts from."""
    from bodega.attacks.base import attacker_module

    return (ATTACK_ENTRY, ATTACK_INPUTS, attacker_module(attacker), *victim_entries(kind)[1:])


def profile_settings(name: str, victim: str | None = None, task: str | None = None) -> dict[str, Any]:
    """What a profile makes the code do, as data for a cell key: the model of each role, the hub switch
    and, for one victim, its training settings. Its deviations (prose) are left out."""
    from dataclasses import asdict

    from bodega.profiles import get_profile

    profile = asdict(get_profile(name))
    profile.pop("deviations")
    # How a victim trains enters its own cell; an attack cell sees it through the victim's weights hash.
    finetuning = get_profile(name).finetuning_for(victim) if victim is not None else "full"
    profile.pop("finetuning")
    if finetuning != "full":
        profile["finetuning"] = finetuning
    if victim is not None:
        profile["epochs"] = get_profile(name).epochs_for(task, victim)
        profile["models"] = {victim: profile["models"].get(victim)}
    return profile
