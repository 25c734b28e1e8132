"""Cell keys follow the code that computes results, and ignore edits that cannot change one."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import bodega
import bodega.experiments.cells as cells
from bodega.experiments import load_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.hashing import HashCache, python_code_sha256, result_code_sha256

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = Path(bodega.__file__).parent
GRIDS = ("parameters/grid_demo.yaml", "parameters/grid_cpu.yaml")

MODULE = '''"""Module docstring."""


def score(a, b):
    """Why this is computed so."""
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
    for relative, text in {"victims/bilstm.py": MODULE, "report/tables.py": MODULE, "tasks.py": MODULE}.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_docstrings_comments_and_layout_do_not_change_the_code_hash(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(MODULE)
    before = python_code_sha256(path)
    path.write_text(MODULE.replace("Why this is computed so.", "Reworded.").replace("# product, as BODEGA", "")
                    .replace("a * b", "a  *  b").replace('"""Module docstring."""\n', ""))
    assert python_code_sha256(path) == before
    path.write_text(MODULE.replace("a * b", "a * b + 1"))
    assert python_code_sha256(path) != before


def test_result_code_changes_and_render_code_does_not(tmp_path):
    root = _package(tmp_path / "bodega")
    before = result_code_sha256(root)
    (root / "report" / "tables.py").write_text(MODULE.replace("a * b", "a + b"))
    assert result_code_sha256(root) == before
    (root / "victims" / "bilstm.py").write_text(MODULE.replace("a * b", "a + b"))
    changed = result_code_sha256(root)
    assert changed != before
    (root / "victims" / "new_module.py").write_text("X = 1\n")
    assert result_code_sha256(root) not in (before, changed)


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


def test_an_edit_to_an_attackers_search_reruns_its_attack_cells_and_keeps_the_victims(package_copy):
    copy, before = package_copy
    search = copy / "attacks" / "search.py"
    search.write_text(search.read_text(encoding="utf-8") + "\n_EDITED = True\n", encoding="utf-8")
    after = _keys(copy)
    pwws = [name for name in before if "-PWWS-" in name]
    assert pwws and all(after[name] != before[name] for name in pwws)
    victims = [name for name in before if name.count("-") == 1]  # <grid>/<TASK>-<VICTIM>
    assert victims and all(after[name] == before[name] for name in victims)


def test_an_edit_to_training_reruns_the_victims(package_copy):
    copy, before = package_copy
    training = copy / "victims" / "training.py"
    training.write_text(training.read_text(encoding="utf-8") + "\n_EDITED = True\n", encoding="utf-8")
    after = _keys(copy)
    victims = [name for name in before if name.count("-") == 1]
    assert victims and all(after[name] != before[name] for name in victims)
