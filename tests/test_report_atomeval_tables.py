"""The AtomEval chapter's paper-shaped tables: Tables 5-9 built from tables runs of two verifiers, the paper's
values beside ours ("not in the available copy" where its copy has none), and Tables 3 and 4 against people."""
from __future__ import annotations

import json

import pytest

from bodega_book.atomeval_published import NOT_STATED, family_key, load_atomeval_published
from bodega_book.atomeval_tables import (ablation_people_table, case_table, diagnostics_table, main_facts,
                                           main_results_table, people_table, surface_table)

EVIDENCE = "Savages is a 2012 American film ."


def _record(i, family, flip, valid, kinds=()):
    return {"id": f"c{i}", "family": family, "claim": f"Claim {i} .", "evidence": EVIDENCE,
            "rewrite": f"Rewrite {i} of {family} .", "flip": flip, "valid": valid if flip else None,
            "diagnostics": [{"kind": k, "detail": "d"} for k in kinds], "judgements": [], "similarity": 0.9,
            "perplexity_claim": 10.0, "perplexity_rewrite": 12.0, "similar": True, "fluent": True}


def _verifier(root, name, kind, auc):
    folder = root / "models" / name
    folder.mkdir(parents=True)
    (folder / "victim.json").write_text(json.dumps({"name": name, "kind": kind, "base_role": kind.lower(),
                                                    "n_params": 1000, "weights_hash": name}))
    (folder / "metrics.json").write_text(json.dumps({"attack": {"accuracy": 0.8, "f1": 0.8},
                                                     "attack_quality": {"roc_auc": auc}}))
    return folder


