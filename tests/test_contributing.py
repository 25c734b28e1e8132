"""CONTRIBUTING.md is true: every file and folder it names exists, and every ``bodega.``/``bodega_book.`` name it
gives resolves to a module or an attribute of one."""
from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
CODE = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^[\w./-]+\.(py|md|json|yml|yaml|txt)$|^[\w.-]+(/[\w.-]+)+/?$")
DOTTED = re.compile(r"^(bodega|bodega_book)(\.\w+)+$")
SEARCHED = ("lib", "book/lib", "book", "tests", "benchmarks", "scripts")


def _named(pattern: re.Pattern) -> list[str]:
    spans = CODE.findall(CONTRIBUTING.read_text(encoding="utf-8"))
    return sorted({span for span in spans if "<" not in span and pattern.match(span)})


def _exists(name: str) -> bool:
    if "/" in name:
        return (ROOT / name).exists()
    return any(next((ROOT / folder).rglob(name), None) is not None for folder in SEARCHED)


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_every_path_it_names_exists():
    paths = _named(PATH)
    assert "lib/bodega/attacks/recipes/" in paths and "tests/test_attacks_golden.py" in paths
    assert [path for path in paths if not _exists(path)] == []


def test_every_dotted_name_it_gives_resolves():
    names = _named(DOTTED)
    assert "bodega.attacks.base.Attacker" in names
    assert [name for name in names if not _resolves(name)] == []
