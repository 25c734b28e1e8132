"""Layers point one way: every subpackage imports alone, and no two subpackages import each other.

The graph counts every import statement, those inside functions too: a lazy import is still a
dependency (``bodega.resources`` once imported ``bodega.mlm.causal`` inside a function, which
closed the circle resources -> mlm -> attacks -> resources).
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"

# Lower layers first; a subpackage may import only those before it. Subpackages not named here
# are still covered by the cycle test.
# AtomEval sits above victims and scoring (it trains its verifier and scores with them) and below the
# commands; it reads nothing of the report layer.
LAYERS = ("bodega.errors", "bodega.registry", "bodega.published", "bodega.stages", "bodega.io", "bodega.identity",
          "bodega.plugins", "bodega.layout", "bodega.tasks", "bodega.text", "bodega.profiles",
          "bodega.gguf_tokenizer", "bodega.resources", "bodega.paths", "bodega.data", "bodega.records",
          "bodega.scoring", "bodega.victims", "bodega.mlm", "bodega.attacks", "bodega.atomeval",
          "bodega.experiments", "bodega.report", "bodega.notebook", "bodega.api", "bodega.commands", "bodega.cli")


def _module_name(path: Path) -> str:
    parts = path.relative_to(LIB).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imported(path: Path, module: str | None = None) -> set[str]:
    """Absolute names of every module ``path`` (named ``module``) imports, relative imports resolved."""
    module = module or _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)  # "from bodega import mlm"
    return found


def layer_of(module: str) -> str | None:
    """``bodega.<first part>`` for the bodega package, None for anything else."""
    parts = module.split(".")
    if parts[0] == "bodega" and len(parts) > 1:
        return ".".join(parts[:2])
    return None


def known_layers() -> set[str]:
    return {layer_of(_module_name(p)) for p in LIB.rglob("*.py")} - {None}


def layer_graph() -> dict[str, set[str]]:
    """Which subpackage imports which, from the source of every module under lib/."""
    known = known_layers()
    graph: dict[str, set[str]] = {}
    for path in LIB.rglob("*.py"):
        source = layer_of(_module_name(path))
        if source is None:
            continue
        targets = {layer_of(name) for name in _imported(path)}
        graph.setdefault(source, set()).update(t for t in targets if t in known and t != source)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first repeated at the end), or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_find_cycle_reports_a_cycle_and_accepts_a_dag():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_lazy_and_relative_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from bodega.mlm.causal import x\n    from ..scoring import core\n",
                      encoding="utf-8")
    layers = {layer_of(name) for name in _imported(module, "bodega.resources.m")}
    assert {"bodega.mlm", "bodega.scoring"} <= layers


def test_no_import_cycle_between_subpackages():
    cycle = find_cycle(layer_graph())
    assert cycle is None, "subpackages import each other: " + " -> ".join(cycle or [])


def test_layers_point_down():
    """resources < models < attacks, and the rest of the named order."""
    rank = {name: i for i, name in enumerate(LAYERS)}
    upward = sorted(f"{source} imports {target}" for source, targets in layer_graph().items()
                    for target in targets if source in rank and target in rank and rank[target] > rank[source])
    assert not upward, "imports against the layer order: " + "; ".join(upward)


def _importable() -> list[str]:
    return sorted(_module_name(p) for p in LIB.rglob("*.py")
                  if len(p.relative_to(LIB).parts) <= 2 or p.name == "__init__.py")


@pytest.mark.parametrize("module", [m for m in _importable() if m.count(".") <= 1])
def test_each_subpackage_imports_alone(module):
    """A fresh interpreter imports the subpackage first: no hidden reliance on another one being loaded."""
    done = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True,
                          env={"PYTHONPATH": str(LIB), "PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"}, timeout=120)
    assert done.returncode == 0, f"import {module} failed alone:\n{done.stderr[-2000:]}"


def test_the_core_never_imports_the_books_package():
    """Page builders and study bookkeeping (``bodega_book``) sit above the whole core, which never reaches them."""
    offenders = sorted(f"{_module_name(path)} imports {name}" for path in LIB.rglob("*.py")
                       for name in _imported(path) if name.split(".")[0] == "bodega_book")
    assert not offenders, "; ".join(offenders)
