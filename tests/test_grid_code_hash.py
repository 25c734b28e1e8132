"""Cell keys follow the code that computes results, and ignore edits that cannot change one."""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import bodega
import bodega.experiments.cells as cells
from bodega.experiments import load_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.hashing import (LOG_OBJECTS, ORCHESTRATION, HashCache, import_closure,
                                       python_code_sha256, result_code_sha256)

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(bodega.__file__).parent
GRIDS = ("parameters/grid_demo.yaml", "parameters/grid_cpu.yaml")

MODULE = '''"""Module docstring."""
import logging
import warnings

log = logging.getLogger(__name__)


def score(a, b):
    """Why this is computed so."""
    log.info("scoring %s", a)
    if a is None:
        raise ValueError(f"a is missing for {b}: pass one")
    assert b, "b must be given"
    warnings.warn("slow")
    return a * b  # product, as BODEGA
'''

# Display lines a reader may well want to change: they must re-run nothing.
DISPLAY_EDITS = {"report/run_views.py": ("bins=20", "bins=30"),
                 "report/training_history.py": ('round(h["loss"], 4)', 'round(h["loss"], 3)'),
                 "report/semantic_agreement.py": ('{r.auc_semantic:.3f} [', '{r.auc_semantic:.2f} ['),
                 "notebook/__init__.py": ('"display.max_rows": 500', '"display.max_rows": 100')}
# Every module of the layers keys do not hash, edited (a statement appended), must re-run nothing either.
DISPLAY_LAYERS = ("report", "notebook", "paths.py")


