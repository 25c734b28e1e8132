"""benchmarks/folding_effect.py on the smoke fixture's DeepWordBug runs (model-free stand-ins)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "tests" / "fixtures" / "results-smoke" / "runs"


def test_folding_effect_on_the_smoke_runs(tmp_path, capsys):
    script = load_benchmark("folding_effect")
    out = tmp_path / "folding.json"
    assert script.main(["--runs", str(RUNS), "--out", str(out), "--models", "character-folded,character",
                        "--bootstrap", "200"]) == 0
    result = json.loads(out.read_text())
    rows = {row["run"]: row for row in result["rows"]}
    assert sorted(rows) == ["PR2-BiLSTM-DeepWordBug-T", "PR2-BiLSTM-DeepWordBug-U"]
    for name, row in rows.items():
        records = [json.loads(line) for line in (RUNS / name / "records.jsonl").read_text().splitlines()]
        assert row["task"] == "PR2" and row["examples"] == len(records)
        assert row["successes"] == sum(r["success"] for r in records) > 0
        # DeepWordBug's look-alike letters: folding makes them (nearly) free for the semantic part
        assert row["semantic_folded"]["mean"] > row["semantic_plain"]["mean"]
        assert row["bodega_difference"]["mean"] == pytest.approx(
            row["bodega_folded"]["mean"] - row["bodega_plain"]["mean"])
        for key in ("semantic_folded", "semantic_plain", "bodega_folded", "bodega_plain", "bodega_difference"):
            estimate = row[key]
            assert estimate["low"] <= estimate["mean"] <= estimate["high"], (name, key)
    assert "PR2-BiLSTM-DeepWordBug-U" in capsys.readouterr().out


def test_a_homoglyph_only_edit_is_free_when_folded():
    """One record of the fixture whose only edits are look-alike letters: folded, the model sees no change."""
    from bodega.scoring import score_examples
    from bodega.scoring.semantic import build_semantic_model

    record = next(json.loads(line) for line in (RUNS / "PR2-BiLSTM-DeepWordBug-T" / "records.jsonl")
                  .read_text().splitlines() if json.loads(line)["index"] == 35)
    args = ("PR2", [record["original"]], [record["adversarial"]], [True])
    [folded] = score_examples(*args, build_semantic_model("character-folded"))
    [plain] = score_examples(*args, build_semantic_model("character"))
    assert folded.semantic == 1.0 and plain.semantic < 1.0
    assert folded.character == plain.character < 1.0  # the character score is never folded


def test_bootstrap_interval_of_a_mean():
    script = load_benchmark("folding_effect")
    values = np.array([0.0, 1.0, 1.0, 0.0])
    resamples = np.array([[0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 2, 3]])
    estimate = script.bootstrap(values, resamples)
    assert estimate.mean == 0.5 and estimate.low == pytest.approx(0.025) and estimate.high == pytest.approx(0.975)
    assert script.bootstrap(np.zeros(0), resamples[:, :0]).mean is None


def test_no_matching_run_is_an_error_that_says_what_to_pass(tmp_path):
    with pytest.raises(FileNotFoundError, match="--runs"):
        load_benchmark("folding_effect").main(["--runs", str(tmp_path), "--out", str(tmp_path / "x.json")])
