"""Cell keys follow the code that computes results, and ignore edits that cannot change one."""
from __future__ import annotations

import ast
import io
import json
import shutil
import tokenize
from pathlib import Path

import pytest

import bodega
import bodega.experiments.cells as cells
from bodega.errors import BodegaError
from bodega.experiments import load_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.hashing import (INJECTED, LOG_OBJECTS, ORCHESTRATION, HashCache, attack_entries,
                                       import_closure, module_file, notebook_source_sha256, python_code_sha256,
                                       result_code_sha256, victim_entries)

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


OUTSIDE_EVERY_KEY = ("bodega.layout", "bodega.records", "bodega.registry", "bodega.attacks.run_folder",
                     "bodega.attacks.user")
"""I/O, file names, records, name look-ups and the run folder: edits to them must rerun nothing."""

VIA_ORCHESTRATION = {
    "bodega.identity": "a plug-in's identity keys caches and resume checks (plugins); a plug-in attacker's own code "
                       "enters its cells as attacker_code"}
"""The result modules that only an ORCHESTRATION module imports for some cell, and why that cell runs none of
them: any other such module would be result code that a key leaves out."""


def _entries() -> set[tuple[str, ...]]:
    """The code entries of every cell of the demo and cpu grids (victim kinds x attackers)."""
    found = set()
    for grid in GRIDS:
        spec = load_grid(ROOT / grid)
        for victim in spec.victims:
            found.add(victim_entries(victim))
            found.update(attack_entries(attacker, victim) for attacker in spec.attackers)
    return found


def _result_modules(root: Path) -> set[str]:
    return {module for entries in _entries() for module in import_closure(root, entries)}


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(("bodega", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def test_every_orchestration_module_exists_and_hides_no_result_code(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert all(module_file(PACKAGE, module) for module in ORCHESTRATION), "ORCHESTRATION names a module that is gone"
    assert set(OUTSIDE_EVERY_KEY) <= set(ORCHESTRATION)
    hidden = {}
    for entries in _entries():
        with monkeypatch.context() as entered:
            entered.setattr("bodega.experiments.hashing.ORCHESTRATION", ())
            everything = set(import_closure(PACKAGE, entries))
        for module in everything - set(import_closure(PACKAGE, entries)) - set(ORCHESTRATION):
            hidden.setdefault(module, entries[0])
    assert set(hidden) <= set(VIA_ORCHESTRATION), (
        f"result code reached only through ORCHESTRATION modules: {sorted(set(hidden) - set(VIA_ORCHESTRATION))}; "
        "move the part of the orchestration module that computes a result into a module of its own")


def test_an_inert_statement_in_every_module_outside_the_result_code_moves_no_key(package_copy):
    copy, before = package_copy
    (copy / "attacks" / "searches" / "beam.py").write_text("def beam_search(state):\n    return None\n")
    (copy / "helpers.py").write_text("SPEED = 2\n")
    result = _result_modules(copy)
    outside = {_module_name(copy, path): path for path in sorted(copy.rglob("*.py"))
               if _module_name(copy, path) not in result}
    assert set(OUTSIDE_EVERY_KEY) | set(ORCHESTRATION) <= set(outside)
    assert "bodega.attacks.run_inputs" in result and "bodega.victims.external" in result
    for path in outside.values():
        path.write_text(path.read_text(encoding="utf-8") + "\n_EDITED = True\n", encoding="utf-8")
    assert len(outside) > 80
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


STAGES = ("prepare_data", "train_victim", "attack")
"""The stage notebooks a grid executes (the data stage enters the keys through the data it writes)."""


@pytest.fixture
def notebook_copy(tmp_path, monkeypatch):
    """A project folder with a copy of the notebooks to edit (the grids name them relative to the working folder),
    and the grids' keys as they stand for it."""
    project = tmp_path / "project"
    shutil.copytree(ROOT / "notebooks", project / "notebooks", ignore=shutil.ignore_patterns("*.py", "*.cfg"))
    monkeypatch.setattr(cells, "victim_identity", lambda out_dir: "weights:fixed")
    monkeypatch.chdir(ROOT)
    checkout = _keys(PACKAGE)
    monkeypatch.chdir(project)
    before = _keys(PACKAGE)
    assert before == checkout
    return project / "notebooks", before


def _cells(path: Path) -> tuple[dict, list[dict]]:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return notebook, notebook["cells"]


def _write(path: Path, notebook: dict) -> None:
    path.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _reword_comments(source: str) -> tuple[str, int]:
    """``source`` with every comment said otherwise and a comment line added at its top; the count."""
    lines = source.splitlines(keepends=True)
    comments = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type == tokenize.COMMENT]
    for token in reversed(comments):
        (row, start), (_, end) = token.start, token.end
        lines[row - 1] = lines[row - 1][:start] + "# said otherwise" + lines[row - 1][end:]
    return "# a comment added\n" + "".join(lines), len(comments)


def test_rewording_every_markdown_cell_and_comment_of_every_stage_notebook_moves_no_key(notebook_copy):
    folder, before = notebook_copy
    reworded = {}
    for stage in STAGES:
        notebook, cells_ = _cells(folder / f"{stage}.ipynb")
        markdown = comments = 0
        for number, cell in enumerate(cells_):
            if cell["cell_type"] == "markdown":
                cell["source"], markdown = f"Words said otherwise ({number}).", markdown + 1
            elif cell["cell_type"] == "code":
                cell["source"], count = _reword_comments("".join(cell["source"]))
                comments += count
        _write(folder / f"{stage}.ipynb", notebook)
        reworded[stage] = (markdown, comments)
    assert all(markdown and comments for markdown, comments in reworded.values()), reworded
    assert _keys(PACKAGE) == before


def _first_work_cell(cells_: list[dict]) -> dict:
    return next(c for c in cells_ if c["cell_type"] == "code" and "parameters" not in c["metadata"].get("tags", []))


@pytest.mark.parametrize("stage, kind", [("attack", "attack"), ("train_victim", "victim")])
def test_a_real_change_in_a_stage_notebooks_code_moves_its_stages_keys(notebook_copy, stage, kind):
    folder, before = notebook_copy
    notebook, cells_ = _cells(folder / f"{stage}.ipynb")
    cell = _first_work_cell(cells_)
    cell["source"] = "".join(cell["source"]) + "\nseed = seed + 1\n"
    _write(folder / f"{stage}.ipynb", notebook)
    attacks = {name for name in before if name.count("-") > 1}
    stage_cells = attacks if kind == "attack" else set(before) - attacks
    assert stage_cells and _moved(before, _keys(PACKAGE)) == stage_cells


def _notebook(tmp_path: Path, *sources: str, tags: tuple[str, ...] = ()) -> Path:
    import nbformat

    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("A page.")])
    notebook.cells += [nbformat.v4.new_code_cell(source, metadata={"tags": list(tags)}) for source in sources]
    path = tmp_path / "stage.ipynb"
    nbformat.write(notebook, str(path))
    return path


