"""The Deviations chapter's tables and sentences, on the committed benchmark files and small frames."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bodega.profiles import PROFILES, SHARED
from bodega_book.deviations_page import (before_after_summary, before_after_table, padding_facts,
                                           padding_table, profile_deviations, queries_note)

DATA = Path(__file__).resolve().parents[1] / "book" / "data"


def test_each_deviation_is_a_row_and_a_profile_keeping_bodega_shows_a_dash():
    table = profile_deviations(PROFILES.values())
    assert list(table.columns) == [p.name for p in PROFILES.values()]
    assert table.index.name == "deviation" and table.index.is_unique
    for profile in PROFILES.values():
        for name in table.index:
            assert table.loc[name, profile.name] == profile.deviations.get(name, "-")


def test_padding_facts_prefix_each_model_and_the_table_reads_bodega_s_batch_dependence():
    padding = json.loads((DATA / "bilstm_padding.json").read_text())
    facts = padding_facts(padding)
    assert facts["pad_task"] == "PR2" and facts["pad_epochs"] == 2
    assert facts["right_decisions_flipped_batches_vs_alone"] == 162 and facts["packed_f1_alone"] == 0.2516
    table = padding_table(padding)
    assert table.loc["decisions flipped: batch of 16 vs alone"].tolist() == [0, 162]
    assert table.loc["F1 on attack.tsv, each text alone", "right padding (BODEGA)"] == 0.538


def _moved() -> pd.DataFrame:
    parts = ("bodega_score", "success_score", "semantic_score", "character_score", "queries_per_example")
    rows = []
    for cell, same, change, queries in (("a", True, -0.1, -10.0), ("b", True, 0.3, 4.0), ("c", False, 0.9, 99.0)):
        row = {"cell": cell, "same_victim": same, "bodega_score_change": change, "queries_per_example_change": queries}
        row.update({f"{p}_{w}": 0.12345 for p in parts for w in ("before", "after")})
        rows.append(row)
    return pd.DataFrame(rows).set_index("cell")


def test_before_after_rounds_to_three_places_and_sums_up_only_the_same_victims_cells():
    table = before_after_table(_moved())
    assert table.loc["a", "BODEGA before"] == 0.123 and not table.loc["c", "same victim"]
    assert list(table.columns)[:3] == ["same victim", "BODEGA before", "BODEGA after"]
    assert before_after_summary(_moved()) == (
        "With the same victim, the BODEGA score moved by 0.200 on average over 2 cells (largest 0.300, b); "
        "queries per example by -3.0 on average.")


def test_the_demo_grid_s_committed_before_after_summary():
    moved = pd.read_csv(DATA / "demo_before_after.csv").set_index("cell")
    assert before_after_summary(moved).startswith("With the same victim, the BODEGA score moved by 0.058 on average "
                                                  "over 12 cells (largest 0.272, PR2-BiLSTM-DeepWordBug-U)")


def test_queries_note_quotes_the_shared_setting():
    assert queries_note({"queries": "counted per call"}).startswith("Queries are counted per call. ")
    assert SHARED["queries"] in queries_note(SHARED)


def test_every_role_s_model_and_size_stands_beside_the_paper_s():
    from bodega_book.deviations_page import format_size, read_recorded_sizes, recorded_sizes, role_models_table

    sizes = recorded_sizes([{"kind": "BiLSTM", "n_params": 1143106},
                            {"kind": "BERT", "base_role": "mpnet", "n_params": 109488002},
                            {"kind": "BERT", "base_role": "mpnet", "n_params": 1}],  # the first record wins
                           [{"role": "qwen2.5-0.5b", "n_params": 498435456}])
    assert sizes == {"BiLSTM": 1143106, "mpnet": 109488002, "qwen2.5-0.5b": 498435456}
    table = role_models_table(PROFILES["paper"], PROFILES["cpu"], sizes)
    assert table.index[0] == "BiLSTM" and set(PROFILES["cpu"].models) <= set(table.index)
    assert table.loc["BERT", "paper size"] == "110.0M" and table.loc["BERT", "cpu size"] == "109.5M"
    assert table.loc["BERT", "cpu model"].startswith("mpnet: all-mpnet-base-v2")
    assert (table.loc["GEMMA2B", "paper size"], table.loc["GEMMA7B", "paper size"]) == ("2.5B", "8.5B")
    assert table.loc["GEMMA7B", "cpu size"] == "498.4M" and table.loc["GEMMA2B", "cpu size"] == ""  # no record
    assert table.loc["BiLSTM", "paper size"] == table.loc["BiLSTM", "cpu size"] == "1.1M"
    assert table.loc["semantic", "cpu model"] == "mpnet-cosine-folded (on mpnet)"
    assert table.loc["nli", "cpu model"] == "none" and "endpoint" in table.loc["llm", "paper model"]
    assert format_size(2.5e9) == "2.5B" and format_size(None) == ""
    committed = read_recorded_sizes(Path(__file__).resolve().parents[1])
    # FC's BERT role (the first record) is LoRA-tuned: its count holds the adapter, as the decoders' do
    assert committed["mpnet"] == 111407236 and committed["gemma3-270m"] == 269999232
