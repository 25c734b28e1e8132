"""ASR / VASR / S-ASR / P-ASR on hand-made rewrites with a rule verifier, the rule rewriters, and
VASR of attack records."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bodega.atomeval.attack_runs import runs_vasr
from bodega.atomeval.metrics import (MetricsConfig, RewriteCase, diagnostic_breakdown, diagnostics_table_row, evaluate,
                              surface_proxies, threshold_sweep)
from bodega.atomeval.rewriters import FAMILIES, RuleRewriter
from bodega.tasks import split_pair
from bodega.errors import BodegaError, MissingFileError, UnknownNameError

EVIDENCE = "Savages is a 2012 American crime thriller film directed by Oliver Stone ."


class KeywordVerifier:
    """Says 'refuted' (1) unless the claim mentions 'American' or 'film' (a brittle verifier)."""

    name, task, weights_hash = "keyword", "FC", "none"

    def predict(self, texts):
        return np.array([0 if any(w in split_pair(t)[1] for w in ("American", "film")) else 1 for t in texts])


class FixedSimilarity:
    def __init__(self, values):
        self.values = values

    def score(self, pairs):
        return np.array([self.values[b] for _, b in pairs])


class LengthPerplexity:
    def perplexity(self, texts):
        return np.array([float(len(t)) for t in texts])


def test_metrics_count_flips_valid_similar_and_fluent(gate):
    cases = [
        RewriteCase("1", "Savages is a German movie .", EVIDENCE, "Savages is a German film ."),   # flip, valid
        RewriteCase("2", "Savages is a German movie .", EVIDENCE, "Savages is an American movie ."),  # flip, drift
        RewriteCase("3", "Savages is a German movie .", EVIDENCE, "Savages is a German picture ."),  # no flip
        RewriteCase("4", "Savages is a German movie .", EVIDENCE, None),                             # no rewrite
        RewriteCase("5", "Savages is an American movie .", EVIDENCE, "Savages is a movie ."),        # not in population
    ]
    sims = {"Savages is a German film .": 0.95, "Savages is an American movie .": 0.85,
            "Savages is a German picture .": 0.9}
    summary, records = evaluate(cases, KeywordVerifier(), gate, FixedSimilarity(sims), LengthPerplexity(),
                                MetricsConfig(similarity_threshold=0.9, perplexity_ratio=1.1))
    assert summary["claims"] == 4 and summary["flips"] == 2
    assert summary["rewrites"]["n"] == 3 and summary["rewrites"]["invalid share"] == pytest.approx(1 / 3)
    assert summary["ASR"] == pytest.approx(0.5)
    assert summary["VASR"] == pytest.approx(0.25)
    assert summary["S-ASR"] == pytest.approx(0.25)   # only case 1 reaches 0.9
    assert summary["P-ASR"] == pytest.approx(0.25)   # 30 > 1.1 x 27 characters: case 2 is not fluent
    by_id = {r["id"]: r for r in records}
    assert by_id["1"]["valid"] and not by_id["2"]["valid"]
    assert any(d["kind"] == "EvDrift" for d in by_id["2"]["diagnostics"])
    # one invalid flip: counted, but too few for a share (the paper's "–")
    assert summary["diagnostics"]["EvDrift count"] == 1 and summary["diagnostics"]["EvDrift"] is None
    assert surface_proxies(records)["similarity: pass but invalid"] == 0
    _, loose = evaluate(cases, KeywordVerifier(), gate, FixedSimilarity(sims), None,
                        MetricsConfig(similarity_threshold=0.8))
    proxies = surface_proxies(loose)
    assert proxies["similarity: pass but invalid"] == 1 and proxies["perplexity: pass"] == 0


def _judged(valid, *kinds):
    return {"valid": valid, "diagnostics": [{"kind": k} for k in kinds]}


def test_diagnostics_use_the_papers_denominators():
    """Tables 6 and 8: EvDrift / ScopeLoss over invalid successes, EvEnt / UnverAdd over valid ones."""
    invalid = [_judged(False, "EvDrift")] * 4 + [_judged(False, "ScopeLoss")] * 3 + [_judged(False, "UnverAdd")]
    valid = [_judged(True, "UnverAdd")] + [_judged(True, "EvEnt")] * 17 + [_judged(True)] * 16
    breakdown = diagnostic_breakdown(invalid + valid)
    assert (breakdown["n"], breakdown["invalid"], breakdown["valid"]) == (42, 8, 34)
    assert round(100 * breakdown["EvDrift"], 1) == 50.0      # 4 of 8 invalid, not 4 of 42 successes
    assert round(100 * breakdown["ScopeLoss"], 1) == 37.5
    assert round(100 * breakdown["UnverAdd"], 1) == 2.9      # 1 of 34 valid; the invalid one counted apart
    assert round(100 * breakdown["EvEnt"], 1) == 50.0
    assert breakdown["UnverAdd (invalid) count"] == 1 and breakdown["EvEnt (invalid) count"] == 0
    row = diagnostics_table_row(breakdown)
    assert row["EvDrift (% of invalid)"] == "50.0 (4)" and row["UnverAdd (% of valid)"] == "2.9 (1)"
    # fewer than five rewrites in a subset: no share
    few = diagnostic_breakdown(invalid[:4] + valid)
    assert few["EvDrift"] is None and few["EvDrift count"] == 4
    assert diagnostics_table_row(few)["EvDrift (% of invalid)"] == "–"
    assert diagnostics_table_row({**few, "EvDrift": float("nan")})["EvDrift (% of invalid)"] == "–"  # via pandas
    assert diagnostic_breakdown(invalid[:4] + valid, min_subset=4)["EvDrift"] == 1.0


def test_threshold_sweep_moves_only_the_surface_metrics():
    def record(flip, valid, similarity, ratio):
        return {"flip": flip, "valid": valid, "similarity": similarity, "perplexity_claim": 10.0,
                "perplexity_rewrite": 10.0 * ratio}

    records = [record(True, True, 0.95, 1.0), record(True, False, 0.7, 1.3), record(True, False, 0.55, 2.5),
               record(False, None, 0.99, 1.0)]
    rows = threshold_sweep(records, similarity_thresholds=(0.5, 0.7, 0.9), perplexity_ratios=(1.0, 1.5, 3.0))
    by = {(r["threshold"], r["value"]): r for r in rows}
    assert all(r["ASR"] == pytest.approx(3 / 4) and r["VASR"] == pytest.approx(1 / 4) for r in rows)
    assert [by[("similarity", v)]["S-ASR"] for v in (0.5, 0.7, 0.9)] == pytest.approx([3 / 4, 2 / 4, 1 / 4])
    assert [by[("perplexity ratio", v)]["P-ASR"] for v in (1.0, 1.5, 3.0)] == pytest.approx([1 / 4, 2 / 4, 3 / 4])


def test_rule_rewriters_are_deterministic_and_do_what_their_family_says(gate):
    rewriter = RuleRewriter()
    claim = "Savages was exclusively a German film ."
    outputs = {f: rewriter.rewrite(claim, EVIDENCE, f) for f in FAMILIES}
    assert outputs == {f: rewriter.rewrite(claim, EVIDENCE, f) for f in FAMILIES}
    assert outputs["omission"] == "Savages was a German film ."
    assert gate.judge(claim, outputs["omission"]).has("ScopeLoss")
    assert "American" in outputs["factmix"] and not gate.judge(claim, outputs["factmix"], EVIDENCE).valid
    advadd = gate.judge(claim, outputs["advadd"], EVIDENCE)
    assert advadd.valid and advadd.has("UnverAdd")
    deseption = gate.judge(claim, outputs["deseption"], EVIDENCE)
    assert deseption.valid and deseption.has("EvEnt")
    assert outputs["colloquial"] != claim
    with pytest.raises(UnknownNameError, match="unknown family"):
        rewriter.rewrite(claim, EVIDENCE, "poetry")


class _FirstDecisions:
    """A victim whose first decision on a text is fixed: SUPPORTS (0) for the texts it names."""

    weights_hash = "fixed"

    def __init__(self, supports):
        self.supports = set(supports)

    def predict(self, texts):
        return np.array([0 if t in self.supports else 1 for t in texts])


def _run_json(folder: Path, victim: str, scenario: str, weights: str = "") -> None:
    """The ``run.json`` bodega attack writes, for a PWWS run of ``victim`` in ``scenario``."""
    from bodega.records import RunConfig, write_run_config

    write_run_config(folder, RunConfig(task="FC", victim=victim, victim_weights=weights, victim_task="FC",
                                       attacker="PWWS", scenario=scenario, profile="cpu", n_examples=None,
                                       budget=None, seed=0, backend="native", attacker_options={}))


def test_attack_vasr_counts_only_initially_correct_refuted_claims(gate, tmp_path):
    from bodega.data.tsv import Example, write_tsv

    ev = "Michigan is a state in the Great Lakes region ."
    claim = f"{ev} ~ Michigan is not a U.S. state ."
    wrong = f"{ev} ~ Michigan is not a state ."
    supports = f"{ev} ~ Michigan is a state ."
    records = [
        {"index": 0, "id": "a", "original": claim, "adversarial": f"{ev} ~ Michigan is not a U.S. sttae .",
         "success": True, "error": None},                                            # typo: valid
        {"index": 1, "id": "b", "original": claim, "adversarial": f"{ev} ~ Michigan is a U.S. state .",
         "success": True, "error": None},                                            # negation dropped
        {"index": 2, "id": "c", "original": claim, "adversarial": None, "success": False, "error": None},
        {"index": 3, "id": "d", "original": claim,
         "adversarial": "Michigan is a city . ~ Michigan is not a U.S. state .",
         "success": True, "error": None},                                            # evidence edited
        {"index": 4, "id": "e", "original": supports, "adversarial": f"{ev} ~ Michigan is a sttae .",
         "success": True, "error": None},                                            # SUPPORTS: excluded
        {"index": 5, "id": "f", "original": wrong, "adversarial": f"{ev} ~ Michigan is not a sttae .",
         "success": True, "error": None},                                            # victim wrong at start
        {"index": 6, "id": "g", "original": claim, "adversarial": None, "success": False,
         "error": "RuntimeError: boom"},                                             # attack error
    ]
    data = tmp_path / "FC"
    data.mkdir()
    write_tsv(data / "attack.tsv", [Example(0 if r["id"] == "e" else 1, r["id"], r["original"]) for r in records])
    runs = tmp_path / "runs"
    untargeted = runs / "FC-BERT-PWWS-U"
    untargeted.mkdir(parents=True)
    (untargeted / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    _run_json(untargeted, "models/FC-BERT", "untargeted", weights="fixed")
    victims = {"models/FC-BERT": _FirstDecisions([supports, wrong])}
    (row,) = runs_vasr(runs, gate, data_dir=data, victims=victims)
    assert (row["records"], row["supports excluded"], row["victim errors"], row["attack errors"]) == (7, 1, 1, 1)
    assert row["population"] == 4 and row["successes"] == 3 and row["valid"] == 1
    assert row["ASR"] == pytest.approx(3 / 4) and row["VASR"] == pytest.approx(1 / 4)  # not 4/7 and 2/7
    claim_only = runs_vasr(runs, gate, data_dir=data, victims=victims, check_evidence=False)[0]
    assert claim_only["VASR"] == pytest.approx(2 / 4)
    # a targeted run attacked only refuted rows its victim got right: no victim needed
    targeted = runs / "FC-BERT-PWWS-T"
    targeted.mkdir()
    (targeted / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:4]))
    _run_json(targeted, "gone/FC-BERT", "targeted")
    rows = {r["run"]: r for r in runs_vasr(runs, gate, data_dir=data, victims=victims)}
    assert rows["FC-BERT-PWWS-T"]["population"] == 4 and rows["FC-BERT-PWWS-T"]["VASR"] == pytest.approx(1 / 4)
    # bodega attack stores the victim relative to the run folder: found from any working folder
    (runs / "models" / "FC-BERT").mkdir(parents=True)
    _run_json(untargeted, "../models/FC-BERT", "untargeted")
    resolved = str((runs / "models" / "FC-BERT").resolve())
    rows = {r["run"]: r for r in runs_vasr(runs, gate, data_dir=data,
                                           victims={resolved: _FirstDecisions([supports, wrong])})}
    assert rows["FC-BERT-PWWS-U"]["population"] == 4
    # an untargeted run whose victim is not here cannot be counted on the paper's population
    _run_json(untargeted, "gone/FC-BERT", "untargeted")
    with pytest.raises(FileNotFoundError, match="initially correct refuted"):
        runs_vasr(runs, gate, data_dir=data)
    # a damaged or missing run.json is one line naming it, not a JSON traceback
    (untargeted / "run.json").write_text('{"victim": "gone/FC-BERT", "scen')
    with pytest.raises(BodegaError, match=r"FC-BERT-PWWS-U/run.json: not a JSON file"):
        runs_vasr(runs, gate, data_dir=data)
    (untargeted / "run.json").unlink()
    with pytest.raises(MissingFileError, match=r"FC-BERT-PWWS-U/run.json is missing"):
        runs_vasr(runs, gate, data_dir=data)
    _run_json(untargeted, "gone/FC-BERT", "untargeted")
    # records of another data folder are refused
    write_tsv(data / "attack.tsv", [Example(1, "zz", claim)])
    with pytest.raises(BodegaError, match="--data"):
        runs_vasr(runs, gate, data_dir=data, victims=victims)


class _MapRewriter:
    """Rewrites from a fixed table; with ``batched`` it offers ``rewrite_many`` and records chunk sizes."""

    def __init__(self, name, table, batched=False):
        self.name, self.table, self.chunks = name, table, []
        if batched:
            self.rewrite_many = self._many

    def rewrite(self, claim, evidence, family):
        return self.table.get(claim)

    def _many(self, pairs, family):
        self.chunks.append(len(pairs))
        return [self.table.get(claim) for claim, _ in pairs]


def test_compare_rewriters_counts_the_same_claims_for_both(gate, tmp_path):
    from bodega.atomeval.runs import run_tables
    from bodega.atomeval.tables import compare_rewriters
    from bodega.atomeval.fever import Claim

    claims = [Claim(f"c{i}", text, EVIDENCE) for i, text in enumerate(
        ["Savages was exclusively a German film .", "Savages was directed by Oliver Stone in 2011 .",
         "Savages is a French thriller .", "Savages is a German drama ."])]
    llm = _MapRewriter("llm (fake)", {claims[0].claim: "Savages was a German film .",
                                      claims[2].claim: "Savages is a French American thriller ."}, batched=True)
    rules = _MapRewriter("rules", {c.claim: c.claim.replace("Savages", "Savages , honestly ,") for c in claims})
    run_tables(claims[:3], KeywordVerifier(), "keyword", gate, llm, ["omission"], tmp_path / "llm",
               with_surface=False)
    run_tables(claims, KeywordVerifier(), "keyword", gate, rules, ["omission"], tmp_path / "rules",
               with_surface=False)
    assert llm.chunks == [3]  # asked together
    result = compare_rewriters(tmp_path / "llm", tmp_path / "rules", tmp_path / "cmp.json")
    by_name = {row["rewriter"]: row for row in result["metrics"]}
    # claims[0] is initially "supported" (mentions film); the baseline also has claims[3]: 1 and 2 are counted
    assert by_name["llm (fake)"]["claims"] == by_name["rules"]["claims"] == 2
    assert by_name["llm (fake)"]["rewritten"] == 1 and by_name["llm (fake)"]["flips"] == 1
    assert by_name["llm (fake)"]["VASR"] == 0.5  # the added "American" flips it and keeps every atom
    assert json.loads((tmp_path / "cmp.json").read_text())["claims"] == 2
    assert result["populations"] == {"omission": {"run": 2, "baseline": 3, "common": 2}}
    assert result["examples"][0]["baseline rewrite"].startswith("Savages , honestly")


def test_saved_rewriter_replays_an_earlier_run(tmp_path):
    from bodega.atomeval.factories import make_rewriter
    from bodega.io import atomic_write_json, write_jsonl

    for family, rewrite in (("omission", "Savages was a film ."), ("advadd", None)):
        write_jsonl(tmp_path / family / "records.jsonl",
                    [{"id": "c0", "family": family, "claim": "Savages was only a film .", "rewrite": rewrite}])
        atomic_write_json(tmp_path / family / "summary.json", {"rewriter": "llm (fake)"})
    saved = make_rewriter(f"saved:{tmp_path}")
    assert saved.name == "llm (fake)"
    assert saved.rewrite("Savages was only a film .", "e", "omission") == "Savages was a film ."
    assert saved.rewrite("Savages was only a film .", "e", "advadd") is None  # no rewrite was made
    assert saved.covers("Savages was only a film .", ["omission", "advadd"])
    assert not saved.covers("Savages was only a film .", ["omission", "factmix"])
    with pytest.raises(KeyError, match="no saved factmix rewrite"):
        saved.rewrite("Savages was only a film .", "e", "factmix")
    with pytest.raises(FileNotFoundError, match="run `bodega atomeval tables` first"):
        make_rewriter(f"saved:{tmp_path / 'absent'}")


def test_a_tables_run_saves_every_claims_rewrite_for_another_verifier(gate, tmp_path):
    """The records hold only the claims the verifier first calls refuted; ``rewrites.jsonl`` holds all, so that
    ``saved:`` can judge the run again with a verifier whose population differs."""
    from bodega.atomeval.factories import make_rewriter
    from bodega.atomeval.runs import run_tables
    from bodega.atomeval.fever import Claim
    from bodega.io import read_jsonl

    texts = ["Savages was only a film .", "Savages was directed by Oliver Stone in 2011 ."]
    claims = [Claim(f"c{i}", claim, "Savages is a 2012 American crime thriller film .")
              for i, claim in enumerate(texts)]
    rules = _MapRewriter("rules", {c.claim: c.claim.replace("Savages", "Savages , honestly ,") for c in claims})
    run_tables(claims, KeywordVerifier(), "keyword", gate, rules, ["omission"], tmp_path / "rules",
               with_surface=False)
    recorded = [r["id"] for r in read_jsonl(tmp_path / "rules" / "omission" / "atomeval-records.jsonl")]
    assert recorded == ["c1"]  # c0 mentions "film": the keyword verifier first calls it supported
    saved = make_rewriter(f"saved:{tmp_path / 'rules'}")
    assert saved.rewrite(claims[0].claim, "e", "omission") == "Savages , honestly , was only a film ."
    assert saved.covers(claims[1].claim, ["omission"])


def test_the_notebooks_summary_holds_every_table_of_its_run(gate, tmp_path):
    import pandas as pd

    from bodega.atomeval.runs import run_tables
    from bodega.atomeval.tables import atomeval_summary
    from bodega.atomeval.fever import Claim

    claims = [Claim("c0", "Savages was exclusively a German film .", EVIDENCE),
              Claim("c1", "Savages is a French thriller .", EVIDENCE)]
    rewriter = _MapRewriter("fake", {claims[1].claim: "Savages is a French American thriller ."})
    results = run_tables(claims, KeywordVerifier(), "keyword", gate, rewriter, ["omission"], tmp_path / "runs",
                         with_surface=False)
    verifier = tmp_path / "FC-keyword"
    verifier.mkdir()
    (verifier / "metrics.json").write_text(json.dumps({"attack": {"f1": 0.7, "accuracy": 0.8}}))
    (verifier / "victim.json").write_text(json.dumps({"kind": "keyword", "base": str(tmp_path / "base")}))
    gold = {"extractor": "spacy", "n": 2, "correct": 1, "accuracy": 0.5, "errors": []}
    summary = atomeval_summary({"profile": "smoke"}, gold, [{"name": "gate", "f1": 0.5}], verifier, "keyword",
                               len(claims), results, pd.DataFrame(), [{"run": "FC-BiLSTM-PWWS-U", "VASR": 0.1}])
    assert list(summary) == ["parameters", "gold", "agreement", "verifier", "claims", "metrics", "diagnostics",
                             "diagnostics_paper", "thresholds", "rewrites", "surface", "cases", "attack_runs"]
    assert summary["verifier"]["metrics"]["attack"]["f1"] == 0.7 and summary["verifier"]["name"] == "keyword"
    assert summary["claims"] == 2 and summary["gold"] == gold and summary["thresholds"] == []
    (row,) = summary["metrics"]
    assert row == json.loads(json.dumps(row))  # plain JSON values
    assert summary["attack_runs"][0]["VASR"] == 0.1 and summary["agreement"][0]["name"] == "gate"


def test_compare_many_tabulates_every_rewriter_on_the_common_claims_with_intervals(gate, tmp_path):
    from bodega.report.atomeval_comparison import compare_many
    from bodega.atomeval.runs import run_tables
    from bodega.atomeval.fever import Claim
    from bodega.io import atomic_write_json

    claims = [Claim(f"c{i}", text, EVIDENCE) for i, text in enumerate(
        ["Savages was directed by Oliver Stone in 2011 .", "Savages is a French thriller .",
         "Savages is a German drama ."])]
    small = _MapRewriter("llm (small)", {claims[1].claim: "Savages is a French American thriller .",
                                         claims[2].claim: "Savages is a drama film ."}, batched=True)
    rules = _MapRewriter("rules", {c.claim: c.claim.replace("Savages", "Savages , honestly ,") for c in claims})
    run_tables(claims[1:], KeywordVerifier(), "keyword", gate, small, ["omission"], tmp_path / "small",
               with_surface=False)
    run_tables(claims, KeywordVerifier(), "keyword", gate, rules, ["omission"], tmp_path / "rules",
               with_surface=False)
    atomic_write_json(tmp_path / "cost.json", {"omission": {"cpu_seconds": 120.0, "wall_seconds": 60.0,
                                                            "tokens_per_second": 5.0}})
    result = compare_many({"small": tmp_path / "small", "rules": tmp_path / "rules"},
                          costs={"small": tmp_path / "cost.json"}, out=tmp_path / "cmp.json")
    assert result["populations"] == {"omission": {"common": 2, "small": 2, "rules": 3}}
    small_row = next(r for r in result["metrics"] if r["rewriter"] == "small")
    assert (small_row["claims"], small_row["ASR count"], small_row["VASR count"],
            small_row["gap count"]) == (2, 2, 1, 1)
    assert small_row["ASR"] == 1.0 and small_row["ASR high"] == 1.0 and 0 < small_row["ASR low"] < 1
    assert small_row["gap"] == small_row["ASR"] - small_row["VASR"] == 0.5
    assert small_row["copies"] == 0
    from bodega.report.atomeval_comparison import is_copy

    assert is_copy("Savages is a film .", "savages is a film.")
    assert not is_copy("Savages is a film .", "Savages is film")
    assert small_row["VASR low"] < 0.5 < small_row["VASR high"]
    cases = [c for c in result["cases"] if c["rewriter"] == "small"]
    assert len(cases) == 2 and cases[0]["evidence"] == EVIDENCE and cases[0]["atoms"]
    assert any(c["valid"] is False and c["diagnostics"] for c in cases)  # the dropped "German" is named
    assert result["cost"] == [{"rewriter": "small", "family": "omission", "cpu_minutes": 2.0, "wall_minutes": 1.0,
                               "cpu_seconds": 120.0, "wall_seconds": 60.0, "tokens_per_second": 5.0, "model": None}]
    assert json.loads((tmp_path / "cmp.json").read_text())["families"] == ["omission"]
