"""What the masked-LM chapter quotes from ``benchmarks/mlm_recovery.py``'s files: recovery rates per model,
the build of the model each run measured, and the attack results beside them.

Runs are found by the model they measured, not by their position in the file, so a run added or
re-ordered in ``mlm_recovery.json`` cannot make the page quote another model's build.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from bodega.tasks import TASKS

MODEL_NAMES = {"tiny-random": "tiny random BertForMaskedLM (floor)",
               "minilm-mlm": "MiniLM + fitted head, encoder frozen (minilm-mlm)",
               "minilm-mlm-tuned": "MiniLM + head, top two layers tuned (minilm-mlm-tuned)",
               "gemma3-270m-left": "Gemma-3-270M, left context, rebuilt tokenizer (gemma3-270m-left)"}
"""The models the chapter's table shows, in its order, with the names it gives them."""


def build_of(runs: list[dict], model: str) -> dict:
    """The ``model_build`` (its ``build.json``) of the run that measured ``model``."""
    for run in runs:
        if any(row["model"] == model for row in run["rows"]):
            return run["model_build"]
    raise KeyError(f"no run in mlm_recovery.json measured {model}; run benchmarks/mlm_recovery.py for it")


def top10(recovery: pd.DataFrame, model: str, task: str, words: str) -> float:
    """Percent of masked ``words`` ("content" or "any") of ``task`` whose word is among the model's top 10."""
    row = recovery[(recovery.model == model) & (recovery.task == task) & (recovery.words == words)]
    if row.empty:
        raise KeyError(f"mlm_recovery.csv has no row for {model}, {task}, {words} words")
    return 100 * float(row.top10.iloc[0])


def recovery_table(recovery: pd.DataFrame, task: str = "PR2") -> pd.DataFrame:
    """Top-1 and top-10 recovery (% of items) of content and any words per model on ``task``, with its run."""
    rows = recovery[recovery.task == task]
    table = rows.pivot_table(index="model", columns="words", values=["top1", "top10"])
    table.columns = [f"{words} {top.replace('top', 'top-')}" for top, words in table.columns]
    table = (100 * table[["content top-1", "content top-10", "any top-1", "any top-10"]]).round(1)
    table["run"] = rows.groupby("model").run.first()
    return (table.loc[[m for m in MODEL_NAMES if m in table.index]].rename(index=MODEL_NAMES)
            .rename_axis(f"model ({task}, % of items)"))


def _build_facts(frozen: dict, tuned: dict) -> dict[str, Any]:
    config = tuned["config"]
    return {"build_sentences": f"{frozen['config']['sentences_per_task']:,}",
            "build_mask": 100 * frozen["config"]["mask_probability"], "build_epochs": frozen["config"]["epochs"],
            "build_minutes": frozen["seconds"] / 60, "tune_layer_lr": f"{config['layer_learning_rate']:g}",
            "tune_head_lr": f"{config['head_learning_rate']:g}", "tune_length": config["max_length"],
            "tune_threads": config["threads"], "tune_steps": tuned["steps"],
            "tune_sentences": f"{config['sentences_per_task']:,}", "tune_seed": config["seed"],
            "tune_minutes": config["max_minutes"], "tune_first_loss": tuned["first_loss"],
            "tune_final_loss": tuned["final_loss"]}


def _attack_facts(attacks: pd.DataFrame) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    for name, key in (("BERT-ATTACK", "bertattack"), ("BAE", "bae")):
        row = attacks.loc[name]
        facts.update({f"{key}_n": int(row.n_examples), f"{key}_flipped": int(round(row.success_rate * row.n_examples)),
                      f"{key}_bodega": float(row.bodega), f"{key}_queries": float(row.queries)})
    return facts


def _scpn_facts(scpn: dict) -> dict[str, Any]:
    seconds = [r["paraphrase_seconds"] for r in scpn["rows"]]
    words = [r["words"] for r in scpn["rows"]]
    return {"scpn_low": min(seconds), "scpn_high": max(seconds),
            "scpn_words": f"{min(words)} to {max(words)}" if min(words) != max(words) else str(words[0]),
            "scpn_load": scpn["load_average"]}


def chapter_facts(data: str | Path) -> dict[str, Any]:
    """Every value the chapter's text quotes (name -> value, for ``glue``), from the files in ``data``:
    mlm_recovery.csv/.json, attacks_mlm_results.csv, victims_full.csv and scpn_speed.json."""
    data = Path(data)
    recovery = pd.read_csv(data / "mlm_recovery.csv")
    runs = json.loads((data / "mlm_recovery.json").read_text(encoding="utf-8"))["runs"]
    facts = _build_facts(build_of(runs, "minilm-mlm"), build_of(runs, "minilm-mlm-tuned"))
    for task in TASKS:
        facts[f"frozen_{task}_content"] = top10(recovery, "minilm-mlm", task, "content")
    facts.update({"frozen_PR2_any": top10(recovery, "minilm-mlm", "PR2", "any"),
                  "tuned_PR2_any": top10(recovery, "minilm-mlm-tuned", "PR2", "any"),
                  "gemma_PR2_content": top10(recovery, "gemma3-270m-left", "PR2", "content"),
                  "gemma_PR2_any": top10(recovery, "gemma3-270m-left", "PR2", "any")})
    facts.update(_attack_facts(pd.read_csv(data / "attacks_mlm_results.csv").set_index("attacker")))
    victims = pd.read_csv(data / "victims_full.csv")
    pr2_bilstm = victims[(victims.task == "PR2") & (victims.victim == "BiLSTM")]
    facts["pr2_bilstm_f1"] = float(pr2_bilstm["F1 (attacked model)"].iloc[0])
    facts.update(_scpn_facts(json.loads((data / "scpn_speed.json").read_text(encoding="utf-8"))))
    return facts
