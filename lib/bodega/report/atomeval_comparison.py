"""Several rewriters' AtomEval tables on the same claims, against one verifier: the paper's main table shape.

Each run is a ``bodega atomeval tables`` output (``<dir>/<family>/atomeval-records.jsonl`` and
``atomeval-summary.json``, read by :mod:`bodega.atomeval.run_files`). Only the
claims every run has a record for are counted in a family (a run's records are the claims its verifier first
classified as refuted; a run cut short has fewer), so the rewriters are compared on exactly the same claims.
Every rate carries its exact (Clopper-Pearson) 95% interval; the ASR-VASR gap is itself a share of the claims
(flipped but invalid), with its own interval.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from bodega.errors import BodegaError, MissingFileError
from bodega.layout import METRICS, PREDICTIONS, VICTIM_INFO
from bodega.atomeval.metrics import MetricsConfig, diagnostics_table_row, summarise, surface_proxies
from bodega.atomeval import run_files
from bodega.io import read_jsonl


def load_run(folder: str | Path) -> dict[str, dict]:
    """``{family: {"meta": its summary, "records": [...]}}`` of one tables run (:mod:`bodega.atomeval.run_files`)."""
    return {family: {"meta": run.summary, "records": run.records} for family, run in run_files.read_run(folder).items()}


def _interval(count: int, n: int) -> dict[str, float | None]:
    from bodega.report.uncertainty import clopper_pearson

    if not n:
        return {"low": None, "high": None}
    interval = clopper_pearson(count, n)
    return {"low": interval.low, "high": interval.high}


def _letters(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def is_copy(claim: str, rewrite: str | None) -> bool:
    """Whether a rewrite is the claim again, up to case, spacing and punctuation (a small model often answers so)."""
    return rewrite is not None and _letters(rewrite) == _letters(claim)


def metric_row(records: list[dict], config: MetricsConfig) -> dict[str, Any]:
    """ASR, S-ASR, P-ASR, VASR and the ASR-VASR gap with counts and exact intervals, over ``records``."""
    summary = summarise(records, config)
    n = summary["claims"]
    counts = {"ASR": summary["flips"], "VASR": sum(bool(r["valid"]) for r in records if r["flip"]),
              "S-ASR": sum(bool(r["similar"]) for r in records if r["flip"]),
              "P-ASR": sum(bool(r["fluent"]) for r in records if r["flip"])}
    counts["gap"] = counts["ASR"] - counts["VASR"]  # flipped but not the same false claim any more
    row: dict[str, Any] = {"claims": n, "rewritten": summary["rewritten"], "flips": summary["flips"],
                           "copies": sum(is_copy(r["claim"], r["rewrite"]) for r in records),
                           "copies flipped": sum(is_copy(r["claim"], r["rewrite"]) and r["flip"] for r in records)}
    for name, count in counts.items():
        interval = _interval(count, n)
        row.update({name: count / n if n else None, f"{name} count": count,
                    f"{name} low": interval["low"], f"{name} high": interval["high"]})
    return row


def case_studies(records: list[dict], per_family: int) -> list[dict]:
    """The first ``per_family`` successful attacks (file order) with evidence, atoms and the gate's verdict."""
    rows = []
    for record in [r for r in records if r["flip"]][:per_family]:
        rows.append({"id": record["id"], "claim": record["claim"], "evidence": record["evidence"],
                     "rewrite": record["rewrite"], "valid": record["valid"],
                     "atoms": [{"original": j["original"], "preserved": j["preserved"], "via": j["via"],
                                "best rewrite atom": j["best"]} for j in record.get("judgements", [])],
                     "diagnostics": [f"{d['kind']}: {d['detail']}" for d in record["diagnostics"]]})
    return rows


def verifier_auc(folder: str | Path) -> float | None:
    """ROC AUC of the verifier's P(refuted) on its attack set, from ``attack_predictions.jsonl``
    (``bodega predictions`` or :func:`bodega.experiments.predictions.predict_attack_set` writes it), else the
    one training recorded in ``metrics.json`` (``attack_quality``)."""
    from sklearn.metrics import roc_auc_score

    path = Path(folder) / PREDICTIONS
    if not path.exists():
        metrics = Path(folder) / METRICS
        quality = json.loads(metrics.read_text(encoding="utf-8")).get("attack_quality", {}) if metrics.exists() else {}
        return quality.get("roc_auc")
    rows = list(read_jsonl(path))
    return float(roc_auc_score([r["label"] for r in rows], [r["p_positive"] for r in rows]))


