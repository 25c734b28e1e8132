"""ASR, VASR, S-ASR and P-ASR over rewrites of refuted claims, with per-case records.

The population is the refuted claims (label 1) that the verifier initially classifies as refuted.
For each, a rewrite of the claim (evidence fixed) *flips* the verifier when it is now classified as
supported (0). Over that population:

- **ASR**: flips / claims;
- **VASR**: flips whose rewrite passes the one-way gate / claims;
- **S-ASR**: flips with SBERT cosine(claim, rewrite) >= ``similarity_threshold`` / claims;
- **P-ASR**: flips whose rewrite's perplexity is <= ``perplexity_ratio`` x the claim's perplexity
  (or <= ``perplexity_threshold`` when that absolute value is given) / claims.

The verifier is anything with ``predict(texts) -> labels`` over ``evidence ~ claim`` texts (a
:class:`bodega.victims.Victim`, a query accountant, or a plain function).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from bodega.atomeval.gate import Gate
from bodega.errors import BodegaError
from bodega.tasks import join_pair


MIN_SUBSET = 5  # fewer rewrites than this in a diagnostic's subset: no share ("–" in tables)


@dataclass(frozen=True)
class MetricsConfig:
    """Thresholds of the surface metrics (documented in the book)."""

    similarity_threshold: float = 0.8
    perplexity_ratio: float = 1.5
    perplexity_threshold: float | None = None
    min_subset: int = MIN_SUBSET  # diagnostics: no share for a smaller subset


@dataclass(frozen=True)
class RewriteCase:
    """One claim to attack: its id, claim, evidence, the rewrite (None if none) and the family."""

    id: str
    claim: str
    evidence: str
    rewrite: str | None
    family: str = ""


def predict_labels(verifier: Any, texts: list[str]) -> np.ndarray:
    """The verifier's labels for ``texts``, through ``predict`` or by calling it."""
    if not texts:
        return np.zeros(0, dtype=int)
    if hasattr(verifier, "predict"):
        return np.asarray(verifier.predict(texts), dtype=int)
    if callable(verifier):
        return np.asarray(verifier(texts), dtype=int)
    raise TypeError("verifier needs predict(texts) or to be callable on a list of texts")


def initially_correct(cases: Sequence[RewriteCase], verifier: Any) -> list[RewriteCase]:
    """The cases whose original ``evidence ~ claim`` the verifier classifies as refuted (1)."""
    labels = predict_labels(verifier, [join_pair(c.evidence, c.claim) for c in cases])
    return [c for c, y in zip(cases, labels) if y == 1]


def evaluate(cases: Sequence[RewriteCase], verifier: Any, gate: Gate, similarity: Any = None,
             perplexity: Any = None, config: MetricsConfig | None = None,
             progress: bool = False) -> tuple[dict, list[dict]]:
    """Summary metrics and one record per case (flip, validity, diagnostics, similarity, perplexity)."""
    config = config or MetricsConfig()
    population = initially_correct(cases, verifier)
    rewritten = [c for c in population if c.rewrite is not None and c.rewrite.strip() != c.claim.strip()]
    after = predict_labels(verifier, [join_pair(c.evidence, c.rewrite) for c in rewritten])
    flips = {c.id: bool(y == 0) for c, y in zip(rewritten, after)}
    sims = {}
    if similarity is not None and rewritten:
        values = similarity.score([(c.claim, c.rewrite) for c in rewritten])
        sims = {c.id: float(v) for c, v in zip(rewritten, values)}
    ppl = {}
    if perplexity is not None and rewritten:
        values = perplexity.perplexity([t for c in rewritten for t in (c.claim, c.rewrite)])
        ppl = {c.id: (float(values[2 * k]), float(values[2 * k + 1])) for k, c in enumerate(rewritten)}
    iterator = population
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(population, desc="gate")
    records = []
    for case in iterator:
        record: dict[str, Any] = {"id": case.id, "family": case.family, "claim": case.claim,
                                  "evidence": case.evidence, "rewrite": case.rewrite,
                                  "flip": flips.get(case.id, False)}
        if case.id in flips:
            verdict = gate.judge(case.claim, case.rewrite, case.evidence)
            record.update(valid=verdict.valid, gate_score=verdict.score,
                          diagnostics=[d.to_dict() for d in verdict.diagnostics],
                          judgements=verdict.to_dict()["judgements"])
        else:
            record.update(valid=None, gate_score=None, diagnostics=[], judgements=[])
        record["similarity"] = sims.get(case.id)
        if case.id in ppl:
            record["perplexity_claim"], record["perplexity_rewrite"] = ppl[case.id]
        record["similar"] = _similar(record, config)
        record["fluent"] = _fluent(record, config)
        records.append(record)
    return summarise(records, config, similarity is not None, perplexity is not None), records


