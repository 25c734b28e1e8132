"""What the AtomEval chapter quotes and tabulates from the files ``bodega atomeval`` writes under ``book/data``
(the extractor's gold runs, the human agreement before and after the role check, the gate ablation, the sampled
agreement per extractor, the rewriters' cost and decoding speed)."""
from __future__ import annotations

from typing import Any

import pandas as pd

from bodega.errors import BodegaError

GATE_MODES = {"AtomEval gate (claim)": "claim", "AtomEval gate (claim and evidence)": "both"}
FAMILY_NAMES = {"colloquial": "Colloquial/Lexical", "deseption": "DeSePtion-style", "factmix": "GEM-style FactMix",
                "omission": "Omission-style", "advadd": "AdvAdd"}
SPLITS = ("dev", "test", "all")


def gold_facts(gold: dict, config: Any = None) -> dict[str, Any]:
    """The dependency extractor's gold accuracy per split (``bodega atomeval gold-accuracy``) and the S-ASR and
    P-ASR thresholds of the tables (``config``: a :class:`~bodega.atomeval.metrics.MetricsConfig`, default its
    defaults, which ``bodega atomeval tables`` uses unless told otherwise)."""
    from bodega.atomeval.metrics import MetricsConfig

    config = config or MetricsConfig()
    facts: dict[str, Any] = {"sim_threshold": config.similarity_threshold, "ppl_ratio": config.perplexity_ratio}
    for split in SPLITS:
        facts[f"gold_acc_{split}"] = f"{100 * gold['accuracy'][split]:.1f}%"
        facts[f"gold_n_{split}"] = gold["n"][split]
    return facts


def agreement_facts(reports: dict[str, dict]) -> dict[str, Any]:
    """The gate's F1 and ROC AUC against people, per report (``before``, ``after``, ``initial`` ...) and mode,
    as ``agree_<report>_<claim|both>_<f1|auc>``."""
    facts = {}
    for when, report in reports.items():
        for row in report["rows"]:
            mode = GATE_MODES.get(row["name"])
            if mode:
                facts[f"agree_{when}_{mode}_f1"] = f"{row['f1']:.3f}"
                facts[f"agree_{when}_{mode}_auc"] = f"{row['roc_auc']:.3f}"
    return facts


def agreement_before_after(reports: dict[str, dict]) -> pd.DataFrame:
    """F1 / AUC of every scorer with a decision, one column per report."""
    return pd.DataFrame({when: {row["name"]: f"F1 {row['f1']:.3f} / AUC {row['roc_auc']:.3f}"
                                for row in report["rows"] if row["f1"] is not None}
                         for when, report in reports.items()})


def ablation_table(ablation: dict) -> pd.DataFrame:
    """The gate ablation's F1 and ROC AUC per setting, the two modes side by side."""
    table = pd.DataFrame(ablation["rows"])
    table["mode"] = table["name"].str.extract(r"\((.*)\)")[0]
    return table.pivot_table(index="setting", columns="mode", values=["f1", "roc_auc"], sort=False).round(3)


def extractor_comparison(gold: dict, llm_gold: dict, subset: list) -> pd.DataFrame:
    """Correct extractions of spaCy and of the LLM on the same gold claims (``subset``), per split."""
    rows: dict[str, dict[str, str]] = {}
    for name, report in (("dependency parse (spaCy)", gold), (f"LLM ({llm_gold['spec']})", llm_gold)):
        wrong = {e["id"] for e in report["errors"]}
        for split in SPLITS:
            ids = [g.id for g in subset if split in ("all", g.split)]
            right = sum(i not in wrong for i in ids)
            rows.setdefault(name, {})[split] = f"{right}/{len(ids)} = {right / len(ids):.3f}"
    return pd.DataFrame(rows).T.rename_axis("extractor (same claims)")


