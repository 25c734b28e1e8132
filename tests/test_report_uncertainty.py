"""Bootstrap intervals: the vectorised resampling equals a slow literal bootstrap on the same seeds.

The literal version below draws one resample at a time and recomputes each figure from BODEGA's
definition (metrics/BODEGAScore.py: successes, semantic and character averaged over successful
examples only, BODEGA score = mean of per-example scores with 0 for failures).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bodega.report.uncertainty import (Interval, RunExamples, difference_interval, distinguishable,
                                       mean_intervals, rank_attackers, run_examples, run_intervals)
from bodega.scoring.core import ExampleScore, summarise

B = 300


def write_run(root: Path, name: str, rows: list[tuple[bool, float, float, int]], ids: list[str] | None = None,
              start: int = 0) -> Path:
    """A run folder with ``scores.jsonl`` and ``records.jsonl``; rows are (success, semantic, character, queries)."""
    folder = root / name
    folder.mkdir(parents=True)
    scores, records = [], []
    for i, (success, semantic, character, queries) in enumerate(rows):
        index, ident = start + i, (ids[i] if ids else f"doc{(start + i) // 2}")  # ids repeat, as in PR2
        scores.append({"index": index, "id": ident, "success": success,
                       "semantic": semantic if success else None, "character": character if success else None,
                       "bodega": semantic * character if success else 0.0})
        records.append({"index": index, "id": ident, "success": success, "queries": queries})
    (folder / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[::-1]))
    return folder


def random_rows(seed: int, n: int, p: float) -> list[tuple[bool, float, float, int]]:
    rng = np.random.default_rng(seed)
    return [(bool(rng.random() < p), float(rng.uniform(0.3, 1)), float(rng.uniform(0.6, 1)),
             int(rng.integers(5, 900))) for _ in range(n)]


def literal_statistics(rows: list[dict]) -> dict[str, float]:
    """BODEGA's aggregation of a list of examples, written as BODEGAScore writes it."""
    successes, semantic, character, scores, queries = [], [], [], [], []
    for row in rows:
        queries.append(row["queries"])
        if not row["success"]:
            scores.append(0.0)
            successes.append(0.0)
        else:
            semantic.append(row["semantic"])
            character.append(row["character"])
            scores.append(row["semantic"] * row["character"])
            successes.append(1.0)

    def mean(values):
        return float(np.average(values)) if values else float("nan")

    return {"bodega": mean(scores), "confusion": mean(successes), "semantic": mean(semantic),
            "character": mean(character), "queries": mean(queries)}


def as_rows(run: RunExamples) -> list[dict]:
    return [{"success": bool(run.success[i]), "semantic": run.semantic[i], "character": run.character[i],
             "queries": run.queries[i]} for i in range(run.n)]


def literal_percentiles(draws: list[float]) -> tuple[float, float]:
    kept = [d for d in draws if not np.isnan(d)]
    return tuple(np.percentile(kept, [2.5, 97.5]))


def literal_mean_over_runs(runs: list[RunExamples], seed: int) -> dict[str, list[float]]:
    rng = np.random.default_rng(seed)
    per_run = []
    for run in runs:
        rows = as_rows(run)
        per_run.append([literal_statistics([rows[i] for i in rng.integers(0, run.n, size=run.n)]) for _ in range(B)])
    out = {}
    for measure in ("bodega", "confusion", "semantic", "character", "queries"):
        out[measure] = []
        for b in range(B):
            values = [stats[b][measure] for stats in per_run if not np.isnan(stats[b][measure])]
            out[measure].append(sum(values) / len(values) if values else float("nan"))
    return out


@pytest.fixture
def three_runs(tmp_path):
    return [run_examples(write_run(tmp_path, f"PR2-V{k}-X-U", random_rows(k, n, p)))
            for k, (n, p) in enumerate([(25, 0.6), (40, 0.3), (7, 0.15)])]


def test_reads_scores_and_queries_by_attack_row(tmp_path):
    run = run_examples(write_run(tmp_path, "PR2-BiLSTM-PWWS-U", [(True, 0.9, 0.8, 10), (False, 0.5, 0.5, 30)]))
    assert run.keys == ((0, "doc0"), (1, "doc0"))
    assert run.queries.tolist() == [10.0, 30.0]  # records were written in reverse order
    assert np.isnan(run.semantic[1]) and run.bodega[1] == 0.0