def _package(root: Path) -> Path:
    """A toy ``bodega``: a victim module that imports ``tasks``; ``report/tables.py`` nobody imports."""
    files = {"__init__.py": "", "victims/__init__.py": "", "report/__init__.py": "",
             "victims/bilstm.py": "from bodega.tasks import score\n" + MODULE, "report/tables.py": MODULE,
             "tasks.py": MODULE}
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_docstrings_comments_layout_logs_and_messages_do_not_change_the_code_hash(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(MODULE)
    before = python_code_sha256(path)
    path.write_text(MODULE.replace("Why this is computed so.", "Reworded.").replace("# product, as BODEGA", "")
                    .replace("a * b", "a  *  b").replace('"""Module docstring."""\n', "")
                    .replace('"scoring %s", a', '"now scoring %r", a').replace("pass one", "give one")
                    .replace("b must be given", "b!").replace('warnings.warn("slow")', "")
                    .replace("log.info(", "logging.getLogger(__name__).debug("))
    assert python_code_sha256(path) == before
    for old, new in (("a * b", "a * b + 1"), ("ValueError", "KeyError"), ("assert b,", "assert a,"),
                     ('ValueError(f"a is missing for {b}: pass one")', 'ValueError(f"a is missing for {b}", b)')):
        path.write_text(MODULE.replace(old, new))
        assert python_code_sha256(path) != before, new


def test_the_closure_follows_imports_and_leaves_the_rest(tmp_path):
    root = _package(tmp_path / "bodega")
    entries = ("bodega.victims.bilstm",)
    assert sorted(import_closure(root, entries)) == ["bodega", "bodega.tasks", "bodega.victims",
                                                     "bodega.victims.bilstm"]
    before = result_code_sha256(entries, root)
    (root / "report" / "tables.py").write_text(MODULE.replace("a * b", "a + b"))
    (root / "victims" / "new_module.py").write_text("X = 1\n")
    assert result_code_sha256(entries, root) == before
    (root / "tasks.py").write_text(MODULE.replace("a * b", "a + b"))
    changed = result_code_sha256(entries, root)
    assert changed != before
    bilstm = root / "victims" / "bilstm.py"
    bilstm.write_text(bilstm.read_text().replace("import score", "import score\n\ndef later():\n"
                                                 "    from bodega.victims.new_module import X\n"))
    assert result_code_sha256(entries, root) not in (before, changed)
    assert "bodega.victims.new_module" in import_closure(root, entries)


class _FixedData(HashCache):
    """Hashes the code of ``package_root`` as the grid does; data files stand for themselves (their hash is
    not what these tests vary, and the corpora need not be there)."""

    def file(self, path) -> str:
        return str(path)


def _keys(package_root: Path) -> dict[str, str]:
    """The key of every victim and attack cell of the demo and cpu grids, code hashed from ``package_root``."""
    hashes, keys = _FixedData(package_root), {}
    for grid in GRIDS:
        spec = load_grid(ROOT / grid)
        for victim in victim_cells(spec, hashes):
            keys[f"{spec.name}/{victim.name}"] = victim.key
            keys.update((f"{spec.name}/{cell.name}", cell.key) for cell in attack_cells(spec, victim, hashes))
    return keys


@pytest.fixture
def package_copy(tmp_path, monkeypatch):
    """A copy of the ``bodega`` source to edit, and the grids' keys as they stand for it."""
    monkeypatch.chdir(ROOT)  # the grids name their notebooks relative to the project
    monkeypatch.setattr(cells, "victim_identity", lambda out_dir: "weights:fixed")  # no trained victim needed
    copy = tmp_path / "bodega"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy, _keys(copy)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{path}: the line to edit ({old!r}) is gone; update the test"
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_copy_keys_like_the_installed_package(package_copy):
    copy, keys = package_copy
    assert keys == _keys(PACKAGE)
    assert any(name.startswith("cpu/") for name in keys) and any(name.startswith("demo/") for name in keys)


def test_display_edits_leave_every_cell_key_of_the_demo_and_cpu_grids(package_copy):
    copy, before = package_copy
    for relative, (old, new) in DISPLAY_EDITS.items():
        _edit(copy / relative, old, new)
    for layer in DISPLAY_LAYERS:
        modules = [copy / layer] if layer.endswith(".py") else sorted((copy / layer).rglob("*.py"))
        for module in modules:
            module.write_text(module.read_text(encoding="utf-8") + "\n_EDITED = True\n", encoding="utf-8")
    assert _keys(copy) == before


def _moved(before: dict[str, str], after: dict[str, str]) -> set[str]:
    return {name for name in before if after[name] != before[name]}


def test_an_operator_changed_in_one_search_reruns_that_attackers_cells_only(package_copy):
    copy, before = package_copy
    _edit(copy / "attacks" / "searches" / "pwws.py", "weights /= weights.sum()", "weights *= weights.sum()")
    pwws = {name for name in before if "-PWWS-" in name}
    assert pwws and _moved(before, _keys(copy)) == pwws


def test_a_new_module_outside_the_closure_and_orchestration_edits_move_nothing(package_copy):
    copy, before = package_copy
    (copy / "attacks" / "searches" / "beam.py").write_text("def beam_search(state):\n    return None\n")
    (copy / "helpers.py").write_text("SPEED = 2\n")
    for module in ORCHESTRATION:
        path = copy.joinpath(*module.split(".")[1:]).with_suffix(".py")
        path.write_text(path.read_text(encoding="utf-8") + "\n_EDITED = True\n", encoding="utf-8")
    assert _keys(copy) == before


def test_a_new_import_into_the_closure_moves_the_keys_of_the_cells_that_run_it(package_copy):
    copy, before = package_copy
    (copy / "attacks" / "searches" / "beam.py").write_text("WIDTH = 3\n")
    uses_beam = "def _width():\n    from bodega.attacks.searches.beam import WIDTH\n    return WIDTH\n\n\n"
    _edit(copy / "attacks" / "searches" / "genetic.py", "def genetic_search(", uses_beam + "def genetic_search(")
    genetic = {name for name in before if "-Genetic-" in name}
    assert genetic and _moved(before, _keys(copy)) == genetic


def _is_log_call(node: ast.AST) -> bool:
    owner = node.func if isinstance(node, ast.Call) else None
    while isinstance(owner, (ast.Attribute, ast.Call)):
        owner = owner.func if isinstance(owner, ast.Call) else owner.value
    return isinstance(owner, ast.Name) and owner.id in LOG_OBJECTS


def _prose(tree: ast.AST) -> list[ast.AST]:
    """Every docstring, and every string or f-string in a log call, a raised error's arguments or an assert's
    message: the nodes rewording may touch."""
    found = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body \
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            found.append(body[0].value)
        parts = []
        if isinstance(node, ast.Expr) and _is_log_call(node.value):
            parts = [*node.value.args, *(k.value for k in node.value.keywords)]
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            parts = [*node.exc.args, *(k.value for k in node.exc.keywords)]
        elif isinstance(node, ast.Assert) and node.msg is not None:
            parts = [node.msg]
        found += [n for part in parts for n in ast.walk(part)
                  if isinstance(n, ast.JoinedStr) or (isinstance(n, ast.Constant) and isinstance(n.value, str))]
    return found


def _reword(path: Path) -> int:
    """Replace every piece of prose in a module (:func:`_prose`) by other words and add a comment; the count."""
    source = path.read_bytes()
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    spans = sorted({(starts[n.lineno - 1] + n.col_offset, starts[n.end_lineno - 1] + n.end_col_offset)
                    for n in _prose(ast.parse(source))})
    outermost = [span for span in spans if not any(o[0] <= span[0] and span[1] <= o[1] and o != span for o in spans)]
    for start, end in reversed(outermost):
        source = source[:start] + b'"words said otherwise"' + source[end:]
    path.write_bytes(source + b"\n# a comment\n")
    return len(outermost)


def test_rewording_every_docstring_log_and_error_message_in_lib_moves_no_key(package_copy):
    copy, before = package_copy
    reworded = {path.relative_to(copy).as_posix(): _reword(path) for path in sorted(copy.rglob("*.py"))}
    assert sum(reworded.values()) > 1000 and reworded["attacks/runner.py"] > 20  # the whole library, runner included
    assert _keys(copy) == before


def test_an_edit_to_training_reruns_the_victims(package_copy):
    copy, before = package_copy
    training = copy / "victims" / "training.py"
    training.write_text(training.read_text(encoding="utf-8") + "\n_EDITED = True\n", encoding="utf-8")
    after = _keys(copy)
    victims = [name for name in before if name.count("-") == 1]
    assert victims and all(after[name] != before[name] for name in victims)
