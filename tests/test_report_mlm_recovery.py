"""The masked-LM chapter's values: each build found by the model its run measured, recovery tables, facts."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from bodega_book.mlm_recovery import build_of, chapter_facts, recovery_table, top10

BOOK_DATA = Path(__file__).resolve().parents[1] / "book" / "data"
FILES = ("mlm_recovery.csv", "mlm_recovery.json", "attacks_mlm_results.csv", "victims_full.csv", "scpn_speed.json")


def _runs() -> list[dict]:
    return [{"rows": [{"model": "minilm-mlm"}, {"model": "tiny-random"}], "model_build": {"seconds": 60}},
            {"rows": [{"model": "minilm-mlm-tuned"}], "model_build": {"seconds": 30, "steps": 5}}]


def test_a_build_is_found_by_the_model_its_run_measured_wherever_the_run_is():
    runs = _runs()
    assert build_of(runs, "minilm-mlm-tuned")["steps"] == 5
    assert build_of(runs[::-1], "minilm-mlm")["seconds"] == 60
    with pytest.raises(KeyError, match="gemma3-270m-left"):
        build_of(runs, "gemma3-270m-left")


def test_recovery_table_is_percent_per_model_in_the_chapters_order():
    recovery = pd.DataFrame([
        {"model": m, "task": "PR2", "words": w, "top1": t1, "top10": t10, "run": run}
        for m, run in (("gemma3-270m-left", 2), ("tiny-random", 1))
        for w, t1, t10 in (("content", 0.1, 0.3), ("any", 0.2, 0.5))] +
        [{"model": "tiny-random", "task": "HN", "words": "any", "top1": 0.9, "top10": 0.9, "run": 1}])
    table = recovery_table(recovery, "PR2")
    assert list(table.index) == ["tiny random BertForMaskedLM (floor)",
                                 "Gemma-3-270M, left context, rebuilt tokenizer (gemma3-270m-left)"]
    assert list(table.columns) == ["content top-1", "content top-10", "any top-1", "any top-10", "run"]
    assert table.iloc[1].tolist() == [10.0, 30.0, 20.0, 50.0, 2]
    assert top10(recovery, "tiny-random", "HN", "any") == 90.0
    with pytest.raises(KeyError, match="FC"):
        top10(recovery, "tiny-random", "FC", "any")


def test_the_chapters_facts_do_not_depend_on_the_order_of_the_runs(tmp_path):
    if not all((BOOK_DATA / name).exists() for name in FILES):
        pytest.skip("the book's masked-LM data files are not in this checkout")
    for name in FILES:
        shutil.copy(BOOK_DATA / name, tmp_path / name)
    facts = chapter_facts(tmp_path)
    recovery = json.loads((tmp_path / "mlm_recovery.json").read_text())
    recovery["runs"].reverse()
    (tmp_path / "mlm_recovery.json").write_text(json.dumps(recovery))
    assert chapter_facts(tmp_path) == facts
    assert facts["tune_steps"] == build_of(recovery["runs"], "minilm-mlm-tuned")["steps"]
    assert 0 <= facts["gemma_PR2_content"] <= 100 and facts["bertattack_n"] > 0