def test_missing_per_example_file_names_the_file_and_the_fix(tmp_path):
    folder = write_run(tmp_path, "FC-BERT-PWWS-T", [(True, 0.9, 0.8, 10)])
    (folder / "scores.jsonl").unlink()
    with pytest.raises(FileNotFoundError, match="scores.jsonl is missing.*bodega grid run"):
        run_examples(folder)


def test_point_estimates_are_bodegas_summary(three_runs):
    for run in three_runs:
        scores = [ExampleScore(bool(s), None if np.isnan(m) else m, None if np.isnan(c) else c, b)
                  for s, m, c, b in zip(run.success, run.semantic, run.character, run.bodega)]
        summary = summarise(scores, list(run.queries), 1.0, 1.0)
        got = run_intervals(run, resamples=10)
        assert got["bodega"].estimate == pytest.approx(summary.bodega_score)
        assert got["confusion"].estimate == pytest.approx(summary.success_score)
        assert got["semantic"].estimate == pytest.approx(summary.semantic_score)
        assert got["character"].estimate == pytest.approx(summary.character_score)
        assert got["queries"].estimate == pytest.approx(summary.queries_per_example)


@pytest.mark.parametrize("seed", [0, 7])
def test_one_run_equals_the_literal_bootstrap(three_runs, seed):
    run = three_runs[0]
    expected = literal_mean_over_runs([run], seed)
    got = run_intervals(run, resamples=B, seed=seed)
    for measure, draws in expected.items():
        assert (got[measure].low, got[measure].high) == pytest.approx(literal_percentiles(draws), abs=1e-12), measure


@pytest.mark.parametrize("seed", [0, 3])
def test_mean_over_victims_equals_the_literal_bootstrap(three_runs, seed):
    expected = literal_mean_over_runs(three_runs, seed)
    got = mean_intervals(three_runs, resamples=B, seed=seed)
    for measure, draws in expected.items():
        assert (got[measure].low, got[measure].high) == pytest.approx(literal_percentiles(draws), abs=1e-12), measure
    # the run with few successes has resamples without any: they leave the semantic mean, not zero it
    assert got["semantic"].low > 0.3


def literal_paired_difference(a: RunExamples, b: RunExamples, seed: int, paired: bool) -> list[float]:
    rng = np.random.default_rng(seed)
    rows_a, rows_b = as_rows(a), as_rows(b)
    where = {key: i for i, key in enumerate(b.keys)}
    picks_a = [rng.integers(0, a.n, size=a.n) for _ in range(B)]
    picks_b = [[where[a.keys[i]] for i in pick] for pick in picks_a] if paired else \
        [rng.integers(0, b.n, size=b.n) for _ in range(B)]

    def bodega(rows, pick):
        return literal_statistics([rows[i] for i in pick])["bodega"]

    return [bodega(rows_a, pa) - bodega(rows_b, pb) for pa, pb in zip(picks_a, picks_b)]


def test_difference_is_paired_over_the_same_rows_and_equals_the_literal_bootstrap(tmp_path):
    ids = [f"art{i}" for i in range(30)]
    a = run_examples(write_run(tmp_path, "A", random_rows(1, 30, 0.7), ids))
    rows_b = random_rows(2, 30, 0.5)
    b = run_examples(write_run(tmp_path, "B", rows_b, ids))
    # B's files list the same rows in another order: pairing is by (row index, id), not by position
    shuffled = run_examples(write_run(tmp_path, "B2", rows_b, ids))
    order = np.random.default_rng(0).permutation(30)
    shuffled = RunExamples("B2", tuple(shuffled.keys[i] for i in order), *(getattr(shuffled, f)[order] for f in
                           ("success", "semantic", "character", "bodega", "queries")))
    expected = literal_percentiles(literal_paired_difference(a, b, 5, paired=True))
    for other in (b, shuffled):
        got = difference_interval([a], [other], resamples=B, seed=5)
        assert (got.low, got.high) == pytest.approx(expected, abs=1e-12)


