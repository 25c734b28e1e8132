"""The AtomEval chapter's values and tables from the files AtomEval writes."""
from __future__ import annotations

import pytest

from types import SimpleNamespace

from bodega.errors import BodegaError
from bodega_book.atomeval_page import (agreement_before_after, agreement_facts, extractor_comparison,
                                         llm_gold_facts, rewriter_cases_table, rewriter_cost_table,
                                         rewriter_facts, rewriter_metrics_table, slot_agreement_table)

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


def test_llm_gold_facts_and_slot_table_state_the_run():
    llm_gold = {"per_split": None, "spec": "transformers:qwen", "n": {"all": 10},
                "accuracy": {"all": 0.3, "test": 0.25}, "correct": {"all": 3},
                "llm": {"invalid_after_retries": 1, "calls": 12, "retries": 2}, "precision": "bf16",
                "cost": {"cpu_seconds": 90.0}, "slot_agreement": {"subject": 0.8, "relation": 0.456}}
    facts = llm_gold_facts(llm_gold)
    assert facts["llm_gold_acc"] == "30.0%" and facts["llm_gold_acc_test"] == "25.0%"
    assert facts["llm_gold_cpu_minutes"] == "1.5" and facts["llm_gold_precision"] == "bf16"
    spacy = {"slot_agreement": {"subject": 1.0, "relation": 0.9}}
    table = slot_agreement_table(spacy, llm_gold)
    assert table.loc["LLM (transformers:qwen)", "relation"] == "0.456"
    assert table.loc["dependency parse (spaCy)", "subject"] == "1.000"


def test_the_rewriter_comparison_tables_show_intervals_cases_and_cost():
    row = {"rewriter": "qwen", "family": "omission", "claims": 10}
    for name, (value, low, high) in {"ASR": (0.5, 0.19, 0.81), "S-ASR": (0.2, 0.03, 0.56), "P-ASR": (0.4, 0.12, 0.74),
                                     "VASR": (0.1, 0.0, 0.45), "gap": (0.4, 0.12, 0.74)}.items():
        row.update({name: value, f"{name} low": low, f"{name} high": high})
    comparison = {"metrics": [row, {**row, "rewriter": "rules", "VASR": None}], "runs": {"rules": "a", "qwen": "b"},
                  "families": ["omission"], "populations": {"omission": {"common": 10}},
                  "cases": [{"rewriter": "qwen", "family": "omission", "claim": "X is only a film .", "evidence": "e",
                             "rewrite": "X is a film .", "valid": False, "diagnostics": ["ScopeLoss: only"],
                             "atoms": [{"original": "X | be | film", "preserved": False, "via": None,
                                        "best rewrite atom": "X | be | film"}]}],
                  "cost": [{"rewriter": "qwen", "family": "omission", "claims": 10, "generated": 10, "cpu_minutes": 1.5,
                            "tokens_per_second": 4.0}]}
    table = rewriter_metrics_table(comparison)
    assert table.loc[("Omission-style", "qwen"), "ASR"] == "0.500 [0.190, 0.810]"
    assert table.loc[("Omission-style", "qwen"), "ASR-VASR gap"] == "0.400 [0.120, 0.740]"
    assert table.loc[("Omission-style", "rules"), "VASR"] == "–"
    cases = rewriter_cases_table(comparison)
    assert cases.loc[0, "atoms"] == "X | be | film -> lost" and cases.loc[0, "verdict"] == "invalid"
    assert rewriter_cost_table(comparison).loc[("qwen", "Omission-style"), "cpu_minutes"] == 1.5
    for r in comparison["metrics"]:
        r.update({"ASR count": 5, "VASR count": 1, "gap count": 4, "copies": 2, "copies flipped": 0})
    assert rewriter_facts(comparison) == {"cmp_claims_min": 10, "cmp_claims_max": 10, "cmp_rewriters": "rules, qwen",
                                          "cmp_families": 1, "cmp_rules_asr": "0.500", "cmp_rules_vasr": "0.100",
                                          "cmp_rules_gap": "0.400", "cmp_rules_copies": "20.0%", "cmp_rules_n": 10,
                                          "cmp_rules_copies_flipped": 0, "cmp_qwen_copies_flipped": 0,
                                          "cmp_qwen_asr": "0.500", "cmp_qwen_vasr": "0.100", "cmp_qwen_gap": "0.400",
                                          "cmp_qwen_copies": "20.0%", "cmp_qwen_n": 10,
                                          "cmp_decode_cpu_minutes": "2"}


