"""The Victims chapter's trimming table, FC seed sentence and decoder pilot table."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bodega.report.victims_page import decoder_pilot_table, fc_seed_sentence, trimming_facts, trimming_table

DATA = Path(__file__).resolve().parents[1] / "book" / "data"


def test_trimming_rows_per_tokenizer_and_task_and_the_quoted_wordpiece_counts():
    trimming = json.loads((DATA / "trimming.json").read_text())
    table = trimming_table(trimming)
    assert table.index.names == ["tokenizer", "task"]
    assert table.loc[("bert-base-uncased WordPiece", "HN"), "trimmed"] == 242
    assert len(table) == sum(len(e["tasks"]) for e in trimming["tokenizers"].values())
    facts = trimming_facts(trimming)
    assert (facts["trim_hn"], facts["trim_hn_rows"], facts["trim_rd"], facts["trim_rd_max"]) == (242, 400, 0, 62)
    assert facts["not_measured_note"].endswith("not available offline.")


def test_the_fc_sentence_lists_the_trained_seeds_of_the_10_epoch_setting():
    sweep = pd.DataFrame({"victim": ["BERT", "BERT", "BERT", "BiLSTM"], "epochs": ["10", "10", "2", "10"],
                          "lr": ["5e-05"] * 4, "seed": ["0", "1", "0", "0"],
                          "status": ["trained", "trained", "trained", "trained"],
                          "dev acc": ["0.1", "0.2", "0.3", "0.4"], "attack F1": ["0.5", "0.6", "0.7", "0.8"]})
    assert fc_seed_sentence(sweep).startswith(
        "Over seeds 0, 1 of the 10-epoch setting, dev accuracy is 0.1, 0.2 and attack F1 0.5, 0.6; ")
    assert fc_seed_sentence(sweep[sweep.epochs == "2"]) is None
    committed = pd.read_csv(DATA / "fc_sweep.csv", dtype=str).fillna("")
    assert "seeds 0, 1, 2" in fc_seed_sentence(committed)


def test_the_pilot_shows_parameters_in_millions():
    rows = [{"role": "r", "task": "PR2", "n_params": 136959552, "tokens": 284, "forward_cpu_s": 1.6,
             "train_step_cpu_s": 6.3, "batch": 8}]
    table = decoder_pilot_table(rows)
    assert list(table.columns) == ["role", "parameters", "task", "tokens", "forward_cpu_s", "train_step_cpu_s"]
    assert table.parameters.tolist() == ["137M"]
