"""`bodega score` on InCrediblAE TSVs and our records, the exporter, and the agreement table."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bodega.errors import BodegaError
from bodega.cli import main
from bodega.io import write_jsonl
from bodega.scoring.interchange import (AttackedExample, read_attacked, read_incrediblae_tsv,
                                        write_incrediblae_tsv)

HUMAN = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "human" / \
    "incrediblae_fc_meaning_dev.csv"

ROWS = [
    (1, 12, "Paris is big. ~ Paris is in France.", "Paris is big. ~ Paris is in Spain."),
    (0, 40, "Rome is old. ~ Rome is in Italy.", "Rome is old. ~ Rome is in Italy."),
    (1, 7, "Oslo is cold. ~ Oslo is in Norway.", "Oslo is cold. ~ Oslo is in Nοrway."),
]


def _write_tsv(path: Path) -> Path:
    lines = ["succeeded\tnum_queries\toriginal_text\tmodified_text"]
    lines += [f"{s}\t{q}\t{o}\t{m}" for s, q, o, m in ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_read_incrediblae_tsv(tmp_path):
    rows = read_incrediblae_tsv(_write_tsv(tmp_path / "adv.tsv"))
    assert [(r.success, r.queries, r.original, r.adversarial) for r in rows] == \
        [(bool(s), q, o, m) for s, q, o, m in ROWS]


def test_bad_header_and_bad_flag_name_the_file(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("ok\tnum_queries\toriginal_text\tmodified_text\n1\t2\ta\tb\n", encoding="utf-8")
    with pytest.raises(BodegaError, match="header lacks succeeded"):
        read_incrediblae_tsv(bad)
    bad.write_text("succeeded\tnum_queries\toriginal_text\tmodified_text\nmaybe\t2\ta\tb\n", encoding="utf-8")
    with pytest.raises(BodegaError, match=r"bad.tsv:2"):
        read_incrediblae_tsv(bad)


def test_score_command_writes_one_line_per_row_in_order_and_prints_the_summary(tmp_path, capsys):
    out = tmp_path / "scores.jsonl"
    code = main(["score", "--task", "FC", "--input", str(_write_tsv(tmp_path / "adv.tsv")),
                 "--out", str(out), "--semantic", "character", "--summary", str(tmp_path / "s.json")])
    assert code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["success"] for line in lines] == [True, False, True]
    assert lines[1] == {"id": "2", "success": False, "semantic": None, "character": None, "bodega": 0.0}
    assert lines[0]["bodega"] == pytest.approx(lines[0]["semantic"] * lines[0]["character"])
    printed = capsys.readouterr().out
    assert "Subset size: 3" in printed and "Queries per example: 19.666666666666668" in printed
    assert json.loads((tmp_path / "s.json").read_text())["semantic_model"] == "character"


def test_records_export_to_incrediblae_and_score_the_same(tmp_path):
    records = [{"id": "a1", "original": o, "adversarial": m if s else None, "success": bool(s),
                "queries": q, "unique_queries": q, "forwards": q, "seconds": 0.5, "error": None}
               for s, q, o, m in ROWS]
    write_jsonl(tmp_path / "records.jsonl", records)
    from_records = read_attacked(tmp_path / "records.jsonl")
    assert from_records[1] == AttackedExample(ROWS[1][2], None, False, 40, "a1", 0.5)
    write_incrediblae_tsv(tmp_path / "export.tsv", from_records)
    exported = read_attacked(tmp_path / "export.tsv")
    assert [(r.success, r.queries, r.original) for r in exported] == \
        [(r.success, r.queries, r.original) for r in from_records]
    assert exported[1].adversarial == ROWS[1][2]  # a failed row carries the original
    assert main(["score", "--task", "FC", "--input", str(tmp_path / "records.jsonl"),
                 "--out", str(tmp_path / "r.jsonl"), "--semantic", "character"]) == 0
    assert main(["score", "--task", "FC", "--input", str(tmp_path / "export.tsv"),
                 "--out", str(tmp_path / "e.jsonl"), "--semantic", "character"]) == 0

    def bodega(name):
        return [json.loads(x)["bodega"] for x in (tmp_path / name).read_text().splitlines()]

    assert bodega("r.jsonl") == bodega("e.jsonl")


def test_export_command(tmp_path, capsys):
    write_jsonl(tmp_path / "records.jsonl", [{"id": "1", "original": "a\tb\nc", "adversarial": "a b d",
                                             "success": True, "queries": 3}])
    assert main(["score-export", "--records", str(tmp_path / "records.jsonl"),
                 "--out", str(tmp_path / "x.tsv")]) == 0
    assert (tmp_path / "x.tsv").read_text().splitlines()[1] == "1\t3\ta b c\ta b d"


def test_auc_matches_scikit_learn():
    from sklearn.metrics import roc_auc_score

    from bodega.report.semantic_agreement import auc

    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 200).astype(bool)
    scores = np.round(rng.random(200), 1)  # with ties
    assert auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores))


@pytest.mark.skipif(not HUMAN.exists(), reason="../shared/data/human is absent (human judgments)")
def test_agreement_table_on_the_human_judgments(tmp_path, capsys):
    import pandas as pd
    from sklearn.metrics import roc_auc_score

    from bodega.report.semantic_agreement import read_human_pairs
    from bodega.scoring.text import align_texts, character_similarity

    out = tmp_path / "agreement.csv"
    assert main(["score-agreement", "--human", str(HUMAN), "--out", str(out),
                 "--candidates", "character,character-folded", "--bootstrap", "50"]) == 0
    table = pd.read_csv(out)
    assert table.candidate.tolist() == ["character", "character-folded"]
    pairs = read_human_pairs(HUMAN)
    assert len(pairs.labels) == 321
    # Independently: semantic = mean sentence-level character score; BODEGA = that x whole-text score.
    semantic = np.array([np.mean([character_similarity(a, b) for a, b in align_texts("FC", o, m)])
                         for o, m in zip(pairs.originals, pairs.adversarials)])
    whole = np.array([character_similarity(o, m) for o, m in zip(pairs.originals, pairs.adversarials)])
    assert table.auc_semantic[0] == pytest.approx(roc_auc_score(pairs.labels == 0, semantic), abs=1e-4)
    assert table.auc_bodega[0] == pytest.approx(roc_auc_score(pairs.labels == 0, semantic * whole), abs=1e-4)
    assert (table.auc_semantic_low <= table.auc_semantic).all()
    assert (table.auc_semantic <= table.auc_semantic_high).all()
    assert "| character-folded |" in capsys.readouterr().out


def test_human_pairs_reader_and_worked_examples_rule(tmp_path):
    import pandas as pd

    from bodega.report.semantic_agreement import Evaluation, read_human_pairs, worked_examples

    frame = pd.DataFrame({
        "original_samples": ["e. ~ a cat sat.", "e. ~ a dog ran.", "e. ~ it rained.", "e. ~ x y.", "e. ~ z."],
        "adversarial_samples": ["e. ~ ɑ cat sat.", "e. ~ a dog flew.", None, "e. ~ x q.", "e. ~ z."],
        "agreed_labels": [0, 1, 2, None, 0],
        "annotator1_stance": [0, 1, 2, 1, 1],
        "annotator2_stance": [0, None, 2, 1, 0],
    })
    frame.to_csv(tmp_path / "human.csv", index=False)
    pairs = read_human_pairs(tmp_path / "human.csv")
    assert pairs.labels.tolist() == [0, 1, 2, 0]  # the unlabelled row is left out
    assert pairs.adversarials[2] == ""  # a missing text is empty, not "nan"
    evaluation = Evaluation([], {"m": np.array([0.9, 0.5, 0.0, 1.0])}, {"m": np.array([0.8, 0.4, 0.0, 1.0])})
    chosen = worked_examples(pairs, evaluation)
    # Unchanged claims are never shown; per label a homoglyph pair first, then a plain one.
    assert [(e["row"], e["label"]) for e in chosen] == [(1, 0), (2, 1), (3, 2)]
    assert pairs.rows == [1, 2, 3, 5]
    from bodega.report.semantic_agreement import per_annotator

    # Annotator 1 calls only pair 1 (0.9) harmless: it beats 0.5 and 0.0 but not 1.0. Annotator 2 judged
    # three pairs and calls pairs 1 and 5 (0.9, 1.0) harmless, both above pair 3 (0.0).
    assert per_annotator(pairs, evaluation) == [
        {"annotator": "annotator1", "n_pairs": 4, "m": 2 / 3},
        {"annotator": "annotator2", "n_pairs": 3, "m": 1.0}]
    assert chosen[0]["semantic"] == {"m": 0.9} and chosen[0]["bodega"] == {"m": 0.8}
