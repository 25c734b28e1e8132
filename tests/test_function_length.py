"""No function in ``lib/bodega`` or ``book/lib/bodega_book`` is longer than 80 lines, so each reads at once.

Counted from the ``def`` line to the last line of the body (docstring and comments included), for
every function and method, nested ones too, found by walking the source with ``ast``.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "bodega"
BOOK_PACKAGE = Path(__file__).resolve().parents[1] / "book" / "lib" / "bodega_book"
MAX_LINES = 80


def _too_long(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(name, first line, length) of every function in ``tree`` longer than ``MAX_LINES``."""
    return [(node.name, node.lineno, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_LINES]


def test_no_function_is_longer_than_the_limit():
    offenders = [f"{path.relative_to(PACKAGE.parents[1])}:{line} {name} ({length} lines)"
                 for path in sorted([*PACKAGE.rglob("*.py"), *BOOK_PACKAGE.rglob("*.py")])
                 for name, line, length in _too_long(ast.parse(path.read_text(encoding="utf-8")))]
    assert not offenders, f"functions over {MAX_LINES} lines:\n" + "\n".join(offenders)


def test_the_count_includes_the_whole_body():
    short = "def f():\n" + "    x = 1\n" * (MAX_LINES - 1)
    assert _too_long(ast.parse(short)) == []
    long = "class C:\n    def g(self):\n" + "        x = 1\n" * MAX_LINES
    assert _too_long(ast.parse(long)) == [("g", 2, MAX_LINES + 1)]