def _verifier(folder, kind, accuracy, auc, competent):
    import json

    folder.mkdir(parents=True)
    (folder / "victim.json").write_text(json.dumps({"kind": kind, "base_role": kind.lower(), "n_params": 1}))
    (folder / "metrics.json").write_text(json.dumps({"attack": {"accuracy": accuracy, "f1": accuracy},
                                                     "attack_quality": {"roc_auc": auc, "competent": competent}}))
    return folder


def test_verifier_choice_takes_the_competent_one_with_the_best_auc(tmp_path):
    import pytest

    from bodega.report.atomeval_comparison import verifier_choice

    small = _verifier(tmp_path / "FC-MiniLM", "MiniLM", 0.74, 0.81, True)
    big = _verifier(tmp_path / "FC-BERT", "BERT", 0.86, 0.93, True)
    lucky = _verifier(tmp_path / "FC-BiLSTM", "BiLSTM", 0.90, 0.95, False)  # not competent: never chosen
    choice = verifier_choice([small, big, lucky], tmp_path / "choice.json")
    assert choice["chosen"] == "FC-BERT"
    assert [c["roc_auc"] for c in choice["candidates"]] == [0.81, 0.93, 0.95]
    assert (tmp_path / "choice.json").exists()
    assert verifier_choice([small])["chosen"] == "FC-MiniLM"
    with pytest.raises(BodegaError, match="competent"):
        verifier_choice([lucky])


def test_extractor_agreement_table_pairs_the_extractors_on_the_same_pairs():
    from bodega.atomeval.runs import RECORD_MODES
    from bodega_book.atomeval_page import extractor_agreement_table

    def records(scores, valid):  # the modes `bodega atomeval agreement` writes
        return [{"mode": mode, "row": row, "preserves": row % 2 == 0, "valid": v, "score": s}
                for mode in RECORD_MODES.values() for row, (s, v) in enumerate(zip(scores, valid))]

    perfect = records([1.0, 0.0, 0.9, 0.1, 0.8, 0.2], [True, False, True, False, True, False])
    # the second extractor failed on one pair's claim: the table compares the pairs both have
    worse = [r for r in records([0.5, 0.5, 0.9, 0.9, 0.1, 0.2], [True, True, True, True, False, False])
             if not (r["mode"] == "claim" and r["row"] == 5)]
    table = extractor_agreement_table({"spacy": ({"cost": {"cpu_seconds": 60.0}}, perfect),
                                       "llm": ({"cost": {"cpu_seconds": 600.0}, "failed_extractions": 1}, worse)},
                                      resamples=200)
    assert table.loc[("claim", "spacy"), "pairs"] == 5 and table.loc[("claim and evidence", "llm"), "pairs"] == 6
    assert table.loc[("claim", "spacy"), "ROC AUC"].startswith("1.000")
    assert table.loc[("claim", "spacy"), "AUC minus first"] == "–"
    assert table.loc[("claim and evidence", "llm"), "AUC minus first"].startswith("-0.556")
    assert table.loc[("claim", "llm"), "CPU minutes"] == 10.0 and table.loc[("claim", "llm"), "failed extractions"] == 1


def test_extractor_agreement_facts_refuse_different_samples_and_scale_the_cost():
    from bodega_book.atomeval_page import extractor_agreement_facts

    spacy = ({"sample": {"n": 60, "of": 321, "seed": 0}, "cost": {"cpu_seconds": 9.0}}, [])
    llm = ({"sample": {"n": 60, "of": 321, "seed": 0}, "cost": {"cpu_seconds": 1200.0}}, [])
    assert extractor_agreement_facts({"a": spacy, "b": llm}) == {
        "xagree_pairs": 60, "xagree_of": 321, "xagree_seed": 0, "xagree_full_cpu_hours": "1.8"}
    # a resumed run measured only the texts it asked: 30 of 40 asked (5 retries), 10 from the cache
    resumed = ({"sample": {"n": 60, "of": 321, "seed": 0}, "cost": {"cpu_seconds": 900.0},
                "extraction": {"calls": 35, "retries": 5, "cached": 10}}, [])
    assert extractor_agreement_facts({"a": spacy, "b": resumed})["xagree_full_cpu_hours"] == "1.8"
    with pytest.raises(BodegaError, match="different samples"):
        extractor_agreement_facts({"a": spacy, "b": ({**llm[0], "sample": {"n": 30, "of": 321, "seed": 0}}, [])})
