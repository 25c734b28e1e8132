"""Report tables and figures from a small results folder written by the test in the grid's layout."""
from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from bodega.report import load_results
from run_fixtures import write_run_summary, write_victim_info
from bodega_book.tables import appendix, table1, table3, table4, table5


def _victim(root: Path, task: str, kind: str, f1: float, n_params: int) -> None:
    folder = root / "models" / f"{task}-{kind}"
    folder.mkdir(parents=True)
    write_victim_info(folder, task, kind, n_params)
    (folder / "metrics.json").write_text(json.dumps({"attack": {"f1": f1, "accuracy": 0.8},
                                                     "dev": {"f1": f1 - 0.1, "accuracy": 0.7}}))


def _run(root: Path, task: str, victim: str, attacker: str, scenario: str, bodega: float, queries: float,
         records: list[dict] | None = None) -> None:
    folder = root / "runs" / f"{task}-{victim}-{attacker}-{scenario[0].upper()}"
    folder.mkdir(parents=True)
    write_run_summary(folder, task, victim, attacker, scenario, bodega=bodega, success=min(1.0, 2 * bodega),
                      semantic=0.8, character=0.9, queries=queries, profile="smoke")
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records or []))


@pytest.fixture
def results(tmp_path: Path):
    _victim(tmp_path, "PR2", "BiLSTM", 0.5, 1_000_000)
    _victim(tmp_path, "PR2", "BERT", 0.6, 22_000_000)
    _victim(tmp_path, "FC", "BERT", 0.9, 22_000_000)
    _run(tmp_path, "PR2", "BiLSTM", "PWWS", "untargeted", 0.4, 100)
    _run(tmp_path, "PR2", "BERT", "PWWS", "untargeted", 0.2, 300)
    _run(tmp_path, "PR2", "BiLSTM", "DeepWordBug", "untargeted", 0.3, 50)
    _run(tmp_path, "PR2", "BiLSTM", "PWWS", "targeted", 0.1, 80)
    _run(tmp_path, "FC", "BERT", "DeepWordBug", "untargeted", 0.25, 40)
    (tmp_path / "runs" / "PR2-BERT-PWWS-T").mkdir()  # unfinished: no summary yet
    return load_results(tmp_path)


def test_loads_finished_cells_only_in_paper_order(results):
    assert list(results.victims.task + "-" + results.victims.victim) == ["PR2-BiLSTM", "PR2-BERT", "FC-BERT"]
    assert len(results.runs) == 5 and "PR2-BERT-PWWS-T" not in set(results.runs.name)


def test_runs_carry_the_canonical_attacker_names_not_older_ones(tmp_path):
    folder = tmp_path / "runs"
    _run(tmp_path, "PR2", "BiLSTM", "PSO", "untargeted", 0.4, 100)  # BODEGA's name, as older summaries have it
    _run(tmp_path, "PR2", "BiLSTM", "py:mine.attack:make", "untargeted", 0.3, 50)  # a user's own attacker
    (folder / "PR2-BiLSTM-PSO-U").rename(folder / "PR2-BiLSTM-SememePSO-U")
    names = dict(zip(load_results(tmp_path).runs.name, load_results(tmp_path).runs.attacker))
    assert names["PR2-BiLSTM-SememePSO-U"] == "SememePSO"
    assert names["PR2-BiLSTM-py:mine.attack:make-U"] == "py:mine.attack:make"


def test_table3_puts_the_published_f1_beside_ours(results):
    frame = table3(results)
    assert frame.loc["PR2", ("BiLSTM", "ours")] == 0.5
    assert frame.loc["PR2", ("BiLSTM", "paper")] == 0.4857
    assert frame.loc["FC", ("BERT", "paper")] == 0.936
    assert math.isnan(frame.loc["FC", ("BiLSTM", "ours")])


def test_table4_averages_untargeted_runs_over_victims(results):
    frame = table4(results)
    assert frame.loc[("PR2", "PWWS"), "BODEGA"] == pytest.approx(0.3)
    assert frame.loc[("PR2", "PWWS"), "Queries"] == pytest.approx(200)
    assert frame.loc[("PR2", "PWWS"), "victims"] == 2
    assert frame.loc[("PR2", "DeepWordBug"), "victims"] == 1
    assert list(frame.index.get_level_values(0)) == ["PR2", "PR2", "FC"]


def test_table5_picks_the_best_attacker_per_scenario(results):
    frame = table5(results)
    row = frame.loc[("PR2", "BiLSTM")]
    assert (row[("untargeted", "BODEGA")], row[("untargeted", "attacker")]) == (0.4, "PWWS")
    assert (row[("targeted", "BODEGA")], row[("targeted", "queries")]) == (0.1, 80)
    assert math.isnan(frame.loc[("PR2", "BERT")][("targeted", "BODEGA")])


def test_appendix_lists_every_run_of_a_task(results):
    frame = appendix(results, "PR2")
    assert len(frame) == 4 and frame.loc[("BiLSTM", "PWWS", "targeted"), "BODEGA"] == 0.1