def llm_gold_subset(llm_gold: dict) -> list:
    """The gold claims the LLM extractor was run on: all of them, or the first ``per_split`` of each split."""
    from bodega.atomeval.gold import first_per_split, load_gold

    gold = load_gold()
    return first_per_split(gold, llm_gold["per_split"]) if llm_gold.get("per_split") else gold


def slot_agreement_table(gold: dict, llm_gold: dict) -> pd.DataFrame:
    """Per slot, the share of gold atoms whose slot each extractor's first matching atom gets right."""
    rows = {name: {slot: f"{value:.3f}" for slot, value in report["slot_agreement"].items()}
            for name, report in (("dependency parse (spaCy)", gold), (f"LLM ({llm_gold['spec']})", llm_gold))}
    return pd.DataFrame(rows).T.rename_axis("extractor")


def llm_gold_facts(llm_gold: dict) -> dict[str, Any]:
    """The LLM extractor's gold run: its size, accuracy, calls, retries, precision and CPU cost."""
    llm = llm_gold["llm"]
    return {"llm_gold_n": llm_gold["n"]["all"],
            "llm_gold_acc": f"{100 * llm_gold['accuracy']['all']:.1f}%",
            "llm_gold_acc_test": f"{100 * llm_gold['accuracy']['test']:.1f}%",
            "llm_gold_invalid": llm["invalid_after_retries"],
            "llm_gold_calls": llm["calls"], "llm_gold_retries": llm["retries"],
            "llm_gold_precision": llm_gold.get("precision", "fp32"),
            "llm_gold_cpu_minutes": f"{llm_gold['cost']['cpu_seconds'] / 60:.1f}"}


# --- the rewriter comparison (``bodega atomeval compare-rewriters --runs LABEL=DIR ...``) ---------------------

COMPARED = ("ASR", "S-ASR", "P-ASR", "VASR", "gap")


def _with_interval(row: dict, name: str) -> str:
    if row[name] is None:
        return "–"
    return f"{row[name]:.3f} [{row[f'{name} low']:.3f}, {row[f'{name} high']:.3f}]"


def rewriter_metrics_table(comparison: dict) -> pd.DataFrame:
    """Rewriter x family: claims, ASR, S-ASR, P-ASR, VASR and the ASR-VASR gap, each with its exact 95% interval."""
    rows = [{"family": FAMILY_NAMES.get(r["family"], r["family"]), "rewriter": r["rewriter"], "claims": r["claims"],
             **{("ASR-VASR gap" if m == "gap" else m): _with_interval(r, m) for m in COMPARED},
             "claim copied (flipped)": f"{r['copies']} ({r['copies flipped']})" if "copies" in r else "–"}
            for r in comparison["metrics"]]
    return pd.DataFrame(rows).set_index(["family", "rewriter"])


def rewriter_diagnostics_table(comparison: dict, key: str = "diagnostics") -> pd.DataFrame:
    """Tables 6 and 8 per rewriter and family (``key``: ``diagnostics`` of the flips, or ``rewrites``: all)."""
    rows = [{"family": FAMILY_NAMES.get(r["family"], r["family"]),
             **{k: v for k, v in r.items() if k != "family"}} for r in comparison[key]]
    return pd.DataFrame(rows).set_index(["family", "rewriter"])


def rewriter_cases_table(comparison: dict) -> pd.DataFrame:
    """The case studies: claim, evidence, rewrite, the claim's atoms (preserved or not, and by which rewrite atom),
    the verdict and its diagnostics."""
    rows = []
    for case in comparison["cases"]:
        atoms = "; ".join(f"{a['original']} -> {'kept' if a['preserved'] else 'lost'}"
                          + (f" ({a['via']})" if a["via"] else "") for a in case["atoms"])
        rows.append({"family": FAMILY_NAMES.get(case["family"], case["family"]), "rewriter": case["rewriter"],
                     "claim": case["claim"], "evidence": case["evidence"], "rewrite": case["rewrite"], "atoms": atoms,
                     "verdict": "valid" if case["valid"] else "invalid", "diagnostics": "; ".join(case["diagnostics"])})
    return pd.DataFrame(rows)