@pytest.fixture(scope="module")
def main(tmp_path_factory):
    from bodega.report.atomeval_comparison import main_table

    root = tmp_path_factory.mktemp("atomeval")
    folders = [_verifier(root, "FC-BERT", "BERT", 0.9), _verifier(root, "FC-GEMMA7B", "GEMMA7B", 0.85)]
    for folder in folders:
        for rewriter in ("rules", "llm"):
            for family in ("colloquial", "omission"):
                out = root / "tables" / folder.name / rewriter / family
                out.mkdir(parents=True)
                # c1 flips in every cell of both verifiers: it is Table 9's claim
                records = [_record(0, family, rewriter == "llm", False, ["ScopeLoss"]), _record(1, family, True, True)]
                if folder.name == "FC-BERT":
                    records.append(_record(2, family, False, None))
                out.joinpath("records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
                out.joinpath("summary.json").write_text(json.dumps({"verifier": folder.name, "rewriter": rewriter,
                                                                    "profile": "cpu"}))
    return main_table(root / "tables", folders, ["rules", "llm"])


def test_table5_puts_the_papers_rows_under_ours_per_verifier(main):
    table = main_results_table(main, load_atomeval_published())
    bert, gemma = table.columns.get_level_values(0).unique()
    assert bert.startswith("BERT-based verifier") and gemma.startswith("Gemma-7B verifier")
    assert table.loc[("Colloquial/Lexical", "GPT-4.1 (paper)"), (bert, "ASR")] == "12.69"
    assert table.loc[("Colloquial/Lexical", "GPT-4.1 (paper)"), (gemma, "VASR")] == "2.40"
    assert table.loc[("Omission-style", "Mistral-7B (paper)"), (bert, "ASR")] == NOT_STATED
    # ours: a percentage with its exact interval; FC-BERT's population is three claims, FC-GEMMA7B's two
    assert table.loc[("Omission-style", "llm"), (bert, "ASR")].startswith("66.7 (")
    assert table.loc[("Omission-style", "llm"), (gemma, "VASR")].startswith("50.0 (")
    assert not table.isna().any().any()
    facts = main_facts(main)
    assert facts["bert_claims"] == 3 and facts["gemma7b_claims"] == 2 and facts["gemma7b_auc"] == "0.850"


def test_tables_6_to_8_take_the_papers_rows_of_the_matching_verifier(main):
    published = load_atomeval_published()
    bert = diagnostics_table(main, "FC-BERT", published)
    assert bert.loc[("Colloquial/Lexical", "GPT-4.1 (paper)"), "invalid, % (n)"] == "19.0 (8)"
    assert bert.loc[("Colloquial/Lexical", "llm"), "successes"] == "2"
    assert bert.loc[("Colloquial/Lexical", "llm"), "invalid, % (n)"] == "50.0 (1)"
    gemma = diagnostics_table(main, "FC-GEMMA7B", published)  # Table 6: shares only, "-" as null
    assert gemma.loc[("Colloquial/Lexical", "GPT-4.1 (paper)"), "EvDrift, % of invalid"] == "81.8"
    assert gemma.loc[("Colloquial/Lexical", "GPT-4.1 (paper)"), "successes"] == NOT_STATED
    assert surface_table(main, "FC-BERT", published).loc[
        ("Colloquial/Lexical", "GPT-4.1 (paper)"), "mean similarity"] == "0.880"
    assert surface_table(main, "FC-GEMMA7B", published).loc[
        ("Colloquial/Lexical", "GPT-4.1 (paper)"), "mean similarity"] == NOT_STATED


def test_table9_follows_the_claim_with_the_most_verdicts_across_families_and_rewriters(main):
    assert main["case"]["id"] == "c1"
    table = case_table(main)
    assert list(table.index) == [(f, r) for f in ("Colloquial/Lexical", "Omission-style") for r in ("rules", "llm")]
    assert set(table.iloc[0][[c for c in table.columns if "role" in c]]) == {"flipped"}


def test_tables_3_and_4_show_ours_beside_the_papers_rows():
    published = load_atomeval_published()
    row = {"name": "AtomEval gate (claim)", "n": 10, "precision": 0.5, "recall": 1.0, "f1": 2 / 3, "accuracy": 0.6,
           "roc_auc": 0.7, "predicted_share": 0.8}
    people = people_table({"rows": [row, {**row, "name": "BODEGA semantic score", "accuracy": None}]}, published)
    assert people.loc[("validity gate", "ours (claim; 10 pairs)"), "F1"] == "66.67"
    assert people.loc[("validity gate", "paper (BinaryGate)"), "accuracy"] == "87.50"
    assert people.loc[("EvDrift", "ours"), "precision"] == "no human labels" and len(people) == 8
    ablation = ablation_people_table({"rows": [{**row, "setting": "defaults"},
                                               {**row, "setting": "without the matching step", "f1": 0.5}]}, published)
    assert ablation.loc[("the full gate", "ours (claim)"), "valid"] == "80.00"
    assert ablation.loc[("without the matching step", "paper (w/o BinaryGate/NLI)"), "valid"] == "47.00"
    assert ("without the atom extractor", "ours (claim)") not in ablation.index  # not measured: no row


def test_the_papers_family_labels_map_to_ours():
    assert [family_key(label) for label in ("Colloquial/Lexical", "DeSePtion", "GEM-style FactMix", "AdvAdd")] == [
        "colloquial", "deseption", "factmix", "advadd"]
    published = load_atomeval_published()
    assert published.main_cell("BiLSTM", "colloquial", "GPT-4.1") is None  # no paper verifier in that role


def test_a_rewriter_one_verifier_has_not_judged_reads_not_judged(main):
    import copy

    partial = copy.deepcopy(main)
    gemma = partial["verifiers"]["FC-GEMMA7B"]
    for key in ("metrics", "diagnostics", "surface"):
        gemma[key] = [row for row in gemma[key] if row["rewriter"] != "llm"]
    published = load_atomeval_published()
    table = main_results_table(partial, published)
    group = table.columns.get_level_values(0).unique()[1]
    assert table.loc[("Omission-style", "llm"), (group, "VASR")] == "not judged"
    assert set(diagnostics_table(partial, "FC-GEMMA7B", published).loc[("Omission-style", "llm")]) == {"not judged"}
    assert set(surface_table(partial, "FC-GEMMA7B", published).loc[("Omission-style", "llm")]) == {"not judged"}


def test_the_papers_table_1_and_figure_1_example_are_read_for_the_chapter():
    published = load_atomeval_published()
    assert published.splits["attack"] == {"supported": 0, "refuted": 400, "total": 400}
    assert all(row["supported"] + row["refuted"] == row["total"] for row in published.splits.values())
    assert "Reign Over Me" in published.statements["figure1-example"]
