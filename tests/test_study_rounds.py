"""Study v4's round 2 as the design's rule picks it: undecided claims ranked by the CPU-hours their decision costs,
taken while the budget covers what each adds beyond the claims taken before it; prices from the ledgers."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from bodega_book.cost import LEDGER_COLUMNS, TRAINING
from bodega_book.findings import AGREE, CANNOT_TELL, Finding, Need
from bodega_book.study_rounds import (DESIGN_FACTOR, Price, Undecided, cell_prices, picks_table, plan_round,
                                      round_two_seeds, scale_factor, trainings_after, undecided)

BASE = {("PR2", v): 5 for v in ("BiLSTM", "BERT", "GEMMA2B", "GEMMA7B")}
PRICES = {("PR2", "BiLSTM"): Price(0.1, "s"), ("PR2", "BERT"): Price(0.4, "s"), ("PR2", "GEMMA2B"): Price(0.3, "s"),
          ("PR2", "GEMMA7B"): Price(1.3, "s")}


def claim(name: str, **targets: int | None) -> Undecided:
    return Undecided(name, "PR2", tuple(targets.items()))


def by_claim(picks):
    return {p.claim: p for p in picks}


def test_claims_are_ranked_by_the_cpu_hours_of_their_decision():
    picks = plan_round([claim("dear", GEMMA7B=9, BERT=9), claim("cheap", BiLSTM=9, GEMMA2B=7)], PRICES, BASE, 100)
    assert [p.claim for p in picks] == ["cheap", "dear"]
    assert picks[0].hours == pytest.approx(4 * 0.1 + 2 * 0.3) and picks[1].hours == pytest.approx(4 * 1.3 + 4 * 0.4)
    assert all(p.taken for p in picks)


def test_a_claim_pays_only_for_the_trainings_the_claims_before_it_did_not_add():
    picks = by_claim(plan_round([claim("first", BiLSTM=8, GEMMA2B=8), claim("second", BiLSTM=9, GEMMA2B=8,
                                                                            BERT=6)], PRICES, BASE, 100))
    assert picks["first"].extra_hours == pytest.approx(3 * 0.1 + 3 * 0.3)
    assert picks["second"].hours == pytest.approx(4 * 0.1 + 3 * 0.3 + 1 * 0.4)
    assert picks["second"].extra_hours == pytest.approx(1 * 0.1 + 1 * 0.4)  # BiLSTM 8 -> 9 and BERT 5 -> 6


def test_round_two_gives_the_grid_seeds_of_the_victims_it_raises_and_no_others():
    picks = plan_round([claim("cheap", BiLSTM=9, GEMMA2B=7), claim("far", GEMMA7B=30, BERT=30)], PRICES, BASE, 100)
    assert round_two_seeds(picks, BASE) == {"PR2-BiLSTM": list(range(9)), "PR2-GEMMA2B": list(range(7))}
    assert round_two_seeds(plan_round([claim("cheap", BiLSTM=9)], PRICES, BASE, 0.1), BASE) == {}


def test_the_budget_stops_a_claim_it_cannot_pay_for_and_takes_a_later_one_it_can():
    """Alone: a 1.0 (BiLSTM to 9, GEMMA2B to 7), b 2.6 (GEMMA7B to 7), c 3.2 (BiLSTM, GEMMA2B, BERT to 9). With
    3.5 CPU-hours: a is taken (2.5 left), b's 2.6 is not, c adds only 2.2 beyond a's trainings and is taken."""
    claims = [claim("c", BiLSTM=9, GEMMA2B=9, BERT=9), claim("b", GEMMA7B=7), claim("a", BiLSTM=9, GEMMA2B=7)]
    picks = plan_round(claims, PRICES, BASE, left_hours=3.5)
    assert [p.claim for p in picks] == ["a", "b", "c"]
    assert [p.taken for p in picks] == [True, False, True]
    assert picks[1].why == "beyond the budget: 2.6 CPU-hours with 2.5 left"
    assert picks[2].extra_hours == pytest.approx(2 * 0.3 + 4 * 0.4)
    assert trainings_after(picks, BASE) == {**BASE, ("PR2", "BiLSTM"): 9, ("PR2", "GEMMA2B"): 9, ("PR2", "BERT"): 9}


def test_a_claim_ten_trainings_cannot_decide_is_listed_last_and_never_taken():
    picks = plan_round([claim("far", BiLSTM=11, BERT=4), claim("flat", GEMMA7B=None, BERT=6),
                        claim("near", BERT=6)], PRICES, BASE, 1000)
    assert [(p.claim, p.taken) for p in picks] == [("near", True), ("far", False), ("flat", False)]
    assert math.isinf(picks[1].hours) and "needs 11 trainings per victim, more than the design's 10" in picks[1].why
    assert "more than 100" in picks[2].why
    table = picks_table(picks)
    assert list(table["trainings per victim"]) == ["BERT 5→6", "BiLSTM 5→11, BERT 5", "GEMMA7B 5→more than 100, "
                                                                                    "BERT 5→6"]


def test_a_claim_round_one_decides_costs_nothing():
    picks = plan_round([claim("done", GEMMA2B=4, GEMMA7B=5)], PRICES, BASE, 0.0)
    assert picks[0].hours == 0 and picks[0].taken and picks[0].why == "round 1's trainings suffice"


def need(difference: str, victims: tuple[str, ...], trainings: int | None) -> Need:
    return Need(difference, "PR2", victims, 0.975, 3, trainings)


def test_each_victim_needs_the_most_its_undecided_differences_ask():
    found = [Finding("q2-bilstm-PR2", "p", "PR2", "e", CANNOT_TELL, "r", "",
                     needs=(need("BiLSTM − GEMMA2B", ("BiLSTM", "GEMMA2B"), 9),
                            need("BiLSTM − GEMMA7B", ("BiLSTM", "GEMMA7B"), 7))),
             Finding("q4-targeting-FC", "p", "FC", "e", CANNOT_TELL, "r", "",
                     needs=(need("BERT", ("BERT",), 7), need("GEMMA7B", ("GEMMA7B",), None))),
             Finding("q2-bert-PR2", "p", "PR2", "e", AGREE, "r", "")]
    claims = undecided(found)
    assert [c.claim for c in claims] == ["q2-bilstm-PR2", "q4-targeting-FC"]
    assert dict(claims[0].targets) == {"BiLSTM": 9, "GEMMA2B": 9, "GEMMA7B": 7} and claims[0].trainings == 9
    assert claims[1].trainings is None


def ledger_rows(rows: list[tuple]) -> pd.DataFrame:
    """Ledger rows (task, victim, attacker, scenario, training, kernels, cpu_minutes), current markers."""
    frame = pd.DataFrame([{"kind": "attack", "name": "", "task": t, "victim": v, "attacker": a, "scenario": s,
                           "training": n, "kernels": k, "seconds": m * 60, "cpu_seconds": m * 60,
                           "wall_minutes": m, "cpu_minutes": m, "current": True, "source": "marker"}
                          for t, v, a, s, n, k, m in rows])
    return frame[LEDGER_COLUMNS]


V3 = ledger_rows([("PR2", "BERT", TRAINING, None, 0, "amx-bf16", 10.0),
                  ("PR2", "BERT", TRAINING, None, 1, "amx-bf16", 12.0),
                  ("PR2", "BERT", TRAINING, None, 2, "amx-bf16", 14.0),
                  ("PR2", "BERT", "BERT-ATTACK", "targeted", 1, "amx-bf16", 2.0),
                  ("PR2", "GEMMA2B", "DeepWordBug", "targeted", 0, "amx-bf16", 1.0),
                  ("PR2", "BiLSTM", TRAINING, None, 1, "fp32", 5.0)])


def test_prices_prefer_study_v4s_own_cells_and_scale_study_v3s_by_the_measured_bf16_factor():
    v4 = ledger_rows([("PR2", "BERT", TRAINING, None, 3, "avx512-bf16", 19.5),
                      ("PR2", "BiLSTM", TRAINING, None, 3, "fp32", 4.0)])
    factor, how = scale_factor(v4, V3)
    assert factor == pytest.approx(19.5 / 13.0) and "1 bf16 cells" in how  # the BiLSTM's fp32 cell is not counted
    prices = cell_prices(v4, V3, factor)
    assert prices[("PR2", "BERT", TRAINING, "")] == (19.5, "study v4")
    assert prices[("PR2", "BERT", "BERT-ATTACK", "targeted")] == (pytest.approx(2.0 * 1.5), "study v3")
    assert prices[("PR2", "GEMMA2B", "DeepWordBug", "targeted")][0] == pytest.approx(1.5)  # only training 0 in v3
    assert prices[("PR2", "BiLSTM", TRAINING, "")] == (4.0, "study v4")


def test_without_a_bf16_cell_in_study_v4_the_design_factor_scales():
    v4 = ledger_rows([("PR2", "BiLSTM", TRAINING, None, 3, "fp32", 4.0)])
    factor, how = scale_factor(v4, V3)
    assert factor == DESIGN_FACTOR and "the design's" in how
    assert cell_prices(v4, V3, factor)[("PR2", "BERT", TRAINING, "")][0] == pytest.approx(13.0 * 7 / 4.8)


def test_round_two_on_the_committed_study_v4():
    """End to end on the committed markers and cells: look 1 at 97.5%, the claims ranked by their cost alone,
    what round 2 takes within what the budget leaves, every retrained victim priced."""
    from pathlib import Path

    from bodega_book.study_rounds import round_two

    root = Path(__file__).resolve().parents[1]
    plan = round_two(root / "parameters/grid_study_v4.yaml", root / "results/study-v4", root / "results/study-v3")
    assert plan.level == pytest.approx(0.975) and plan.budget_hours == 40
    assert 0 < plan.spent_hours < plan.budget_hours and plan.round_one_hours >= 0
    assert plan.taken_hours <= plan.left_hours
    assert set(plan.prices) == {(t, v) for t in ("PR2", "FC", "RD") for v in ("BiLSTM", "BERT", "GEMMA2B", "GEMMA7B")
                                if (t, v) != ("FC", "BiLSTM")}
    alone = [p.hours for p in plan.picks]
    assert alone == sorted(alone) and all(p.claim.startswith(("q2-", "q4-")) for p in plan.picks)
    assert all(not p.taken for p in plan.picks if math.isinf(p.hours))


def test_the_kept_record_of_round_two_holds_what_the_design_page_shows(tmp_path):
    from bodega_book.page_data import read_page_data, write_page_data
    from bodega_book.study_rounds import RoundTwo, round_two_record

    picks = plan_round([claim("cheap", BiLSTM=9, GEMMA2B=7), claim("far", GEMMA7B=30, BERT=30)], PRICES, BASE, 100)
    record = round_two_record(RoundTwo(tuple(picks), 0.975, 40, 10, 0, 0.0, "1.2", PRICES, BASE), "g.yaml")
    write_page_data("study_round_two", tmp_path / "study_round_two.json", record)  # checked against its schema
    kept = read_page_data("study_round_two.json", tmp_path)
    assert kept["taken"] == ["cheap"] and kept["left_hours"] == 30
    assert kept["seeds"] == {"PR2-BiLSTM": list(range(9)), "PR2-GEMMA2B": list(range(7))}
    assert [row["claim"] for row in kept["picks"]] == ["cheap", "far"]


def test_the_grid_runs_the_round_two_that_look_1_planned():
    """The seeds look 1's kept plan names are the grid's, victim by victim: round 2 is the rule's pick, not a
    reading of the numbers."""
    from pathlib import Path

    from bodega.experiments import load_grid
    from bodega_book.page_data import read_page_data

    root = Path(__file__).resolve().parents[1]
    record = read_page_data("study_round_two.json", root / "book" / "data")
    trainings = load_grid(root / "parameters/grid_study_v4.yaml").plan.trainings
    for name, seeds in record["seeds"].items():
        task, victim = name.split("-", 1)
        assert list(trainings[(task, victim)]) == seeds, name