def test_difference_of_different_rows_is_independent_and_equals_the_literal_bootstrap(tmp_path):
    a = run_examples(write_run(tmp_path, "A", random_rows(1, 20, 0.7)))
    b = run_examples(write_run(tmp_path, "B", random_rows(2, 12, 0.5), start=100))
    expected = literal_percentiles(literal_paired_difference(a, b, 9, paired=False))
    got = difference_interval([a], [b], resamples=B, seed=9)
    assert (got.low, got.high) == pytest.approx(expected, abs=1e-12)


def test_identical_runs_are_not_distinguishable_and_a_clear_gap_is(tmp_path):
    rows = random_rows(4, 30, 0.5)
    a = run_examples(write_run(tmp_path, "A", rows))
    same = run_examples(write_run(tmp_path, "A2", rows))
    strong = run_examples(write_run(tmp_path, "S", [(True, 0.95, 0.95, 50)] * 30))
    assert difference_interval([a], [same], resamples=B) == Interval(0.0, 0.0, 0.0)
    assert not distinguishable(difference_interval([a], [same], resamples=B))
    assert distinguishable(difference_interval([strong], [a], resamples=B))


def test_ranking_marks_attackers_tied_with_the_best(tmp_path):
    base = random_rows(4, 30, 0.5)
    won, lost = [s for s, *_ in base].index(True), [s for s, *_ in base].index(False)
    near = [((not s), m, c, q) if i in (won, lost) else (s, m, c, q) for i, (s, m, c, q) in enumerate(base)]
    groups = {"Weak": [run_examples(write_run(tmp_path, "W", [(False, 0.5, 0.5, 5)] * 30))],
              "Near": [run_examples(write_run(tmp_path, "N", near))],
              "Top": [run_examples(write_run(tmp_path, "T", base))]}
    ranked = rank_attackers(groups, resamples=B)
    assert [r.attacker for r in ranked] == ["Top", "Near", "Weak"]
    assert [r.tied_with_best for r in ranked] == [True, True, False]
    assert ranked[2].behind_best.low > 0
    cheaper = [run_examples(write_run(tmp_path, "C", [(s, m, c, q - 1) for s, m, c, q in base]))]
    assert [r.attacker for r in rank_attackers({"Top": groups["Top"], "Cheaper": cheaper}, resamples=B)] == \
        ["Cheaper", "Top"]  # equal scores: fewer queries first
    # paired: a uniformly slightly weaker attacker on the same rows is distinguishable
    weaker = [run_examples(write_run(tmp_path, "L", [(s, m * 0.99, c, q) for s, m, c, q in base]))]
    assert not rank_attackers({"Top": groups["Top"], "Lower": weaker}, resamples=B)[1].tied_with_best


def test_interval_text_is_compact():
    assert Interval(0.5624, 0.49, 0.631).text() == "0.562 [0.490, 0.631]"
    assert Interval(float("nan"), float("nan"), float("nan")).text() == "–"


def test_a_run_without_examples_has_blank_figures_and_ranks_last(tmp_path):
    empty = run_examples(write_run(tmp_path, "E", []))
    got = run_intervals(empty, resamples=B)
    assert all(np.isnan(got[m].estimate) for m in got) and got["bodega"].text() == "–"
    some = run_examples(write_run(tmp_path, "S", [(True, 0.9, 0.9, 10)] * 5))
    ranked = rank_attackers({"Empty": [empty], "Some": [some]}, resamples=B)
    assert [r.attacker for r in ranked] == ["Some", "Empty"] and not ranked[1].tied_with_best


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-0.5"])
def test_a_nan_or_out_of_range_score_in_scores_jsonl_is_refused_naming_the_line(tmp_path, value):
    from bodega.errors import BodegaError

    folder = write_run(tmp_path, "run", [(True, 0.9, 0.8, 5), (True, 0.7, 0.9, 7), (False, 0.0, 0.0, 9)])
    lines = (folder / "scores.jsonl").read_text().splitlines()
    lines[1] = lines[1].replace('"bodega": 0.63', f'"bodega": {value}')
    (folder / "scores.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(BodegaError, match=r"scores.jsonl:2: 'bodega' must be a number in \[0, 1\]"):
        run_examples(folder)
