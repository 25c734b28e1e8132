"""The Meaning chapter's values: candidates' agreement with people, folding's effect, the scorer's speed-ups."""
from __future__ import annotations

import pandas as pd

from bodega_book.meaning_page import (SEMANTIC_MODELS, agreement_facts, candidates_table,
                                        example_html, folding_note, folding_table, per_annotator_table,
                                        semantic_models_markdown, speed_facts, speed_markdown)
from bodega.scoring.semantic import semantic_model_name

COLUMNS = ("auc_semantic", "auc_semantic_low", "auc_semantic_high", "auc_bodega", "auc_bodega_low",
           "auc_bodega_high", "auc_semantic_0_vs_1", "auc_semantic_0_vs_2")


def _table(folded_semantic: float, folded_bodega: float) -> pd.DataFrame:
    values = {"model": 0.7, "sbert-cosine": 0.65, "bertscore-f1": 0.6, "character": 0.55}
    rows = [{"candidate": name, **{c: v for c in COLUMNS}, "seconds": 12.4} for name, v in values.items()]
    rows.append({"candidate": "character-folded", **{c: folded_semantic for c in COLUMNS},
                 "auc_bodega": folded_bodega, "seconds": 0.2})
    return pd.DataFrame(rows)


META = {"n_pairs": "30", "label_counts": {"0": 10, "1": 15, "2": 5}}


def test_the_folded_character_score_is_compared_with_the_default_in_words():
    better = agreement_facts(_table(0.8, 0.8), META, "model")
    assert better["character_vs_default"] == "agrees with people better than"
    assert better["encoder_vs_character_0v2"] == "no better" and better["n_pairs"] == 30
    worse = agreement_facts(_table(0.6, 0.6), META, "model")
    assert worse["character_vs_default"] == "agrees with people less well than"
    mixed = agreement_facts(_table(0.8, 0.6), META, "model")
    assert mixed["character_vs_default"] == "agrees with people about as well as"
    assert mixed["default_auc"] == 0.7 and mixed["character_folded_auc_bodega"] == 0.6


def test_candidates_table_marks_the_default_and_shows_intervals():
    table = candidates_table(_table(0.8, 0.8), "model")
    assert table.candidate[0] == "model (cpu default)" and table["AUC semantic [95% CI]"][0] == "0.700 [0.700, 0.700]"
    assert table.seconds.tolist()[-1] == "0"


def _times(reference: float, ours: float) -> dict:
    return {"ms_per_example": {f"{who}{part}": value for who, value in (("reference", reference), ("ours", ours))
                               for part in ("", "_segment", "_align")}}


def test_speed_facts_and_table_from_the_benchmark_file():
    speed = {"PR2": _times(2.0, 1.0),
             "HN": {**_times(30.0, 2.0), "quartile_1": {**_times(4.0, 2.0), "sentences": [1, 5]},
                    "quartile_4": {**_times(90.0, 3.0), "sentences": [40, 90]}}}
    facts = speed_facts(speed)
    assert facts["hn_verdict"] == "the tenfold target is met" and facts["hn_ratio"] == "15.0x"
    assert facts["hn_short_ratio"] == "2.0x" and facts["hn_long_align_ratio"] == "30.0x"
    lines = speed_markdown(speed).splitlines()
    assert len(lines) == 2 + 3 * 4
    assert "| HN, 40-90 sentences | alignment + character only | 90.000 | 3.000 | 30.0x |" in lines


def test_folding_table_says_na_for_a_run_without_successes():
    entry = {"mean": 0.5, "low": 0.4, "high": 0.6}
    empty = {"mean": None}
    folding = {"rows": [{"run": "r", "successes": 0, "examples": 3, "semantic_folded": empty, "semantic_plain": empty,
                         "bodega_folded": entry, "bodega_plain": entry, "bodega_difference": empty}]}
    row = folding_table(folding).iloc[0]
    assert row["successes"] == "0/3" and row["semantic, folded"] == "n/a"
    assert row["BODEGA, folded"] == "0.500 [0.400, 0.600]"


def test_each_profile_names_its_semantic_model_and_what_it_is():
    lines = semantic_models_markdown(("paper", "cpu")).splitlines()
    assert lines[0] == "| profile | semantic model | what it is |" and len(lines) == 4
    cpu = semantic_model_name("cpu")
    assert lines[3] == f"| `cpu` | `{cpu}` | {SEMANTIC_MODELS.get(cpu, '')} |"


def test_per_annotator_aucs_show_three_places_and_none_without_annotators():
    assert per_annotator_table({}) is None
    table = per_annotator_table({"per_annotator_auc_semantic": [
        {"annotator": "a", "n_pairs": 12, "auc": 0.71234}, {"annotator": "b", "n_pairs": 8, "auc": 0.5}]})
    assert table.to_dict("records") == [{"annotator": "a", "n_pairs": 12, "auc": "0.712"},
                                        {"annotator": "b", "n_pairs": 8, "auc": "0.500"}]


def test_folding_note_and_an_example_s_html():
    assert folding_note({"folded_model": "f", "plain_model": "p", "runs": "results/x", "bootstrap": 1000}) == (
        "Models: `f` against `p`, runs from `results/x`, 1000 bootstrap resamples.")
    html = example_html({"row": 7, "label": 2, "original": "a cat", "adversarial": "a cot",
                         "semantic": {"m": 0.91234}, "bodega": {"m": 0.5}})
    assert html.startswith("<p><b>Row 7: people say it makes no sense</b></p>")
    assert "<tr><td><code>m</code></td><td>0.912</td><td>0.500</td></tr>" in html
