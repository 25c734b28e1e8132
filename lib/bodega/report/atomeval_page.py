"""What the AtomEval chapter quotes and tabulates from the files ``bodega atomeval`` and the AtomEval notebook
write under ``book/data`` (the summary, the human agreement before and after the role check, the gate
ablation, the LLM extractor's gold run and the LLM rewriter's tables)."""
from __future__ import annotations

from typing import Any

import pandas as pd

GATE_MODES = {"AtomEval gate (claim)": "claim", "AtomEval gate (claim and evidence)": "both"}
FAMILY_NAMES = {"colloquial": "Colloquial/Lexical", "deseption": "DeSePtion-style", "factmix": "GEM-style FactMix",
                "omission": "Omission-style", "advadd": "AdvAdd"}
SPLITS = ("dev", "test", "all")


def summary_facts(summary: dict) -> dict[str, Any]:
    """The extractor's gold accuracy per split, the verifier and the run's thresholds, from
    ``atomeval_summary.json``."""
    gold, verifier, params = summary["gold"], summary["verifier"], summary["parameters"]
    facts: dict[str, Any] = {}
    for split in SPLITS:
        facts[f"gold_acc_{split}"] = f"{100 * gold['accuracy'][split]:.1f}%"
        facts[f"gold_n_{split}"] = gold["n"][split]
    facts.update({"verifier_name": verifier["name"], "verifier_acc": f"{verifier['metrics']['attack']['accuracy']:.3f}",
                  "verifier_f1": f"{verifier['metrics']['attack']['f1']:.3f}",
                  "verifier_rows": verifier["victim"]["train_rows"], "n_claims": summary["claims"],
                  "verifier_epochs": verifier["victim"]["epochs"], "sim_threshold": params["similarity_threshold"],
                  "ppl_ratio": params["perplexity_ratio"]})
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


def llm_gold_facts(llm_gold: dict) -> dict[str, Any]:
    """The LLM extractor's gold run: its size, accuracy, calls, and how many answers copy the prompt's example
    atoms (a "write" and a "direct" relation)."""
    answered = [e for e in llm_gold["errors"] if not e["error"]] + [None] * llm_gold["correct"]["all"]
    copies = [e for e in answered if e and any(" write " in a or " write |" in a for a in e["predicted"])
              and any(" direct " in a or " direct |" in a for a in e["predicted"])]
    llm = llm_gold["llm"]
    return {"llm_gold_per_split": llm_gold["per_split"], "llm_gold_n": llm_gold["n"]["all"],
            "llm_gold_acc": f"{100 * llm_gold['accuracy']['all']:.1f}%",
            "llm_gold_invalid": llm["invalid_after_retries"],
            "llm_gold_calls": llm["calls"], "llm_gold_retries": llm["retries"], "llm_gold_first": llm_gold["n"]["all"],
            "llm_gold_valid": len(answered), "llm_gold_copies": len(copies),
            "llm_gold_subject": f"{llm_gold['slot_agreement']['subject']:.2f}",
            "llm_gold_relation": f"{llm_gold['slot_agreement']['relation']:.2f}"}


def rewriters_side_by_side(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    """The LLM rewriter's and the rules' values of ``columns`` per family, side by side."""
    frame = pd.DataFrame(rows)
    frame["family"] = frame["family"].map(FAMILY_NAMES)
    frame["rewriter"] = frame["rewriter"].map(lambda r: "SmolLM2" if r.startswith("llm") else r)
    return frame.pivot_table(index="family", columns="rewriter", values=columns, sort=False).round(3)


def llm_rewriter_facts(llm_tables: dict) -> dict[str, Any]:
    """In how many families the LLM rewriter flips more claims than the rules, of how many; the example count."""
    asr = pd.DataFrame(llm_tables["metrics"]).pivot_table(index="family", columns="rewriter", values="ASR")
    llm_column = next(c for c in asr.columns if c.startswith("llm"))
    rule_column = next(c for c in asr.columns if not c.startswith("llm"))
    return {"llm_claims": llm_tables["claims"], "llm_more_flips": int((asr[llm_column] > asr[rule_column]).sum()),
            "llm_families": len(asr),
            "llm_examples": max(pd.DataFrame(llm_tables["examples"]).groupby("family").size())}
