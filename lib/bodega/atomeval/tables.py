"""AtomEval's tables from tables runs: the paper's Tables 5-9 per family, a rewriter beside a baseline, and the
summary the book's chapter reads. Pure reading and arithmetic: nothing here rewrites or judges.
"""
from __future__ import annotations

from pathlib import Path

from bodega.atomeval.verifiers import verifier_description, verifier_metrics
from bodega.errors import BodegaError, MissingFileError
from bodega.io import atomic_write_json
from bodega.layout import METRICS


def table_metrics(results: dict[str, dict]):
    """Paper's Table 5: ASR / S-ASR / P-ASR / VASR per family and verifier."""
    import pandas as pd

    from bodega.atomeval.rewriters import FAMILY_NAMES

    rows = [{"verifier": r["summary"]["verifier"], "family": FAMILY_NAMES.get(f, f),
             "claims": r["summary"]["claims"], "ASR": r["summary"]["ASR"], "S-ASR": r["summary"]["S-ASR"],
             "P-ASR": r["summary"]["P-ASR"], "VASR": r["summary"]["VASR"]} for f, r in results.items()]
    return pd.DataFrame(rows)


def table_diagnostics(results: dict[str, dict]):
    """Tables 6 and 8: share of successful attacks that are invalid / carry each diagnostic."""
    import pandas as pd

    from bodega.atomeval.rewriters import FAMILY_NAMES

    return pd.DataFrame([{"family": FAMILY_NAMES.get(f, f), **r["summary"]["diagnostics"]}
                         for f, r in results.items()])


def table_diagnostics_paper(results: dict[str, dict]):
    """Tables 6 and 8 as the paper prints them: "50.0 (4)" with the denominators named, "–" below five."""
    import pandas as pd

    from bodega.atomeval.metrics import diagnostics_table_row
    from bodega.atomeval.rewriters import FAMILY_NAMES

    return pd.DataFrame([{"family": FAMILY_NAMES.get(f, f), **diagnostics_table_row(r["summary"]["diagnostics"])}
                         for f, r in results.items()])


def table_thresholds(results: dict[str, dict]):
    """ASR / S-ASR / P-ASR / VASR as the similarity threshold and the perplexity ratio vary, over all
    families' claims together (``family`` = all) and per family."""
    import pandas as pd

    from bodega.atomeval.metrics import threshold_sweep
    from bodega.atomeval.rewriters import FAMILY_NAMES

    groups = {"all": [r for result in results.values() for r in result["records"]]}
    groups.update({FAMILY_NAMES.get(f, f): r["records"] for f, r in results.items()})
    return pd.DataFrame([{"family": name, **row} for name, records in groups.items()
                         for row in threshold_sweep(records)])


def table_rewrites(results: dict[str, dict]):
    """Validity and diagnostics of every rewrite, flipped or not: what each family does to the claim."""
    import pandas as pd

    from bodega.atomeval.rewriters import FAMILY_NAMES

    return pd.DataFrame([{"family": FAMILY_NAMES.get(f, f), **r["summary"]["rewrites"]} for f, r in results.items()])


def table_surface(results: dict[str, dict]):
    """Table 7: how SBERT similarity and perplexity judge valid vs invalid successful attacks."""
    import pandas as pd

    from bodega.atomeval.rewriters import FAMILY_NAMES

    return pd.DataFrame([{"family": FAMILY_NAMES.get(f, f), **r["summary"]["surface"]} for f, r in results.items()])


def table_cases(results: dict[str, dict], per_family: int = 1):
    """Table 9: a case study, the first successful attacks of each family with their verdicts."""
    import pandas as pd

    from bodega.atomeval.rewriters import FAMILY_NAMES

    rows = []
    for family, result in results.items():
        for record in [r for r in result["records"] if r["flip"]][:per_family]:
            rows.append({"family": FAMILY_NAMES.get(family, family), "claim": record["claim"],
                         "rewrite": record["rewrite"], "valid": record["valid"],
                         "diagnostics": "; ".join(f"{d['kind']}: {d['detail']}" for d in record["diagnostics"]),
                         "similarity": record["similarity"],
                         "perplexity ratio": (record["perplexity_rewrite"] / record["perplexity_claim"]
                                              if "perplexity_rewrite" in record else None)})
    return pd.DataFrame(rows)


