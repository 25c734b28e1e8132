"""Cell keys follow the code that computes results, and ignore edits that cannot change one."""
from __future__ import annotations

from pathlib import Path

from bodega.experiments.hashing import python_code_sha256, result_code_sha256

MODULE = '''"""Module docstring."""


def score(a, b):
    """Why this is computed so."""
    return a * b  # product, as BODEGA
'''


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
    before = result_code_sha256(str(root))
    (root / "report" / "tables.py").write_text(MODULE.replace("a * b", "a + b"))
    result_code_sha256.cache_clear()
    assert result_code_sha256(str(root)) == before
    (root / "victims" / "bilstm.py").write_text(MODULE.replace("a * b", "a + b"))
    result_code_sha256.cache_clear()
    changed = result_code_sha256(str(root))
    assert changed != before
    (root / "victims" / "new_module.py").write_text("X = 1\n")
    result_code_sha256.cache_clear()
    assert result_code_sha256(str(root)) not in (before, changed)
    result_code_sha256.cache_clear()


def test_the_installed_package_hash_is_stable_within_a_process():
    assert result_code_sha256() == result_code_sha256()
    assert len(result_code_sha256()) == 64
