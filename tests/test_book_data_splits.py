"""Table 1 on the data page: the split counts committed beside the results (never read from data/), the share of
positives computed from them, and the paper's share shown as missing while the published values lack it."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bodega_book.atomeval_published import NOT_STATED
from bodega_book.attack_sets import read_attack_sets
from bodega_book.data_splits import (DATA_SPLITS, SplitCount, data_splits_from_dict, measure_data_splits,
                                     read_data_splits, write_data_splits)
from bodega_book.page_data import PageDataError
from bodega_book.tables import table1_frame

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "book" / "data"


def _write_task(root: Path, task: str, labels: dict[str, str]) -> Path:
    folder = root / task
    folder.mkdir()
    for split, row_labels in labels.items():
        (folder / f"{split}.tsv").write_text("".join(f"{label}\tid{i}\ttext {i}\n" for i, label in
                                                     enumerate(row_labels)), encoding="utf-8")
    return folder


def test_the_counts_are_the_preparations_record_or_else_the_files_rows(tmp_path):
    _write_task(tmp_path, "PR2", {"train": "1100", "attack": "10", "dev": "111"})
    recorded = _write_task(tmp_path, "RD", {"train": "1", "attack": "1", "dev": "1"})
    (recorded / "splits.json").write_text(json.dumps({"counts": {
        "train": {"rows": 9, "positive": 4}, "attack": {"rows": 5, "positive": 2}, "dev": {"rows": 3, "positive": 0}}}))
    counts = data_splits_from_dict(measure_data_splits(tmp_path, ["PR2", "RD"]))
    assert counts["PR2"] == {"train": SplitCount(4, 2), "attack": SplitCount(2, 1), "dev": SplitCount(3, 3)}
    assert counts["RD"]["train"] == SplitCount(9, 4) and counts["RD"]["dev"] == SplitCount(3, 0)


def test_table1_shares_positives_over_all_splits_and_says_the_paper_lacks_its_share(tmp_path):
    _write_task(tmp_path, "PR2", {"train": "1100", "attack": "10", "dev": "111"})
    write_data_splits(tmp_path / DATA_SPLITS, measure_data_splits(tmp_path, ["PR2"]))
    frame = table1_frame(read_data_splits(tmp_path))
    assert frame.loc["PR2", ("positive", "ours")] == pytest.approx(6 / 9, abs=1e-4)
    assert frame.loc["PR2", ("attack", "ours")] == 2 and frame.loc["PR2", ("attack", "paper")] == 416
    assert frame.loc["PR2", ("positive", "paper")] == NOT_STATED


@pytest.mark.parametrize("change, message", [
    (lambda tasks: tasks["PR2"].pop("dev"), "task 'PR2' needs dev rows"),
    (lambda tasks: tasks["PR2"]["attack"].update(positive=417), "task 'PR2' needs attack rows"),
    (lambda tasks: tasks["PR2"]["train"].update(rows=True), "task 'PR2' needs train rows"),
])
def test_a_split_file_that_does_not_hold_counts_is_refused_naming_task_and_split(change, message):
    data = json.loads((DATA / DATA_SPLITS).read_text(encoding="utf-8"))
    change(data["tasks"])
    with pytest.raises(PageDataError, match=message):
        data_splits_from_dict(data)


def test_the_committed_counts_agree_with_the_committed_attack_sets_and_the_prepared_data():
    """Two committed records of the same attack sets must agree; where data/ is prepared, with it too."""
    counts, sets = read_data_splits(DATA), read_attack_sets(DATA)
    assert set(counts) == set(sets) == {"HN", "PR2", "FC", "RD"}
    for task, attack in sets.items():
        assert counts[task]["attack"] == SplitCount(len(attack.labels), sum(attack.labels)), task
    assert counts["PR2"]["train"] == SplitCount(12_675, 3_654)  # BODEGA's exact split
    if (ROOT / "data" / "PR2" / "splits.json").exists():
        assert data_splits_from_dict(measure_data_splits(ROOT / "data", list(counts))) == counts, \
            f"write {DATA_SPLITS} again: python benchmarks/data_splits.py"


def test_the_papers_share_of_positives_is_shown_missing_only_while_the_published_values_lack_it():
    published = yaml.safe_load((ROOT / "lib/bodega/published/bodega.yaml").read_text(encoding="utf-8"))
    assert all(set(sizes) == {"train", "attack", "dev"} for sizes in published["table1"].values()), \
        "the published values now give Table 1 more than split sizes: show the paper's share on the data page"
    page = (ROOT / "book" / "data.md").read_text(encoding="utf-8")
    assert "read_data_splits" in page and "table1_frame" in page and "data/PR2" not in page