def _similar(record: dict, config: MetricsConfig) -> bool | None:
    value = record.get("similarity")
    return None if value is None else value >= config.similarity_threshold


def _fluent(record: dict, config: MetricsConfig) -> bool | None:
    if "perplexity_rewrite" not in record:
        return None
    if config.perplexity_threshold is not None:
        return record["perplexity_rewrite"] <= config.perplexity_threshold
    return record["perplexity_rewrite"] <= config.perplexity_ratio * record["perplexity_claim"]


def summarise(records: list[dict], config: MetricsConfig, with_similarity: bool = True,
              with_perplexity: bool = True) -> dict:
    """The summary of a run's records: counts, ASR, VASR, S-ASR, P-ASR and the thresholds used."""
    n = len(records)
    flips = [r for r in records if r["flip"]]

    def rate(count: int) -> float | None:
        return count / n if n else None

    summary = {"claims": n, "rewritten": sum(r["rewrite"] is not None for r in records), "flips": len(flips),
               "ASR": rate(len(flips)), "VASR": rate(sum(bool(r["valid"]) for r in flips)),
               "S-ASR": rate(sum(bool(r["similar"]) for r in flips)) if with_similarity else None,
               "P-ASR": rate(sum(bool(r["fluent"]) for r in flips)) if with_perplexity else None,
               "similarity_threshold": config.similarity_threshold,
               "perplexity_rule": (f"<= {config.perplexity_threshold}" if config.perplexity_threshold is not None
                                   else f"<= {config.perplexity_ratio} x claim perplexity")}
    summary["diagnostics"] = diagnostic_breakdown(flips, config.min_subset)
    summary["rewrites"] = diagnostic_breakdown([r for r in records if r["valid"] is not None], config.min_subset)
    return summary


# Which successes each diagnostic is a share of (the paper's Tables 6 and 8): what made a rewrite invalid
# among the invalid ones, what a valid rewrite added among the valid ones.
DENOMINATORS = {"ScopeLoss": "invalid", "EvDrift": "invalid", "EvEnt": "valid", "UnverAdd": "valid"}


def diagnostic_breakdown(records: list[dict], min_subset: int = MIN_SUBSET) -> dict:
    """Counts and shares of the diagnostics over the given judged records (successes, or all rewrites).

    ScopeLoss and EvDrift are shares of the *invalid* records, EvEnt and UnverAdd of the *valid* ones,
    as in the paper; a share is None when its subset has fewer than ``min_subset`` records. EvEnt and
    UnverAdd on invalid records are counted apart (``EvEnt (invalid)``, ``UnverAdd (invalid)``).
    """
    groups = {"valid": [r for r in records if r["valid"]], "invalid": [r for r in records if not r["valid"]]}
    out: dict[str, Any] = {"n": len(records), "valid": len(groups["valid"]), "invalid": len(groups["invalid"]),
                           "invalid share": len(groups["invalid"]) / len(records) if records else None}

    def count(kind: str, group: list[dict]) -> int:
        return sum(any(d["kind"] == kind for d in r["diagnostics"]) for r in group)

    for kind, subset in DENOMINATORS.items():
        group = groups[subset]
        out[f"{kind} count"] = count(kind, group)
        out[kind] = out[f"{kind} count"] / len(group) if len(group) >= min_subset else None
    for kind in ("EvEnt", "UnverAdd"):
        out[f"{kind} (invalid) count"] = count(kind, groups["invalid"])
    return out


def format_share(share: float | None, count: int) -> str:
    """``"50.0 (4)"``: a percentage with its count, or ``"–"`` when the subset was too small (None, or NaN
    after a trip through a DataFrame)."""
    return "–" if share is None or share != share else f"{100 * share:.1f} ({count})"