def compare_many(runs: dict[str, str | Path], costs: dict[str, str | Path] | None = None,
                 verifier_folder: str | Path | None = None, cases: int = 3,
                 out: str | Path | None = None) -> dict:
    """Rewriter x family tables for ``runs`` (``{label: tables dir}``) on the claims common to all of them.

    ``costs`` (``{label: cost JSON of bodega atomeval rewrite}``) adds each LLM's decoding cost per family.
    """
    from bodega.atomeval.verifiers import verifier_description, verifier_metrics

    config = MetricsConfig()
    loaded = {label: load_run(folder) for label, folder in runs.items()}
    families = [f for f in next(iter(loaded.values())) if all(f in run for run in loaded.values())]
    verifiers = {run[f]["meta"]["verifier"] for run in loaded.values() for f in families}
    if len(verifiers) > 1:
        raise BodegaError(f"the runs were judged by different verifiers ({', '.join(sorted(verifiers))}); "
                         "judge them again with one (`bodega atomeval tables --rewriter saved:<dir>`)")
    result: dict[str, Any] = {"runs": {k: str(v) for k, v in runs.items()},
                              "verifier": verifiers.pop() if verifiers else None,
                              "families": families, "populations": {}, "metrics": [], "diagnostics": [],
                              "rewrites": [], "surface": [], "cases": [], "cost": []}
    for family in families:
        common = set.intersection(*({r["id"] for r in run[family]["records"]} for run in loaded.values()))
        result["populations"][family] = {"common": len(common),
                                         **{label: len(run[family]["records"]) for label, run in loaded.items()}}
        for label, run in loaded.items():
            records = [r for r in run[family]["records"] if r["id"] in common]
            tag = {"rewriter": label, "family": family}
            summary = summarise(records, config)
            result["metrics"].append({**tag, **metric_row(records, config)})
            result["diagnostics"].append({**tag, **diagnostics_table_row(summary["diagnostics"])})
            result["rewrites"].append({**tag, **diagnostics_table_row(summary["rewrites"])})
            result["surface"].append({**tag, **surface_proxies(records), **flip_means(records)})
            result["cases"].extend({**tag, **case} for case in case_studies(records, cases))
    result["cost"] = cost_rows(costs)
    if verifier_folder is not None:
        folder = Path(verifier_folder)
        result["verifier_info"] = {"folder": str(folder), "victim": verifier_description(folder),
                                   "metrics": verifier_metrics(folder), "auc": verifier_auc(folder)}
    if out:
        from bodega.io import atomic_write_json

        atomic_write_json(out, result)
    return result


def cost_rows(costs: dict[str, str | Path] | None) -> list[dict]:
    """Each LLM rewriter's decoding cost per family (``{label: cost JSON of bodega atomeval rewrite}``)."""
    rows = []
    for label, path in (costs or {}).items():
        for family, cost in json.loads(Path(path).read_text(encoding="utf-8")).items():
            rows.append({**cost, "rewriter": label, "family": family, "model": cost.get("rewriter"),
                         "cpu_minutes": cost["cpu_seconds"] / 60, "wall_minutes": cost["wall_seconds"] / 60})
    return rows


def flip_means(records: list[dict]) -> dict[str, float | None]:
    """Table 7's surface proxies of the successful rewrites: mean SBERT similarity to the claim and mean
    perplexity of the rewrite (absolute, under this run's language model)."""
    flips = [r for r in records if r["flip"]]
    similarity = [r["similarity"] for r in flips if r.get("similarity") is not None]
    perplexity = [r["perplexity_rewrite"] for r in flips if r.get("perplexity_rewrite") is not None]
    return {"mean similarity (flips)": sum(similarity) / len(similarity) if similarity else None,
            "mean perplexity (flips)": sum(perplexity) / len(perplexity) if perplexity else None}