def compare_rewriters(runs_dir: str | Path, baseline_dir: str | Path, out: str | Path | None = None,
                      examples: int = 3, verifier_folder: str | Path | None = None) -> dict:
    """A rewriter's tables beside a baseline's (e.g. the rule rewriters) on the same claims.

    Both runs are ``run_tables`` outputs (:mod:`bodega.atomeval.run_files`) for the same verifier. Each
    run's population is the claims its verifier first classified as refuted; only the claims in both are
    counted (a near-chance verifier's decision on a claim can differ between runs; ``populations`` gives
    the sizes), and both are summarised with the default :class:`~bodega.atomeval.metrics.MetricsConfig`.
    """
    import json

    from bodega.atomeval import run_files
    from bodega.atomeval.metrics import MetricsConfig, summarise, surface_proxies

    config = MetricsConfig()
    rows: dict[str, list[dict]] = {"metrics": [], "diagnostics": [], "rewrites": [], "surface": []}
    cases = []
    populations: dict[str, dict[str, int]] = {}
    families = run_files.families(runs_dir)
    if not families:
        raise MissingFileError(f"--runs {runs_dir}: no tables run there; run `bodega atomeval tables` first")
    for family in families:
        run = run_files.read_records(runs_dir, family)
        meta = run_files.read_summary(runs_dir, family)
        if family not in run_files.families(baseline_dir):
            raise MissingFileError(f"--baseline {baseline_dir}: the baseline has no {family} run")
        base_meta = run_files.read_summary(baseline_dir, family)
        if base_meta["verifier"] != meta["verifier"]:
            raise BodegaError(f"{family}: verifier {meta['verifier']} in {runs_dir} but {base_meta['verifier']} "
                             f"in {baseline_dir}; compare runs against the same verifier")
        base_all = run_files.read_records(baseline_dir, family)
        ids = {r["id"] for r in run} & {r["id"] for r in base_all}
        populations[family] = {"run": len(run), "baseline": len(base_all), "common": len(ids)}
        run = [r for r in run if r["id"] in ids]
        base = [r for r in base_all if r["id"] in ids]
        base_by_id = {r["id"]: r for r in base}
        for name, records in ((meta["rewriter"], run), (base_meta["rewriter"], base)):
            summary = summarise(records, config)
            label = {"rewriter": name, "family": family}
            rows["metrics"].append({**label, **{k: summary[k] for k in
                                                ("claims", "rewritten", "flips", "ASR", "S-ASR", "P-ASR", "VASR")}})
            rows["diagnostics"].append({**label, **summary["diagnostics"]})
            rows["rewrites"].append({**label, **summary["rewrites"]})
            rows["surface"].append({**label, **surface_proxies(records)})
        for record in run[:examples]:
            cases.append({"family": family, "claim": record["claim"], "rewrite": record["rewrite"],
                          "flip": record["flip"], "valid": record["valid"],
                          "diagnostics": sorted({d["kind"] for d in record["diagnostics"]}),
                          "baseline rewrite": base_by_id[record["id"]]["rewrite"]})
    result = {"runs": str(runs_dir), "baseline": str(baseline_dir), "verifier": meta["verifier"],
              "claims": len(run), "populations": populations, **rows, "examples": cases}
    if verifier_folder is not None:  # which weights judged both runs (the caller vouches for that)
        folder = Path(verifier_folder)
        result["verifier_info"] = {"folder": str(folder), "victim": verifier_description(folder),
                                   "attack": json.loads((folder / METRICS).read_text())["attack"]}
    if out:
        atomic_write_json(out, result)
    return result


def atomeval_summary(parameters: dict, gold: dict, agreement_rows: list[dict], verifier_folder: str | Path,
                     verifier_name: str, n_claims: int, results: dict[str, dict], thresholds,
                     attack_rows: list[dict]) -> dict:
    """Everything the book's AtomEval chapter reads (``atomeval_summary.json``): the notebook's parameters, the
    extractor's gold accuracy, the agreement with people, the verifier, every table of the rewrite runs
    (``results`` of :func:`run_tables`; ``thresholds`` of :func:`table_thresholds`, empty without surface
    metrics) and the VASR rows of BODEGA's attack runs."""
    return {
        "parameters": parameters,
        "gold": dict(gold),
        "agreement": agreement_rows,
        "verifier": {"folder": str(verifier_folder), "name": verifier_name,
                     "metrics": verifier_metrics(verifier_folder),
                     "victim": verifier_description(verifier_folder)},
        "claims": n_claims,
        "metrics": table_metrics(results).to_dict("records"),
        "diagnostics": table_diagnostics(results).to_dict("records"),
        "diagnostics_paper": table_diagnostics_paper(results).to_dict("records"),
        "thresholds": thresholds.to_dict("records"),
        "rewrites": table_rewrites(results).to_dict("records"),
        "surface": table_surface(results).to_dict("records"),
        "cases": table_cases(results, per_family=2).to_dict("records"),
        "attack_runs": attack_rows,
    }
