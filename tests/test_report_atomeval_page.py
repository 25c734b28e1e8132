"""The AtomEval chapter's values and tables from the files AtomEval writes."""
from __future__ import annotations

from types import SimpleNamespace

from bodega.report.atomeval_page import (agreement_before_after, agreement_facts, extractor_comparison,
                                         llm_gold_facts, llm_rewriter_facts, rewriters_side_by_side)

ROWS = [{"name": "AtomEval gate (claim)", "f1": 0.61234, "roc_auc": 0.7},
        {"name": "AtomEval gate (claim and evidence)", "f1": 0.5, "roc_auc": 0.65},
        {"name": "BODEGA semantic score (x)", "f1": None, "roc_auc": 0.8}]


def test_agreement_facts_name_the_gate_modes_of_each_report():
    facts = agreement_facts({"after": {"rows": ROWS}, "initial": {"rows": ROWS[:1]}})
    assert facts == {"agree_after_claim_f1": "0.612", "agree_after_claim_auc": "0.700", "agree_after_both_f1": "0.500",
                     "agree_after_both_auc": "0.650", "agree_initial_claim_f1": "0.612",
                     "agree_initial_claim_auc": "0.700"}
    table = agreement_before_after({"before": {"rows": ROWS}})
    assert list(table.index) == [r["name"] for r in ROWS[:2]]  # a score without a decision has no F1


def test_extractors_are_compared_on_the_same_claims():
    subset = [SimpleNamespace(id="a", split="dev"), SimpleNamespace(id="b", split="dev"),
              SimpleNamespace(id="c", split="test")]
    gold = {"errors": [{"id": "b"}, {"id": "z"}]}  # z: outside the subset
    llm = {"spec": "smollm2", "errors": [{"id": "a"}, {"id": "c"}]}
    table = extractor_comparison(gold, llm, subset)
    assert table.loc["dependency parse (spaCy)"].tolist() == ["1/2 = 0.500", "1/1 = 1.000", "2/3 = 0.667"]
    assert table.loc["LLM (smollm2)", "all"] == "1/3 = 0.333"


def test_llm_gold_facts_count_answers_and_copied_example_atoms():
    llm_gold = {"per_split": 5, "n": {"all": 10}, "accuracy": {"all": 0.3}, "correct": {"all": 3},
                "llm": {"invalid_after_retries": 1, "calls": 12, "retries": 2},
                "slot_agreement": {"subject": 0.8, "relation": 0.456},
                "errors": [{"error": "no JSON", "predicted": []},
                           {"error": None, "predicted": ["x | write | y", "x direct y"]},
                           {"error": None, "predicted": ["a | is | b"]}]}
    facts = llm_gold_facts(llm_gold)
    assert facts["llm_gold_valid"] == 5 and facts["llm_gold_copies"] == 1  # 2 answered errors + 3 correct
    assert facts["llm_gold_acc"] == "30.0%" and facts["llm_gold_relation"] == "0.46"


def test_the_rewriters_side_by_side_and_where_the_llm_flips_more():
    metrics = [{"family": f, "rewriter": r, "ASR": asr} for f, r, asr in
               (("omission", "llm:smollm2", 0.5), ("omission", "rules", 0.2),
                ("advadd", "llm:smollm2", 0.1), ("advadd", "rules", 0.3))]
    facts = llm_rewriter_facts({"claims": 8, "metrics": metrics,
                                "examples": [{"family": "omission"}, {"family": "omission"}, {"family": "advadd"}]})
    assert facts == {"llm_claims": 8, "llm_more_flips": 1, "llm_families": 2, "llm_examples": 2}
    table = rewriters_side_by_side(metrics, ["ASR"])
    assert table.loc["Omission-style", ("ASR", "SmolLM2")] == 0.5 and table.loc["AdvAdd", ("ASR", "rules")] == 0.3