def rewriter_cost_table(comparison: dict) -> pd.DataFrame:
    """CPU minutes, answers decoded and tokens per second per LLM rewriter and family."""
    if not comparison["cost"]:
        return pd.DataFrame()
    frame = pd.DataFrame(comparison["cost"])
    frame["family"] = frame["family"].map(lambda f: FAMILY_NAMES.get(f, f))
    columns = ["rewriter", "family", "claims", "generated", "cached", "cpu_minutes", "wall_minutes",
               "generated_tokens", "tokens_per_second", "precision", "threads", "batch_size"]
    return frame[[c for c in columns if c in frame]].round(2).set_index(["rewriter", "family"])


def decode_speed_table(reports: list[dict]) -> pd.DataFrame:
    """fp32 against bf16: prefill and end-to-end tokens per second on the same batch, one row per precision
    and measurement (the order in which the precisions were measured is part of the row's name)."""
    rows = []
    for number, report in enumerate(reports, 1):
        order = " then ".join(report["precisions"])
        rows += [{"measurement": f"{number} ({order})", "precision": precision, **values}
                 for precision, values in report["precisions"].items()]
    return pd.DataFrame(rows).set_index(["measurement", "precision"])


def pooled_rewriter_facts(comparison: dict) -> dict[str, Any]:
    """Per rewriter, over its families together: ASR, VASR, the gap and the share of rewrites that copy the claim,
    as ``cmp_<label>_<asr|vasr|gap|copies>`` (the label's letters and digits only, e.g. ``qwen2505b``)."""
    facts: dict[str, Any] = {}
    for label in comparison["runs"]:
        rows = [r for r in comparison["metrics"] if r["rewriter"] == label]
        n = sum(r["claims"] for r in rows)
        if not n:
            continue
        key = "cmp_" + "".join(ch for ch in label.lower() if ch.isalnum())
        for name in ("ASR", "VASR", "gap"):
            facts[f"{key}_{name.lower()}"] = f"{sum(r[f'{name} count'] for r in rows) / n:.3f}"
        facts[f"{key}_copies"] = f"{100 * sum(r.get('copies', 0) for r in rows) / n:.1f}%"
        facts[f"{key}_copies_flipped"] = sum(r.get("copies flipped", 0) for r in rows)
        facts[f"{key}_n"] = n
    return facts


def rewriter_facts(comparison: dict) -> dict[str, Any]:
    """The comparison's claims per family (the smallest common population), rewriters and verifier."""
    common = [p["common"] for p in comparison["populations"].values()]
    facts: dict[str, Any] = {"cmp_claims_min": min(common) if common else 0,
                             "cmp_claims_max": max(common) if common else 0,
                             "cmp_rewriters": ", ".join(comparison["runs"]),
                             "cmp_families": len(comparison["families"])}
    facts.update(pooled_rewriter_facts(comparison))
    facts["cmp_decode_cpu_minutes"] = f"{sum(row.get('cpu_minutes') or 0.0 for row in comparison.get('cost', [])):.0f}"
    info = comparison.get("verifier_info")
    if info:
        facts.update(cmp_verifier=info["folder"], cmp_verifier_kind=info["victim"].get("kind"),
                     cmp_verifier_acc=f"{info['metrics']['attack']['accuracy']:.3f}",
                     cmp_verifier_f1=f"{info['metrics']['attack']['f1']:.3f}")
        if "auc" in info:
            facts["cmp_verifier_auc"] = f"{info['auc']:.3f}"
    return facts