def test_table1_counts_rows_and_shows_paper_sizes(tmp_path):
    folder = tmp_path / "PR2"
    folder.mkdir()
    for split, n in (("train", 3), ("attack", 2), ("dev", 1)):
        (folder / f"{split}.tsv").write_text("".join(f"{i % 2}\tid{i}\ttext {i}\n" for i in range(n)))
    frame = table1(tmp_path, ["PR2"])
    assert frame.loc["PR2", ("train", "ours")] == 3 and frame.loc["PR2", ("train", "paper")] == 12_675
    assert frame.loc["PR2", ("positive", "ours")] == pytest.approx(2 / 6, abs=1e-4)
    assert frame.loc["PR2", ("positive", "paper")] == "not in the available copy"


def test_figures_render(results):
    import matplotlib

    matplotlib.use("Agg")
    from bodega_book.figures import figure2, figure3

    assert len(figure2(results).axes) == 2
    assert len(figure3(results).axes[0].collections) > 0


def test_missing_results_folder_says_what_to_run(tmp_path):
    with pytest.raises(FileNotFoundError, match="bodega grid run"):
        load_results(tmp_path / "absent")


def test_cell_costs_read_finished_markers_only(tmp_path):
    from bodega.report.results import cell_costs

    for kind, name, status in (("models", "PR2-BiLSTM", "done"), ("runs", "PR2-BiLSTM-PWWS-U", "done"),
                               ("runs", "PR2-BiLSTM-PWWS-T", "running")):
        folder = tmp_path / kind / name
        folder.mkdir(parents=True)
        (folder / "cell.json").write_text(json.dumps({"status": status, "name": name, "seconds": 10.0,
                                                      "cpu_seconds": 4.0}))
    costs = cell_costs(tmp_path)
    assert list(costs.kind) == ["victim", "attack"] and costs.cpu_seconds.sum() == 8.0


def test_cell_costs_say_which_kernels_each_cell_ran_on(tmp_path):
    """A grid that moved from an AMX machine to one with AVX512-BF16 alone runs its cells at other speeds."""
    from bodega.report.results import cell_costs

    for kind, name, info, kernels in (("models", "PR2-BERT", "victim.json", "amx-bf16"),
                                      ("runs", "PR2-BERT-PWWS-U", "run.json", "avx512-bf16"),
                                      ("runs", "PR2-BiLSTM-PWWS-U", "run.json", "fp32"),
                                      ("runs", "PR2-BiLSTM-PWWS-T", None, None)):
        folder = tmp_path / kind / name
        folder.mkdir(parents=True)
        (folder / "cell.json").write_text(json.dumps({"status": "done", "name": name, "seconds": 1.0}))
        if info:
            (folder / info).write_text(json.dumps({"precision": "bf16", "kernels": kernels}))
    costs = cell_costs(tmp_path).set_index("name").kernels
    assert costs.to_dict() == {"PR2-BERT": "amx-bf16", "PR2-BERT-PWWS-U": "avx512-bf16",
                               "PR2-BiLSTM-PWWS-U": "fp32", "PR2-BiLSTM-PWWS-T": "not recorded"}


def test_manual_sample_ranks_by_stored_scores_else_character_similarity(tmp_path):
    from bodega_book.manual import manual_sample

    records = [{"id": "a", "original": "the cat sat on the mat", "adversarial": "the dog sat on the mat",
                "success": True},
               {"id": "b", "original": "it rains today", "adversarial": "it pours today", "success": True},
               {"id": "c", "original": "no change", "adversarial": None, "success": False}]
    _run(tmp_path, "PR2", "BiLSTM", "BERT-ATTACK", "untargeted", 0.5, 10, records)
    sample = manual_sample(load_results(tmp_path), "PR2")
    assert sample.ranked_by == "character similarity" and list(sample.table.id) == ["a", "b"]
    assert "<" in sample.table.diff_html[0]  # the change is marked up

    scores = tmp_path / "runs" / "PR2-BiLSTM-BERT-ATTACK-U" / "scores.jsonl"
    scores.write_text(json.dumps({"id": "a", "bodega": 0.2}) + "\n" + json.dumps({"id": "b", "bodega": 0.9}) + "\n")
    sample = manual_sample(load_results(tmp_path), "PR2")
    assert sample.ranked_by == "BODEGA score" and list(sample.table.id) == ["b", "a"]
    assert manual_sample(load_results(tmp_path), "FC") is None

    # PR2 ids name articles and repeat: scores written by the runner are matched by row index.
    same_id = [dict(r, id="art", index=i) for i, r in enumerate(records)]
    (tmp_path / "runs" / "PR2-BiLSTM-BERT-ATTACK-U" / "records.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in same_id))
    scores.write_text("".join(json.dumps({"index": i, "id": "art", "bodega": b}) + "\n"
                              for i, b in enumerate((0.9, 0.2, 0.0))))
    sample = manual_sample(load_results(tmp_path), "PR2")
    assert sample.ranked_by == "BODEGA score" and list(sample.table.score) == [0.9, 0.2]
    assert list(sample.table.original) == [records[0]["original"], records[1]["original"]]
