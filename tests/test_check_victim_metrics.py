"""scripts/check_victim_metrics.py: a victim's ROC AUC and F1 recomputed from its predictions and the gold labels
with scikit-learn, against its metrics.json, on hand-made folders and on the committed study victims."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmark_scripts import load_script

ROOT = Path(__file__).resolve().parents[1]
LABELS = [0, 1, 1, 0, 1, 0, 1, 0]
P_POSITIVE = [0.1, 0.8, 0.4, 0.3, 0.9, 0.6, 0.7, 0.2]  # AUC 15/16; predicted 01001110: F1 0.75


@pytest.fixture(scope="module")
def check():
    return load_script(ROOT / "scripts" / "check_victim_metrics.py", "check_victim_metrics")


def _victim(results: Path, name: str, auc: float = 0.9375, f1: float = 0.75, task: str = "PR2") -> Path:
    """A victim folder as training leaves it: victim.json, metrics.json and the attack-set predictions."""
    folder = results / "models" / name
    folder.mkdir(parents=True)
    (folder / "victim.json").write_text(json.dumps({"kind": "BiLSTM", "task": task, "weights_hash": "x"}))
    (folder / "metrics.json").write_text(json.dumps({"attack": {"f1": f1, "accuracy": 0.75},
                                                     "attack_quality": {"roc_auc": auc, "f1": f1}}))
    rows = [{"id": f"doc:{i}", "label": y, "predicted": int(p > 0.5), "p_positive": p}
            for i, (y, p) in enumerate(zip(LABELS, P_POSITIVE))]
    (folder / "attack_predictions.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    return folder


@pytest.fixture
def tree(tmp_path):
    data = tmp_path / "data" / "PR2"
    data.mkdir(parents=True)
    # a text with a quote and an escaped tab: the TSV is read without quoting
    (data / "attack.tsv").write_text("".join(f'{y}\tdoc:{i}\tsaid "so"\\tthen {i}\n' for i, y in enumerate(LABELS)))
    return tmp_path


def test_a_victim_whose_numbers_are_recomputed_passes(check, tree, capsys):
    _victim(tree / "results", "PR2-BiLSTM")
    assert check.main(["--results", str(tree / "results"), "--data", str(tree / "data")]) == 0
    out = capsys.readouterr().out
    assert "PR2-BiLSTM" in out and "0.937500" in out and "0.750000" in out and "1 of 1 victims agree" in out


@pytest.mark.parametrize("recorded, wrong", [({"auc": 0.87}, "ROC AUC 0.937500 != recorded 0.870000"),
                                             ({"f1": 0.8}, "F1 0.750000 != recorded 0.800000")])
def test_a_recorded_number_the_predictions_do_not_give_fails(check, tree, capsys, recorded, wrong):
    _victim(tree / "results", "PR2-BiLSTM")
    _victim(tree / "results", "PR2-BERT", **recorded)
    assert check.main(["--results", str(tree / "results"), "--data", str(tree / "data")]) == 1
    out = capsys.readouterr().out
    assert f"PR2-BERT: {wrong}" in out and "MISMATCH" in out and "1 of 2 victims agree" in out


def test_the_auc_tolerance_admits_a_difference_and_prints_it(check, tree, capsys):
    _victim(tree / "results", "PR2-BiLSTM", auc=0.93755)
    assert check.main(["--results", str(tree / "results"), "--data", str(tree / "data")]) == 0
    assert "-5.0e-05" in capsys.readouterr().out
    assert check.main(["--results", str(tree / "results"), "--data", str(tree / "data"),
                       "--auc-tolerance", "1e-6"]) == 1


def test_missing_predictions_and_data_are_listed(check, tree, capsys):
    (_victim(tree / "results", "PR2-BERT") / "attack_predictions.jsonl").unlink()
    _victim(tree / "results", "FC-BERT", task="FC")
    assert check.main(["--results", str(tree / "results"), "--data", str(tree / "data")]) == 1
    out = capsys.readouterr().out
    assert f"PR2-BERT: missing {tree / 'results' / 'models' / 'PR2-BERT' / 'attack_predictions.jsonl'}" in out
    assert f"FC-BERT: missing {tree / 'data' / 'FC' / 'attack.tsv'}" in out
    assert "0 of 2 victims agree" in out


def test_predictions_of_other_rows_or_labels_fail(check, tree):
    folder = _victim(tree / "results", "PR2-BiLSTM")
    lines = (folder / "attack_predictions.jsonl").read_text().splitlines()
    flipped = dict(json.loads(lines[0]), label=1)
    (folder / "attack_predictions.jsonl").write_text("\n".join([json.dumps(flipped), *lines[1:]]) + "\n")
    attack = tree / "data" / "PR2" / "attack.tsv"
    assert check.check_victim(folder, tree / "data").problems[0] == f"1 labels differ from {attack}"
    (folder / "attack_predictions.jsonl").write_text("\n".join(lines[1:]) + "\n")
    assert "ids differ" in check.check_victim(folder, tree / "data").problems[0]


def test_a_folder_that_is_no_results_tree_is_a_user_error(check, tmp_path, capsys):
    assert check.main(["--results", str(tmp_path)]) == 2
    assert "--results" in capsys.readouterr().err


def test_the_committed_lora_bert_victim_recomputes_its_metrics(check):
    folder, data = ROOT / "results" / "study" / "models" / "FC-BERT", ROOT / "data"
    if not (folder / "attack_predictions.jsonl").is_file() or not (data / "FC" / "attack.tsv").is_file():
        pytest.skip("needs the committed study results and the prepared FC data (`bodega data prepare`)")
    result = check.check_victim(folder, data)
    assert result.ok, result.problems
    assert result.rows == 400 and result.auc == pytest.approx(result.recorded_auc, abs=1e-12)