def extractor_agreement_table(runs: dict[str, tuple[dict, list[dict]]], resamples: int = 2000,
                              seed: int = 0) -> pd.DataFrame:
    """The gate's agreement with people per extractor and mode on the same sampled pairs: F1 and ROC AUC with
    bootstrap intervals over pairs, the AUC's paired difference from the first extractor (the same resampled
    pairs for both, so that the comparison carries its own interval), failed extractions and CPU cost.
    ``runs`` maps a label to an ``agreement`` report and its ``.records.jsonl`` rows."""
    import numpy as np

    from bodega_book.f1_intervals import f1_of
    from bodega.report.semantic_agreement import auc
    from bodega.report.uncertainty import bootstrap_indices, percentile_interval

    def arrays(records: list[dict], mode: str) -> dict[int, tuple[int, int, float]]:
        return {r["row"]: (int(r["preserves"]), int(r["valid"]), float(r["score"])) for r in records
                if r["mode"] == mode}

    def shown(estimate: float, draws: np.ndarray) -> str:
        interval = percentile_interval(estimate, draws)
        return f"{interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}]"

    labels = list(runs)
    table = []
    from bodega.atomeval.runs import RECORD_MODES

    for mode, mode_name in ((RECORD_MODES[False], "claim"), (RECORD_MODES[True], "claim and evidence")):
        per_run = {label: arrays(records, mode) for label, (_, records) in runs.items()}
        rows = sorted(set.intersection(*(set(values) for values in per_run.values())))
        draws = bootstrap_indices(np.random.default_rng(seed), len(rows), resamples)
        base_auc = None
        for label in labels:
            y, predicted, score = (np.array(column) for column in zip(*(per_run[label][row] for row in rows)))
            aucs = np.array([auc(y[idx], score[idx]) for idx in draws])
            report = runs[label][0]
            entry = {"extractor": label, "gate": mode_name, "pairs": len(rows),
                     "F1": shown(float(f1_of(y, predicted)), f1_of(y[draws], predicted[draws])),
                     "ROC AUC": shown(auc(y, score), aucs),
                     "AUC minus first": "–" if base_auc is None else shown(auc(y, score) - base_auc[0],
                                                                           aucs - base_auc[1]),
                     "failed extractions": report.get("failed_extractions", 0),
                     "CPU minutes": round(sample_cpu_seconds(report) / 60, 1)}
            if base_auc is None:
                base_auc = (auc(y, score), aucs)
            table.append(entry)
    return pd.DataFrame(table).set_index(["gate", "extractor"])


def read_agreement_run(path: str) -> tuple[dict, list[dict]]:
    """An ``agreement`` report and the per-pair records written beside it (``X.json``, ``X.records.jsonl``)."""
    import json
    from pathlib import Path

    from bodega.io import read_jsonl

    report = Path(path)
    records = report.with_name(report.name.removesuffix(".json") + ".records.jsonl")
    return json.loads(report.read_text(encoding="utf-8")), list(read_jsonl(records))


def sample_cpu_seconds(report: dict) -> float:
    """What extracting the whole sample costs: a run that answered some texts from its cache measured only
    the others, so its CPU time is scaled by all texts over those it asked (first requests, not retries)."""
    cpu = report.get("cost", {}).get("cpu_seconds", float("nan"))
    stats = report.get("extraction") or {}
    asked = stats.get("calls", 0) - stats.get("retries", 0)
    return cpu * (asked + stats["cached"]) / asked if stats.get("cached") and asked > 0 else cpu


def extractor_agreement_facts(runs: dict[str, tuple[dict, list[dict]]]) -> dict[str, Any]:
    """The shared sample (pairs, of, seed) and what the costliest extractor would need for every pair."""
    samples = {(s["n"], s["of"], s["seed"]): s for s in (report["sample"] for report, _ in runs.values())}
    if len(samples) != 1:
        raise BodegaError(f"the extractors were judged on different samples (pairs, of, seed): {sorted(samples)}")
    sample = next(iter(samples.values()))
    costliest = max(sample_cpu_seconds(report) for report, _ in runs.values())
    return {"xagree_pairs": sample["n"], "xagree_of": sample["of"], "xagree_seed": sample["seed"],
            "xagree_full_cpu_hours": f"{costliest / sample['n'] * sample['of'] / 3600:.1f}"}
