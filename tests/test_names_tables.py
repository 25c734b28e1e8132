"""No module keeps its own table of registry names: lists and mappings of tasks, victim kinds, attackers and
profiles come from the registries, and each table that must name them (a fact of the paper, a per-kind setting)
is listed here with why, and is checked against its registry."""
from __future__ import annotations

import ast
from pathlib import Path

from bodega.attacks.base import ATTACKERS
from bodega.attacks.openattack_backend import RECIPES
from bodega.profiles import PROFILES
from bodega.tasks import TASKS
from bodega.victims.kinds import VICTIM_KINDS

ROOT = Path(__file__).resolve().parents[1]
REGISTRIES = (TASKS, VICTIM_KINDS, ATTACKERS, PROFILES)

KEPT = {
    # the registries' own entries and the per-kind settings checked at registration (register_profile)
    ("lib/bodega/tasks.py", ("BERT", "BiLSTM", "GEMMA2B", "GEMMA7B")): "Task.paper_f1: BODEGA's Table 3 per task",
    ("lib/bodega/profiles.py", ("BERT", "GEMMA2B", "GEMMA7B", "GloVeBiLSTM", "MiniLM")): "a profile's models",
    ("lib/bodega/profiles.py", ("BERT", "GEMMA2B", "GEMMA7B")): "the cpu profile's models",
    ("lib/bodega/profiles.py", ("BERT", "GEMMA2B", "GEMMA7B", "GloVeBiLSTM")): "the cpu profile's deviations",
    ("lib/bodega/profiles.py", ("BERT", "BiLSTM", "GEMMA2B", "GEMMA7B", "GloVeBiLSTM", "MiniLM")): "epochs",
    ("lib/bodega/profiles.py", ("BAE", "SCPN")): "deviation names every profile shares",
    ("lib/bodega/attacks/openattack_backend.py", ("BAE", "BERT-ATTACK", "DeepWordBug", "Genetic", "PWWS",
                                                  "SememePSO", "TextFooler")): "OpenAttack's counterparts (RECIPES)",
    ("lib/bodega/report/published.py", ("BERT", "BiLSTM", "GEMMA2B")): "the re-run's victims, as its setup line says",
    ("lib/bodega/atomeval/verifiers.py", ("BERT", "BiLSTM", "GEMMA2B", "GEMMA7B")): "verifier preference order",
    # the book's facts of the papers and of the study's findings: statements about named victims and tasks
    ("book/lib/bodega_book/atomeval_published.py", ("BERT", "GEMMA7B")): "AtomEval's verifiers",
    ("book/lib/bodega_book/atomeval_published.py", ("bert", "gemma7b")): "AtomEval's verifiers (its own keys)",
    ("book/lib/bodega_book/atomeval_tables.py", ("BERT", "GEMMA7B")): "AtomEval's verifier roles",
    ("book/lib/bodega_book/figures.py", ("BAE", "BERT-ATTACK", "DeepWordBug", "Genetic", "PWWS", "SCPN", "SememePSO",
                                         "TextFooler")): "BODEGA's figure markers",
    ("book/lib/bodega_book/findings.py", ("FC", "HN", "PR2", "RD")): "the paper's statements per task",
    ("book/lib/bodega_book/findings.py", ("BERT", "GEMMA2B", "GEMMA7B")): "the paper's model-size claim",
    ("book/lib/bodega_book/findings.py", ("BERT", "GEMMA7B")): "a claim of the paper",
    ("book/lib/bodega_book/findings.py", ("FC", "RD")): "a claim of the paper",
    ("book/lib/bodega_book/findings.py", ("HN", "RD")): "a claim of the paper",
    ("book/lib/bodega_book/findings_rules.py", ("BAE", "BERT-ATTACK", "DeepWordBug", "Genetic", "PWWS", "SCPN",
                                                "SememePSO", "TextFooler")): "the attackers of BODEGA's Table 4",
    ("book/lib/bodega_book/findings_rules.py", ("BERT", "GEMMA2B", "GEMMA7B")): "deviations of victim roles",
    ("book/lib/bodega_book/findings_rules.py", ("BAE", "BERT-ATTACK")): "the masked-LM attackers' claim",
    ("book/lib/bodega_book/meaning_page.py", ("cpu", "paper", "smoke")): "the profiles the page compares",
    ("book/lib/bodega_book/meaning_page.py", ("HN", "PR2")): "the text sets the speed benchmark measured",
    ("book/lib/bodega_book/mlm_recovery.py", ("BAE", "BERT-ATTACK", "bae", "bertattack")): "glued fact names",
    ("book/lib/bodega_book/mlm_recovery.py", ("BERT-ATTACK", "bertattack")): "glued fact names",
    ("book/lib/bodega_book/mlm_recovery.py", ("BAE", "bae")): "glued fact names",
    ("book/lib/bodega_book/page_data.py", ("HN", "PR2")): "the score-speed file's keys",
}
"""(file, the names it lists) -> why the table is kept rather than read from a registry."""