def diagnostics_table_row(breakdown: dict) -> dict:
    """One row of Tables 6 / 8 as the paper prints them (percentages with counts, denominators named)."""
    row = {"successes": breakdown["n"], "invalid": breakdown["invalid"], "valid": breakdown["valid"]}
    for kind, subset in DENOMINATORS.items():
        row[f"{kind} (% of {subset})"] = format_share(breakdown[kind], breakdown[f"{kind} count"])
    for kind in ("EvEnt", "UnverAdd"):
        row[f"{kind} on invalid (count)"] = breakdown[f"{kind} (invalid) count"]
    return row


def surface_proxies(records: list[dict]) -> dict:
    """How the surface proxies (S-ASR, P-ASR) disagree with the gate on successful attacks."""
    flips = [r for r in records if r["flip"]]
    out: dict[str, Any] = {"flips": len(flips)}
    for name, key in (("similarity", "similar"), ("perplexity", "fluent")):
        judged = [r for r in flips if r[key] is not None]
        passing = [r for r in judged if r[key]]
        out[f"{name}: pass"] = len(passing)
        out[f"{name}: pass but invalid"] = sum(not r["valid"] for r in passing)
        out[f"{name}: fail but valid"] = sum(r["valid"] and not r[key] for r in judged)
    for validity in (True, False):
        group = [r for r in flips if r["valid"] is validity and r["similarity"] is not None]
        label = "valid" if validity else "invalid"
        out[f"mean similarity ({label})"] = float(np.mean([r["similarity"] for r in group])) if group else None
        group = [r for r in flips if r["valid"] is validity and "perplexity_rewrite" in r]
        out[f"mean perplexity ratio ({label})"] = float(np.mean(
            [r["perplexity_rewrite"] / r["perplexity_claim"] for r in group])) if group else None
    return out


def make_cases(claims: Sequence[Any], rewriter: Any, family: str,
               progress: bool = False, chunk: int = 16) -> list[RewriteCase]:
    """Rewrite every claim (objects with id, claim, evidence) with one family.

    A rewriter with ``rewrite_many`` (the LLM rewriter) gets ``chunk`` claims at a time.
    """
    many = getattr(rewriter, "rewrite_many", None)
    # an LLM rewriter with a cache takes every claim at once: it batches by prompt length and saves each batch
    step = (len(claims) or 1 if getattr(rewriter, "cache", None) is not None else chunk) if many is not None else 1
    starts = range(0, len(claims), step)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=f"rewrite ({family})", unit="chunk" if many is not None else "claim")
    cases = []
    for start in starts:
        items = claims[start:start + step]
        try:
            if many is not None:
                rewrites = many([(item.claim, item.evidence) for item in items], family)
            else:
                rewrites = [rewriter.rewrite(items[0].claim, items[0].evidence, family)]
        except Exception as error:  # name the claims and family, keep the cause (a user's mistake stays one)
            ids = ", ".join(str(item.id) for item in items)
            kind = BodegaError if isinstance(error, BodegaError) else RuntimeError
            raise kind(f"claim(s) {ids}: rewriting with {family} failed: {error}") from error
        cases.extend(RewriteCase(str(item.id), item.claim, item.evidence, rewrite, family)
                     for item, rewrite in zip(items, rewrites))
    return cases


SWEEP_SIMILARITY = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
SWEEP_PERPLEXITY_RATIO = (1.0, 1.1, 1.25, 1.5, 2.0, 3.0)


def threshold_sweep(records: list[dict], similarity_thresholds: Sequence[float] = SWEEP_SIMILARITY,
                    perplexity_ratios: Sequence[float] = SWEEP_PERPLEXITY_RATIO) -> list[dict]:
    """ASR, S-ASR, P-ASR and VASR over the given records (claims of one or more families) as each surface
    threshold varies, the other kept at its default; the paper leaves both values open."""
    n = len(records)
    if not n:
        return []
    flips = [r for r in records if r["flip"]]
    base = {"claims": n, "ASR": len(flips) / n, "VASR": sum(bool(r["valid"]) for r in flips) / n}
    rows = []
    for name, values in (("similarity", similarity_thresholds), ("perplexity ratio", perplexity_ratios)):
        for value in values:
            config = (MetricsConfig(similarity_threshold=value) if name == "similarity"
                      else MetricsConfig(perplexity_ratio=value))
            rows.append({"threshold": name, "value": value, **base,
                         "S-ASR": sum(bool(_similar(r, config)) for r in flips) / n,
                         "P-ASR": sum(bool(_fluent(r, config)) for r in flips) / n})
    return rows