def _sha(tmp_path: Path, *sources: str) -> str:
    return notebook_source_sha256(_notebook(tmp_path, *sources))


def test_a_notebooks_hash_strips_its_code_as_a_modules_and_keeps_magics_as_text(tmp_path):
    code = ('import logging\nlog = logging.getLogger("x")\n%time y = 2\nif y:\n    !echo hi\nlog.info("done")\n'
            'z = y * 3  # why\n')
    before = notebook_source_sha256(_notebook(tmp_path, code))
    same = code.replace('"done"', '"finished"').replace("# why", "# because").replace("y * 3", "y  *  3")
    assert notebook_source_sha256(_notebook(tmp_path, "# a new comment\n" + same)) == before
    for old, new in (("y * 3", "y * 4"), ("%time", "%timeit"), ("!echo hi", "!echo ho")):
        assert notebook_source_sha256(_notebook(tmp_path, code.replace(old, new))) != before, new
    bash = "%%bash\necho hi\n"
    assert _sha(tmp_path, bash) != _sha(tmp_path, bash + "ls\n")
    assert _sha(tmp_path, "x = 1", "", "# a cell of comments") == _sha(tmp_path, "x = 1")
    with pytest.raises(BodegaError, match=r"stage.ipynb, cell 2: not Python"):
        notebook_source_sha256(_notebook(tmp_path, "files = !ls"))


def test_papermills_injected_cell_is_left_out_of_the_hash_and_of_every_committed_notebook(tmp_path):
    plain = notebook_source_sha256(_notebook(tmp_path, "x = 1"))
    path = _notebook(tmp_path, "x = 1")
    import nbformat

    notebook = nbformat.read(str(path), 4)
    notebook.cells.insert(1, nbformat.v4.new_code_cell("# Parameters\nx = 2\n", metadata={"tags": [INJECTED]}))
    nbformat.write(notebook, str(path))
    assert notebook_source_sha256(path) == plain
    committed = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted((PACKAGE / "stages").glob("*.ipynb"))
    assert len(committed) >= 10
    injected = [p.relative_to(ROOT).as_posix() for p in committed
                if any(INJECTED in c["metadata"].get("tags", []) for c in _cells(p)[1])]
    assert not injected, f"{injected}: papermill's injected-parameters cell was committed; delete it"
