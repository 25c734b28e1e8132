"""The plan pages' builders: tables from the typed plan, and sentences that say "nothing" rather than "nan%"."""
from __future__ import annotations

from pathlib import Path

import pytest

from bodega_book.attack_sets import ATTACK_SETS, attack_sets_from_dict, measure_attack_sets, read_attack_sets
from bodega_book.plan_tables import (attack_cells_left, calibration_table, cause_text, query_ratio_table,
                                     reference_queries, reuse_facts, task_price_table)
from bodega_book.study_plan import read_plan

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "data"


def test_the_reuse_saving_with_nothing_left_to_run_is_nothing_not_a_share_of_zero():
    """Study v3 finished every planned cell: the page divided the saving by zero hours left and printed nan%."""
    done = reuse_facts(7.5, 0.0, 0, 0.0, (0.07, 0.51, 0.09))
    assert "nan" not in str(done) and done["saved_left"].startswith("nothing")
    assert (done["fresh_low"], done["fresh_high"], done["reused_high"]) == ("7%", "51%", "9%")
    running = reuse_facts(7.5, 0.5, 240, 10.0, (0.07, 0.51, 0.09))
    assert running["saved_left"] == ("0.50 CPU-hours over the 240 attack cells still to run, 5% of the CPU-hours "
                                     "projected for what is left")
    assert cause_text({}) == "none" and cause_text({"data": 3, "rule": 1}) == "3 data; 1 rule"


def test_the_tables_come_from_the_typed_plan():
    paired = read_plan(DATA / "study_pilot_v3_paired.json")
    ratios = query_ratio_table(paired, "HN")
    assert ratios.loc["DeepWordBug/untargeted", "BERT"] == paired.task_queries["HN"].ratio(
        "BERT", "DeepWordBug/untargeted").ratio
    caption, queries = reference_queries(paired, "HN")
    assert caption.startswith("*Queries per example against HN-GloVeBiLSTM (") and len(queries) > 0
    prices = task_price_table(paired)
    assert prices.loc["HN:BERT", "per_query"] == paired.task_calibration["HN:BERT"].per_query
    factors = calibration_table(paired, "family")
    assert factors.index.name == "family" and factors.loc["BAE", "cells"] == paired.calibration["BAE"].cells
    assert attack_cells_left(None, paired) == sum(c.kind == "attack" and c.planned for c in paired.cells.values())


def test_the_committed_attack_sets_are_the_prepared_datas():
    """The plan pages read the committed file instead of data/: it must say what data/ says."""
    if not (ROOT / "data" / "PR2" / "attack.tsv").exists():
        pytest.skip("prepared data absent: bodega data prepare-missing --raw-root ../shared/data/raw --out-root data")
    committed = read_attack_sets(DATA)
    assert attack_sets_from_dict(measure_attack_sets(ROOT / "data", ["PR2", "RD"])) == {
        task: committed[task] for task in ("PR2", "RD")}, f"write {ATTACK_SETS} again: benchmarks/attack_sets.py"


def test_the_cpu_per_text_table_has_a_column_per_victim_kind_of_the_grid():
    from bodega.experiments import load_grid
    from bodega_book.plan_tables import per_text_table

    grid = load_grid(ROOT / "parameters" / "grid_study.yaml")  # its victims are a tuple
    table = per_text_table(read_plan(DATA / "study_pilot_v2.json"), grid.victims)
    assert list(table.columns) == list(grid.victims) and table.loc["HN", "BERT"] > table.loc["PR2", "BERT"]


def test_the_left_out_facts_add_the_study_and_pick_the_rules_the_page_quotes():
    import pandas as pd

    from bodega_book.plan_tables import left_out_facts

    left_out = pd.DataFrame({"at_measured_ratio_cpu_hours": [1.0, 2.0, 4.0, 8.0]},
                            index=pd.Index(["FC-{BERT,GEMMA2B}-Genetic-{T,U}", "RD-BERT-BAE-U",
                                            "HN-{BERT,GEMMA2B}-PWWS-U", "FC-BiLSTM-PWWS-U"], name="left out"))
    table, facts = left_out_facts(left_out, 20.0)
    assert table["study with these cells, CPU-h"].tolist() == [21.0, 22.0, 24.0, 28.0]
    assert facts == {"plan_fc_rd_measured_hours": 3.0, "plan_fc_rd_with_study_hours": 23.0,
                     "plan_hn_measured_hours": 4.0}  # FC's BiLSTM, not competent, is no budget rule