def _names(node: ast.AST) -> tuple[str, ...]:
    """The registry names a literal list, tuple, set or mapping (its keys, tuple keys included) holds."""
    items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
    values = [element for item in items for element in (item.elts if isinstance(item, ast.Tuple) else [item])]
    return tuple(sorted({v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)
                         and any(v.value in registry for registry in REGISTRIES)}))


def name_tables(*folders: str) -> set[tuple[str, tuple[str, ...]]]:
    """Every literal table in the folders' modules that names two or more registered names."""
    found = set()
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.Dict, ast.List, ast.Tuple, ast.Set)) and len(names := _names(node)) >= 2:
                    found.add((path.relative_to(ROOT).as_posix(), names))
    return found


def test_no_module_keeps_a_table_of_registry_names_of_its_own():
    """A new hard-coded list of tasks, victims, attackers or profiles fails here: read the registry instead
    (``list(TASKS)``, ``victim_kinds(...)``, a grid's names), or, for a fact that names them, list it in KEPT."""
    new = sorted(name_tables("lib", "book/lib") - set(KEPT))
    assert not new, "tables of registry names of their own (derive them from the registry): " + "; ".join(
        f"{path}: {', '.join(names)}" for path, names in new)
    assert not set(KEPT) - name_tables("lib", "book/lib")  # an entry whose table is gone is removed from KEPT


def test_the_guard_finds_a_hard_coded_table(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "mine.py").write_text('ORDER = ("PR2", "FC")\nSOURCES = {("hn", "x"): 1, ("rd", "y"): 2}\n'
                                              'ONE = ["BERT"]\nWORDS = ("cpu", "fast")\n')
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert name_tables("lib") == {("lib/mine.py", ("FC", "PR2")), ("lib/mine.py", ("hn", "rd"))}


MODEL_ROLES = ("sentence-encoder", "semantic", "masked-lm", "causal-lm", "nli", "spacy", "wordpiece-vocab", "llm")
"""The roles of a profile's ``models`` that are no victim kind."""


def _is_kind(key: str) -> bool:
    """A canonical victim kind (``BERT``) or one task's (``FC-BERT``)."""
    task, _, kind = key.rpartition("-")
    return VICTIM_KINDS.find(key) == key or (TASKS.find(task) == task and VICTIM_KINDS.find(kind) == kind)


def test_the_tables_kept_name_only_registered_canonical_names():
    assert all(ATTACKERS.find(name) == name for name in RECIPES)
    for task in TASKS.values():
        assert all(VICTIM_KINDS.find(kind) == kind for kind in task.paper_f1)
    for profile in PROFILES.values():  # a per-kind setting names a registered kind, canonically
        assert all(_is_kind(key) for key in (*profile.epochs, *profile.finetuning)), profile.name
        assert all(key in MODEL_ROLES or _is_kind(key) for key in profile.models), profile.name
    assert not _is_kind("PR-BERT") and not _is_kind("BRET") and _is_kind("PR2-BERT")
