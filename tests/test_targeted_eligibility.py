"""The findings page's table of targeted rows that the committed predictions would not admit is what study v3's
committed records and predictions give."""
from __future__ import annotations

import json
from pathlib import Path

from bodega_book.eligibility import Admitted, admitted_rows, admitted_table, admitted_text

ROOT = Path(__file__).resolve().parents[1]


def test_the_page_holds_what_the_committed_records_and_predictions_give():
    rows = admitted_rows(ROOT / "results/study-v3")
    assert sum(len(r.cells) for r in rows) == 23 and len(rows) == 5
    assert min(r.p_positive for r in rows) >= 0.489 and max(r.p_positive for r in rows) <= 0.5
    assert all(cell.endswith("-T") or "-T-t" in cell for r in rows for cell in r.cells)
    page = " ".join((ROOT / "book/findings.md").read_text(encoding="utf-8").split())
    assert admitted_text(rows) in page
    assert " ".join(admitted_table(rows).split()) in page


def write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_targeted_record_on_a_row_predicted_credible_is_counted_once_per_row(tmp_path: Path):
    write(tmp_path / "models/PR2-BERT/attack_predictions.jsonl",
          [{"id": "a", "label": 1, "predicted": 1, "p_positive": 0.9},
           {"id": "b", "label": 1, "predicted": 0, "p_positive": 0.4995}])
    for cell in ("PR2-BERT-PWWS-T", "PR2-BERT-BAE-T", "PR2-BERT-PWWS-U"):
        write(tmp_path / "runs" / cell / "records.jsonl", [{"index": 0, "id": "a"}, {"index": 1, "id": "b"}])
        (tmp_path / "runs" / cell / "summary.json").write_text("{}")  # a finished run
    rows = admitted_rows(tmp_path)  # the untargeted cell admits every row: not counted
    assert rows == [Admitted("PR2-BERT", 1, "b", 0.4995, ("PR2-BERT-BAE-T", "PR2-BERT-PWWS-T"))]
    assert admitted_text(rows) == ("2 targeted records (in 2 cells) attack 1 row that the committed predictions "
                                   "would not admit, with P(non-credible) 0.499-0.499")
