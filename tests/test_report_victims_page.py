"""The Victims chapter's trimming table, FC seed sentence and decoder pilot table."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from bodega_book.victims_page import decoder_pilot_table, fc_seed_sentence, trimming_facts, trimming_table

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


def _write_victim(models: Path, name: str, f1s: list[float], kept: int, competent: bool) -> None:
    folder = models / name
    folder.mkdir(parents=True)
    history = [{"point": i + 1, "epoch": 1 + i // 2, "rows_seen": 100 * (i + 1), "loss": 0.6, "train_seconds": 1.0,
                "dev": {"f1": f1, "accuracy": 0.5, "roc_auc": 0.5 + f1 / 4}} for i, f1 in enumerate(f1s)]
    quality = {"roc_auc": 0.8 if competent else 0.51, "f1": 0.6, "all_non_credible_f1": 0.45,
               "competent": competent, "reason": "ROC AUC 0.800 >= 0.65 and F1 0.600 > 0.450" if competent
               else "ROC AUC 0.510 < 0.65"}
    (folder / "metrics.json").write_text(json.dumps({
        "history": history, "selected_point": kept, "selected_epoch": history[kept - 1]["epoch"],
        "selected_rows_seen": history[kept - 1]["rows_seen"], "stopped_early": True,
        "dev": history[kept - 1]["dev"], "attack_quality": quality}))
    (folder / "victim.json").write_text(json.dumps({
        "base_model": "resource:mpnet", "train_rows": 400, "epochs": 3, "lr": 5e-05,
        "training": {"max_train": 400, "eval_every": 100, "patience": 2}}))


def test_study_victims_table_reads_the_records_and_names_the_untrained(tmp_path):
    from bodega_book.victims_page import (read_study_victims, study_victims_facts, study_victims_table)

    _write_victim(tmp_path, "PR2-BERT", [0.2, 0.6, 0.5, 0.55], kept=2, competent=True)
    _write_victim(tmp_path, "FC-BERT", [0.1, 0.2], kept=2, competent=False)
    study = read_study_victims(tmp_path, tasks=("PR2", "FC"), victims=("BiLSTM", "BERT"))
    table = study_victims_table(study)
    assert table.index.tolist() == [("PR2", "BiLSTM"), ("PR2", "BERT"), ("FC", "BiLSTM"), ("FC", "BERT")]
    bert = table.loc[("PR2", "BERT")]
    assert (bert["kept point"], bert["rows seen"], bert["dev F1"]) == ("2 of 4 (epoch 1)", 200, 0.6)
    assert (bert["lr"], bert["eval_every"], bert["patience"], bert["train rows"]) == ("5e-05", 100, 2, 400)
    assert bert["epochs (run of set)"] == "2 of 3 (stopped early)" and bert["dev AUC"] == 0.65
    assert bert["competent"].startswith("yes: ROC AUC 0.800")
    assert table.loc[("FC", "BERT"), "competent"] == "no, left out of the study: ROC AUC 0.510 < 0.65"
    assert table.loc[("PR2", "BiLSTM"), "competent"] == "not trained yet"
    assert table.loc[("PR2", "BiLSTM"), "kept point"] == ""
    facts = study_victims_facts(study)
    assert facts == {"study_trained": 2, "study_total": 4, "study_competent": 1, "study_left_out": "FC-BERT"}


def test_learning_curves_have_a_point_per_evaluation_and_a_panel_pair_per_task(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from bodega_book.victims_page import learning_curve_points, learning_curves_figure, read_study_victims

    _write_victim(tmp_path, "PR2-BERT", [0.2, 0.6, 0.5], kept=2, competent=True)
    study = read_study_victims(tmp_path, tasks=("PR2", "FC"), victims=("BERT",))
    points = learning_curve_points(study)
    assert points.rows_seen.tolist() == [100, 200, 300] and points.kept.tolist() == [False, True, False]
    figure = learning_curves_figure(study, {"PR2-BERT": {"all_non_credible_f1": 0.43}})
    f1_pr2, f1_fc = figure.axes[0], figure.axes[1]
    assert f1_pr2.get_title(loc="left") == "PR2" and f1_pr2.get_xscale() == "log"
    assert [t.get_text() for t in f1_fc.texts] == ["not trained yet"]
    assert any(list(line.get_ydata()) == [0.43, 0.43] for line in f1_pr2.lines)  # the all-non-credible floor


def test_the_all_non_credible_f1_and_the_dev_floor_of_the_committed_study():
    from bodega_book.victims_page import all_non_credible_f1

    assert all_non_credible_f1([1, 0, 0, 0]) == 0.4 and all_non_credible_f1([]) == 0.0
    floors = json.loads((DATA / "study_dev_baselines.json").read_text())["victims"]
    assert len(floors) == 16 and floors["FC-BERT"]["dev_rows"] == 312
    assert floors["PR2-BERT"]["dev_rows"] == 600  # its max_dev sample, as training evaluates it


def test_curve_facts_quote_the_committed_fc_bilstm_and_wait_for_an_untrained_one(tmp_path):
    from bodega_book.victims_page import NOT_TRAINED, curve_facts, read_study_victims

    models = Path(__file__).resolve().parents[1] / "results" / "study" / "models"
    facts = curve_facts(read_study_victims(models), "FC-BiLSTM")
    assert facts["curve_points"] == "30" and facts["curve_rows"] == "21,060"  # 30 epochs of 702 rows
    assert float(facts["curve_auc_low"]) >= 0.45 and float(facts["curve_auc_high"]) < 0.55
    assert set(curve_facts(read_study_victims(tmp_path, ("FC",), ("BiLSTM",)), "FC-BiLSTM").values()) == {NOT_TRAINED}
    study = read_study_victims(models)  # the tasks and victims of parameters/grid_study.yaml, which keeps them there
    assert [v.name for v in study][:5] == ["PR2-BiLSTM", "PR2-BERT", "PR2-GEMMA2B", "PR2-GEMMA7B", "FC-BiLSTM"]
    assert len(study) == 16