def case_across_runs(runs: dict[str, dict[str, dict[str, dict]]], gate: Any = None) -> dict[str, Any]:
    """Table 9: one claim across families and rewriters, with every verifier's decision on each rewrite.

    ``runs`` is ``{verifier: {rewriter: load_run(...)}}``. The claim is the one whose rewrites flip some
    verifier in the most (family, rewriter) cells, among the claims every verifier first classifies as refuted
    (file order breaks ties): the claim that shows the most verdicts. The records hold the gate's verdict on
    flipped rewrites only; ``gate`` judges the others, so that every rewrite of the case has one.
    """
    cells: dict[tuple[str, str], dict[str, dict[str, dict]]] = {}  # (rewriter, family) -> verifier -> id -> record
    order: list[str] = []
    for verifier, by_rewriter in runs.items():
        for rewriter, run in by_rewriter.items():
            for family, part in run.items():
                cells.setdefault((rewriter, family), {})[verifier] = {r["id"]: r for r in part["records"]}
                order += [r["id"] for r in part["records"] if r["id"] not in order]
    common = [i for i in order if all(i in by_id for cell in cells.values() for by_id in cell.values())]
    if not common:
        return {}

    def flips(claim_id: str) -> int:
        return sum(any(by_id[claim_id]["flip"] for by_id in cell.values()) for cell in cells.values())

    chosen = max(common, key=lambda i: (flips(i), -common.index(i)))
    rows = []
    for (rewriter, family), cell in cells.items():
        any_record = next(iter(cell.values()))[chosen]
        judged = next((by_id[chosen] for by_id in cell.values() if by_id[chosen]["valid"] is not None), None)
        valid, diagnostics = (judged["valid"], judged["diagnostics"]) if judged else (None, [])
        if judged is None and gate is not None and any_record["rewrite"] is not None:
            verdict = gate.judge(any_record["claim"], any_record["rewrite"], any_record["evidence"])
            valid, diagnostics = verdict.valid, [d.to_dict() for d in verdict.diagnostics]
        rows.append({"rewriter": rewriter, "family": family, "rewrite": any_record["rewrite"],
                     "flips": {verifier: by_id[chosen]["flip"] for verifier, by_id in cell.items()},
                     "valid": valid, "diagnostics": sorted({d["kind"] for d in diagnostics})})
    first = next(iter(next(iter(cells.values())).values()))[chosen]
    return {"id": chosen, "claim": first["claim"], "evidence": first["evidence"], "rows": rows}


def main_table(tables: str | Path, verifiers: list[str | Path], rewriters: list[str],
               costs: dict[str, str | Path] | None = None, out: str | Path | None = None, gate: Any = None) -> dict:
    """The paper's Tables 5-9 for every verifier: ``<tables>/<verifier folder name>/<rewriter>`` runs (``bodega
    atomeval tables --out``), each verifier over the claims it first classifies as refuted that every rewriter
    covers, with the verifier's description, the decoding cost of each LLM rewriter and Table 9's case (whose
    unflipped rewrites ``gate`` judges)."""
    result: dict[str, Any] = {"tables": str(tables), "rewriters": list(rewriters), "verifiers": {}}
    loaded = {}
    for folder in verifiers:
        name = Path(folder).name
        runs = {label: Path(tables) / name / label for label in rewriters
                if run_files.families(Path(tables) / name / label)}
        if not runs:
            raise MissingFileError(f"--tables {tables}: no tables run of {name}; run `bodega atomeval tables "
                                    f"--verifier {folder} --out {Path(tables) / name}/<rewriter>` first")
        result["verifiers"][name] = compare_many(runs, costs=None, verifier_folder=folder, cases=0)
        result["verifiers"][name]["not judged"] = [label for label in rewriters if label not in runs]
        loaded[name] = {label: load_run(path) for label, path in runs.items()}
    result["case"] = case_across_runs(loaded, gate)
    result["cost"] = cost_rows(costs)
    if out:
        from bodega.io import atomic_write_json

        atomic_write_json(out, result)
    return result


def verifier_choice(folders: list[str | Path], out: str | Path | None = None) -> dict:
    """Which of several trained FC verifiers the experiment uses: the competent one (``attack_quality`` of its
    ``metrics.json``) with the highest attack-set ROC AUC, accuracy breaking ties. Every candidate's numbers are
    kept, so the chapter can say why the others were not used."""
    candidates = []
    for folder in folders:
        metrics = json.loads((Path(folder) / METRICS).read_text(encoding="utf-8"))
        victim = json.loads((Path(folder) / VICTIM_INFO).read_text(encoding="utf-8"))
        quality = metrics.get("attack_quality", {})
        candidates.append({"folder": Path(folder).name, "kind": victim.get("kind"),
                           "base_role": victim.get("base_role"), "n_params": victim.get("n_params"),
                           "accuracy": metrics["attack"]["accuracy"],
                           "f1": metrics["attack"]["f1"], "roc_auc": quality.get("roc_auc"),
                           "competent": bool(quality.get("competent")), "reason": quality.get("reason")})
    competent = [c for c in candidates if c["competent"] and c["roc_auc"] is not None]
    if not competent:
        raise BodegaError(f"none of {', '.join(c['folder'] for c in candidates)} is a competent verifier")
    chosen = max(competent, key=lambda c: (c["roc_auc"], c["accuracy"]))
    result = {"chosen": chosen["folder"], "rule": "competent, then highest attack ROC AUC, then accuracy",
              "candidates": candidates}
    if out:
        from bodega.io import atomic_write_json

        atomic_write_json(out, result)
    return result
