"""The AtomEval runs that produce every reported number: extractor accuracy on the gold atoms, the gate's
agreement with people (and its ablations), the tables runs over rewriters x families for one verifier, and the
rewrite runs that fill an LLM rewriter's cache with its decoding cost. Results are written atomically.
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from bodega.atomeval.factories import make_extractor, make_gate
from bodega.atomeval.tables import table_thresholds
from bodega.errors import BodegaError
from bodega.io import atomic_write_json, write_jsonl
from bodega.atomeval import run_files
from bodega.atomeval.run_files import write_family

log = logging.getLogger(__name__)


RECORD_MODES = {False: "claim", True: "claim+evidence"}
"""The ``mode`` of an agreement record by whether the gate also checked the evidence."""


def extractor_accuracy(extractor: str = "spacy", out: str | Path | None = None, threads: int | None = None,
                       per_split: int = 0, precision: str = "auto") -> dict:
    """Accuracy on the gold set, or on its first ``per_split`` claims of each split when that is > 0, with the
    CPU and wall seconds it took (a local LLM extractor's cost)."""
    from bodega.atomeval.gold import evaluate_extractor, first_per_split, load_gold

    gold = load_gold()
    if per_split:
        gold = first_per_split(gold, per_split)
    wall, cpu = time.perf_counter(), time.process_time()
    report = evaluate_extractor(make_extractor(extractor, threads, precision), gold, progress=True).to_dict()
    report.update(spec=extractor, per_split=per_split or None, precision=precision,
                  cost={"cpu_seconds": round(time.process_time() - cpu, 1),
                        "wall_seconds": round(time.perf_counter() - wall, 1)})
    if out:
        atomic_write_json(out, report)
    return report


def semantic_agreement(pairs: Sequence[Any], profile: str = "cpu", with_bodega_score: bool = False) -> list[dict]:
    """BODEGA's semantic score (and, with ``with_bodega_score``, its whole score) against the people's judgements
    of ``pairs``, one row each, as :func:`~bodega.atomeval.human.agreement` gives them."""
    from bodega.atomeval.human import agreement
    from bodega.scoring import load_semantic_model, score_examples, semantic_model_name

    scores = score_examples("FC", [p.original_text for p in pairs], [p.adversarial_text for p in pairs],
                            [True] * len(pairs), load_semantic_model(profile))
    truth = [p.preserves for p in pairs]
    name = semantic_model_name(profile)
    rows = [agreement(f"BODEGA semantic score ({name})", truth, None, [s.semantic for s in scores]).to_dict()]
    if with_bodega_score:
        rows.append(agreement(f"BODEGA score ({name} x character)", truth, None, [s.bodega for s in scores]).to_dict())
    return rows


def gate_agreement_rows(gate, pairs: Sequence[Any]) -> list[dict]:
    """The gate's agreement with the people on ``pairs``: judging the claim only, then claim and evidence."""
    from bodega.atomeval.human import gate_agreement

    return [gate_agreement(gate, pairs, check_evidence=check)[0].to_dict() for check in (False, True)]


def human_agreement(pairs_path: str | Path, profile: str = "cpu", extractor: str = "spacy",
                    with_semantic: bool = True, out: str | Path | None = None, sample: int = 0, seed: int = 0,
                    precision: str = "auto", cache: str | Path | None = None) -> dict:
    """Gate (claim only, and claim + evidence) and BODEGA semantic score against people, on every pair or on a
    seeded random ``sample`` of them; the texts are extracted first, in batches (an LLM extractor's outcomes
    kept in ``cache``), and the CPU seconds recorded."""
    from bodega.atomeval.human import gate_agreement, load_pairs, pair_texts, sample_pairs

    every = load_pairs(pairs_path)
    pairs = sample_pairs(every, sample, seed)
    gate = make_gate(profile, extractor, precision, cache)
    wall, cpu = time.perf_counter(), time.process_time()
    failed = gate.prefetch([t for pair in pairs for t in pair_texts(gate, pair, check_evidence=True)])
    rows, records = [], {}
    for check_evidence in (False, True):
        result, recs = gate_agreement(gate, pairs, check_evidence=check_evidence)
        rows.append(result.to_dict())
        records[RECORD_MODES[check_evidence]] = recs
    if with_semantic:
        rows += semantic_agreement(pairs, profile, with_bodega_score=True)
    result = {"pairs": Path(pairs_path).name, "profile": profile, "extractor": extractor, "rows": rows,
              "sample": {"n": len(pairs), "of": len(every), "seed": seed if len(pairs) < len(every) else None},
              "failed_extractions": failed, "precision": precision,
              # an LLM extractor's requests and cache hits: the cost below is this run's, not the cached ones'
              **({"extraction": gate.extractor.stats()} if hasattr(gate.extractor, "stats") else {}),
              "cost": {"cpu_seconds": round(time.process_time() - cpu, 1),
                       "wall_seconds": round(time.perf_counter() - wall, 1)}}
    if out:
        atomic_write_json(out, result)
        write_jsonl(Path(out).with_suffix(".records.jsonl"),
                    [{"mode": mode, **r} for mode, recs in records.items() for r in recs])
    return result


ABLATIONS = {
    "no WordNet": ({"use_wordnet": False}, {}),
    "no typo tolerance": ({"typo_max_edits": 0}, {}),
    "no reordering rule": ({}, {"allow_reordering": False}),
    "no role check": ({}, {"check_roles": False}),
    "no split-word rejoining": ({}, {"rejoin_split_words": False}),
}


STAGE_ABLATIONS = ("without the atom extractor", "without the matching step")
"""The paper's Table 4 rows (:mod:`bodega.atomeval.ablation`), after the parameter ablations."""


def gate_ablation(pairs_path: str | Path, extractor: str = "spacy", out: str | Path | None = None) -> dict:
    """Agreement with people with one gate parameter switched off at a time, then without each of the gate's
    two stages (:data:`STAGE_ABLATIONS`; no NLI)."""
    from bodega.atomeval.ablation import ExactAtomGate, SentenceExtractor
    from bodega.atomeval.gate import Gate, GateConfig
    from bodega.atomeval.human import gate_agreement, load_pairs
    from bodega.atomeval.matching import Matcher, MatcherConfig

    pairs = load_pairs(pairs_path)
    base = make_extractor(extractor)
    gates: dict[str, Any] = {
        name: Gate(base, Matcher(MatcherConfig(**matcher_changes)), config=GateConfig(**gate_changes))
        for name, (matcher_changes, gate_changes) in {"defaults": ({}, {}), **ABLATIONS}.items()}
    gates[STAGE_ABLATIONS[0]] = Gate(SentenceExtractor())
    gates[STAGE_ABLATIONS[1]] = ExactAtomGate(gates["defaults"])
    rows = []
    for name, gate in gates.items():
        for check_evidence in (False, True):
            result, _ = gate_agreement(gate, pairs, progress=False, check_evidence=check_evidence)
            rows.append({"setting": name, **result.to_dict()})
    report = {"pairs": Path(pairs_path).name, "extractor": extractor, "rows": rows}
    if out:
        atomic_write_json(out, report)
    return report


def run_tables(claims: Sequence[Any], verifier, verifier_name: str, gate, rewriter,
               families: Sequence[str], out_dir: str | Path, profile: str = "cpu", config=None,
               with_surface: bool = True) -> dict[str, dict]:
    """Rewrite, verify and gate every claim per family; write records and summaries per family."""
    from bodega.atomeval.metrics import MetricsConfig, evaluate, make_cases, surface_proxies

    config = config or MetricsConfig()
    similarity = perplexity = None
    if with_surface:
        from bodega.atomeval.models import load_perplexity, load_similarity

        similarity, perplexity = CachedSimilarity(load_similarity(profile)), CachedPerplexity(load_perplexity(profile))
        if hasattr(rewriter, "covers"):  # saved rewrites: their surface scores do not depend on the verifier
            seed_surface(similarity, perplexity, rewriter.source, families, profile)
    out_dir = Path(out_dir)
    results = {}
    for family in families:
        before = rewrite_counters(rewriter)
        wall, cpu = time.perf_counter(), time.process_time()
        cases = make_cases(claims, rewriter, family, progress=True)
        cost = {"wall_seconds": round(time.perf_counter() - wall, 1),
                "cpu_seconds": round(time.process_time() - cpu, 1),
                **{k: v - before[k] for k, v in rewrite_counters(rewriter).items()}}
        wall, cpu = time.perf_counter(), time.process_time()
        summary, records = evaluate(cases, verifier, gate, similarity, perplexity, config, progress=True)
        judge_cost = {"wall_seconds": round(time.perf_counter() - wall, 1),
                      "cpu_seconds": round(time.process_time() - cpu, 1)}
        summary.update(family=family, verifier=verifier_name, rewriter=getattr(rewriter, "name", "?"),
                       profile=profile, surface=surface_proxies(records), config=asdict(config), rewrite_cost=cost,
                       judge_cost=judge_cost)
        client = getattr(rewriter, "client", None)
        if client is not None and hasattr(client, "precision"):
            summary["rewriter_model"] = {"precision": client.precision, "weights_sha256": client.weights_hash,
                                         "batch_size": rewriter.batch_size, "threads": torch_threads()}
        # every claim's rewrite, also those the verifier did not first classify as refuted (not in the records):
        # `saved:<out_dir>` judges them again with another verifier, whose population differs
        write_family(out_dir, family, summary, records,
                     [{"id": c.id, "family": family, "claim": c.claim, "rewrite": c.rewrite} for c in cases])
        results[family] = {"summary": summary, "records": records}
    if with_surface:
        atomic_write_json(out_dir / "thresholds.json", table_thresholds(results).to_dict("records"))
    return results


def generate_rewrites(claims: Sequence[Any], rewriter, families: Sequence[str], cost_path: str | Path) -> dict:
    """Fill an LLM rewriter's cache for every claim and family, before any verifier exists; the cost of each
    family (wall and CPU seconds, answers and tokens decoded) is written to ``cost_path`` as it finishes."""
    import json

    from bodega.atomeval.metrics import make_cases

    cost_path = Path(cost_path)
    report = json.loads(cost_path.read_text()) if cost_path.exists() else {}
    client = rewriter.client
    identity = {"rewriter": client.name, "precision": getattr(client, "precision", None),
                "weights_sha256": getattr(client, "weights_hash", None)}
    for family in families:  # an entry is one rewriter's: another's figures are never added to it
        other = {k: v for k, v in identity.items() if k in report.get(family, {}) and report[family][k] != v}
        if other:
            raise BodegaError(f"--cost {cost_path}: its {family} entry is another rewriter's "
                              f"({', '.join(f'{k} {report[family][k]}' for k in other)}); give each rewriter and "
                              "precision its own cost file")
    for family in families:
        before = rewrite_counters(rewriter)
        wall, cpu = time.perf_counter(), time.process_time()
        make_cases(claims, rewriter, family)
        cost = {"claims": len(claims), "wall_seconds": round(time.perf_counter() - wall, 1),
                "cpu_seconds": round(time.process_time() - cpu, 1),
                **{k: round(v - before[k], 1) for k, v in rewrite_counters(rewriter).items()}}
        earlier = report.get(family)
        if earlier and cost["generated"] == 0:
            continue  # everything came from the cache: keep the cost of the runs that generated it
        if earlier:  # a run that went on where an earlier one stopped: the cost of both together
            cost.update({k: round(cost[k] + earlier[k], 1) for k in
                         ("wall_seconds", "cpu_seconds", "generated", "generated_tokens", "generation_seconds")})
            cost["cached"] = earlier["cached"] + cost["cached"] - earlier["generated"]
        cost["tokens_per_second"] = (round(cost["generated_tokens"] / cost["generation_seconds"], 2)
                                     if cost["generation_seconds"] else None)
        report[family] = {**cost, **identity, "batch_size": rewriter.batch_size,
                          "threads": torch_threads(), "max_answer_tokens": rewriter.max_answer_tokens}
        atomic_write_json(cost_path, report)
        log.info("%s %s: %s", client.name, family, report[family])
    return report


def rewrite_counters(rewriter) -> dict[str, float]:
    """Answers generated / read from the cache, and the client's decoded tokens and decoding seconds."""
    client = getattr(rewriter, "client", None)
    return {"generated": getattr(rewriter, "generated", 0), "cached": getattr(rewriter, "cached", 0),
            "generated_tokens": getattr(client, "generated_tokens", 0),
            "generation_seconds": round(getattr(client, "generation_seconds", 0.0), 1)}


def torch_threads() -> int:
    """The number of threads torch uses."""
    import torch

    return torch.get_num_threads()


class CachedSimilarity:
    """SBERT cosine by (claim, rewrite) pair, computed once."""

    def __init__(self, model) -> None:
        self.model = model
        self.cache: dict[tuple[str, str], float] = {}

    def score(self, pairs):
        """Similarities of ``pairs`` in order; only pairs not yet seen go to the model."""
        import numpy as np

        missing = list(dict.fromkeys(p for p in map(tuple, pairs) if p not in self.cache))
        if missing:
            self.cache.update(zip(missing, map(float, self.model.score(missing))))
        return np.array([self.cache[tuple(p)] for p in pairs])


def seed_surface(similarity: CachedSimilarity, perplexity: "CachedPerplexity", tables_dir: str | Path,
                 families: Sequence[str], profile: str) -> int:
    """Fill the surface caches from an earlier tables run's records (same profile, so the same models): judging
    saved rewrites with another verifier then scores only the rewrites that run did not. Returns the pairs read."""
    seeded = 0
    for family in families:
        if not run_files.is_complete(tables_dir, family) or \
                run_files.read_summary(tables_dir, family).get("profile") != profile:
            continue
        for record in run_files.read_records(tables_dir, family):
            if record.get("similarity") is not None:
                similarity.cache[(record["claim"], record["rewrite"])] = record["similarity"]
                seeded += 1
            if record.get("perplexity_rewrite") is not None:
                perplexity.cache.update({record["claim"]: record["perplexity_claim"],
                                         record["rewrite"]: record["perplexity_rewrite"]})
    return seeded


class CachedPerplexity:
    """Perplexity by text, computed once (each claim recurs in every family)."""

    def __init__(self, model) -> None:
        self.model = model
        self.cache: dict[str, float] = {}

    def perplexity(self, texts):
        """Perplexities of ``texts`` in order; only texts not yet seen go to the model."""
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            self.cache.update(zip(missing, map(float, self.model.perplexity(missing))))
        return np.array([self.cache[t] for t in texts])
