"""End-to-end AtomEval runs for the notebook and the ``bodega atomeval`` command.

Every reported number is produced by one of these functions: extractor accuracy on the gold set,
the gate's agreement with people, the AtomEval tables over rewriters x families for one verifier,
and VASR of BODEGA attack runs. Results are written atomically as JSON / JSON lines.
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from bodega.errors import BodegaError, MissingFileError, UnknownNameError
from bodega.layout import METRICS, RECORDS, REWRITES, SUMMARY, VICTIM_INFO
from bodega.io import atomic_write_json, write_jsonl

log = logging.getLogger(__name__)

VERIFIER_PREFERENCE = ("BERT", "GEMMA7B", "GEMMA2B", "BiLSTM")


# --- building blocks from names ------------------------------------------------------------------


RECORD_MODES = {False: "claim", True: "claim+evidence"}
"""The ``mode`` of an agreement record by whether the gate also checked the evidence."""

def make_client(spec: str, threads: int | None = None, precision: str = "auto", batch_size: int = 8):
    """``openai:<model>[@<base_url>]`` or ``transformers:<path or resource role>`` -> a chat client.

    A resource role (e.g. ``transformers:smollm2-instruct``, the ``cpu`` profile's ``llm``) is resolved
    through :mod:`bodega.resources`; anything else after ``transformers:`` is a model folder.
    """
    from bodega.atomeval.llm import OpenAIChatClient, TransformersChatClient

    kind, _, rest = spec.partition(":")
    if kind == "openai" and rest:
        model, _, base_url = rest.partition("@")
        return OpenAIChatClient(model=model, **({"base_url": base_url} if base_url else {}))
    if kind == "transformers" and rest:
        path, label = local_model_path(rest)
        return TransformersChatClient(path, threads=threads, label=label, precision=precision,
                                      batch_size=batch_size)
    raise UnknownNameError(f"unknown LLM spec {spec!r} (--rewriter, --extractor); use openai:<model>[@<base_url>] "
                           "or transformers:<path or resource role, e.g. smollm2-instruct>")


def local_model_path(name: str) -> tuple[str, str | None]:
    """(model folder, label): a resource role is resolved and labelled by its name, a path is used as is."""
    from bodega.resources import SPECS, resolve

    if name in SPECS:
        return str(resolve(name).path), name
    if not Path(name).exists():
        raise MissingFileError(f"{name}: neither a model folder nor a resource role "
                               f"(roles: {', '.join(sorted(SPECS))})")
    return name, None


def make_extractor(spec: str = "spacy", threads: int | None = None, precision: str = "auto", batch_size: int = 8,
                   cache: str | Path | None = None):
    """``spacy`` (the dependency-parse extractor) or an LLM spec (see :func:`make_client`; a local model
    decodes ``batch_size`` claims at a time in ``precision`` and keeps its outcomes in the JSON-lines
    ``cache`` when given)."""
    if spec == "spacy":
        from bodega.atomeval.extract_spacy import SpacyExtractor

        return SpacyExtractor()
    from bodega.atomeval.extract_llm import LLMExtractor
    from bodega.atomeval.rewrite_cache import RewriteCache

    return LLMExtractor(make_client(spec, threads, precision, batch_size),
                        cache=RewriteCache(Path(cache)) if cache else None)


def make_rewriter(spec: str = "rules", threads: int | None = None, cache: str | Path | None = None,
                  precision: str = "auto", batch_size: int = 8):
    """``rules``, ``saved:<tables dir>`` (rewrites of an earlier run) or an LLM spec (see :func:`make_client`).

    An LLM rewriter keeps its answers in the JSON-lines ``cache`` when given (see
    :mod:`bodega.atomeval.rewrite_cache`) and decodes ``batch_size`` claims at a time in ``precision``."""
    if spec == "rules":
        from bodega.atomeval.rewriters import RuleRewriter

        return RuleRewriter()
    if spec.startswith("saved:"):
        from bodega.atomeval.rewriters import SavedRewriter

        return SavedRewriter(spec.removeprefix("saved:"))
    from bodega.atomeval.rewrite_cache import RewriteCache
    from bodega.atomeval.rewriters import LLMRewriter

    client = make_client(spec, threads, precision, batch_size)
    if hasattr(client, "stop_strings"):
        client.stop_strings = ("\n",)  # only an answer's first line is kept: stop decoding there
    return LLMRewriter(client, cache=RewriteCache(Path(cache)) if cache else None, batch_size=batch_size)


def make_gate(profile: str = "cpu", extractor: str = "spacy", precision: str = "auto",
              cache: str | Path | None = None):
    """The gate with the profile's NLI model (none in ``cpu``); ``cache`` keeps an LLM extractor's outcomes."""
    from bodega.atomeval.gate import Gate
    from bodega.atomeval.models import load_nli

    return Gate(make_extractor(extractor, precision=precision, cache=cache), nli=load_nli(profile))


def find_verifier(results_dir: str | Path, task: str = "FC") -> Path | None:
    """A trained ``<results>/models/<task>-<kind>`` folder with its weights, preferring the strongest kind."""
    from bodega.victims.modeldir import weights_problem

    models = Path(results_dir) / "models"
    for kind in VERIFIER_PREFERENCE:
        folder = models / f"{task}-{kind}"
        if (folder / VICTIM_INFO).exists() and (folder / METRICS).exists():
            problem = weights_problem(folder)
            if problem is None:
                return folder
            log.info("not using %s as the verifier: %s", folder, problem)  # committed metadata without weights
    return None


def get_verifier(verifier: str, results_dir: str | Path, data_dir: str | Path, profile: str = "cpu",
                 train_kind: str = "BERT", verdicts_dir: str | Path | None = None):
    """``auto``: a trained FC victim from the results, else one trained now; or a model folder path.

    Returns (verifier, folder). A victim trained here goes to ``<results>/atomeval/verifier/FC-<kind>-<profile>``
    so it never overwrites the grid's models. With ``verdicts_dir`` the verifier answers from the verdicts saved
    there first and loads its weights only for texts without one (:mod:`bodega.atomeval.verdicts`), so a folder
    holding only the victim's metadata can judge rewrites judged before.
    """
    from bodega.victims import load_victim, train_victim

    if verifier == "auto":
        folder = find_verifier(results_dir)
        if folder is None:
            folder = Path(results_dir) / "atomeval" / "verifier" / f"FC-{train_kind}-{profile}"
            log.info("no trained FC victim under %s/models: training %s into %s", results_dir, train_kind, folder)
            train_victim("FC", train_kind, data_dir, folder, profile=profile)
    else:
        folder = Path(verifier)
    if verdicts_dir is not None:
        from bodega.atomeval.verdicts import VerdictVerifier

        return VerdictVerifier(folder, verdicts_dir, profile), folder
    return load_victim(folder, profile=profile), folder


# --- the reported numbers --------------------------------------------------------------------------

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
        write_jsonl(out_dir / family / RECORDS, records)
        # every claim's rewrite, also those the verifier did not first classify as refuted (not in the records):
        # `saved:<out_dir>` judges them again with another verifier, whose population differs
        write_jsonl(out_dir / family / REWRITES,
                    [{"id": c.id, "family": family, "claim": c.claim, "rewrite": c.rewrite} for c in cases])
        atomic_write_json(out_dir / family / SUMMARY, summary)
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
    import json

    from bodega.io import read_jsonl

    seeded = 0
    for family in families:
        folder = Path(tables_dir) / family
        if not (folder / RECORDS).exists() or \
                json.loads((folder / SUMMARY).read_text(encoding="utf-8")).get("profile") != profile:
            continue
        for record in read_jsonl(folder / RECORDS):
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


# --- tables ---------------------------------------------------------------------------------------

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


def verifier_description(folder: str | Path) -> dict:
    """The verifier's ``victim.json`` with portable paths, for a summary read on other machines.

    Victims trained before ``victim.json`` stored its base model as ``resource:<role>`` name the
    training machine's folders; a path under the current folder (the project root) becomes relative.
    """
    import json

    from bodega.paths import portable

    return portable(json.loads((Path(folder) / VICTIM_INFO).read_text(encoding="utf-8")), Path.cwd())


def compare_rewriters(runs_dir: str | Path, baseline_dir: str | Path, out: str | Path | None = None,
                      examples: int = 3, verifier_folder: str | Path | None = None) -> dict:
    """A rewriter's tables beside a baseline's (e.g. the rule rewriters) on the same claims.

    Both runs are ``run_tables`` outputs (``<dir>/<family>/records.jsonl``) for the same verifier. Each
    run's population is the claims its verifier first classified as refuted; only the claims in both are
    counted (a near-chance verifier's decision on a claim can differ between runs; ``populations`` gives
    the sizes), and both are summarised with the default :class:`~bodega.atomeval.metrics.MetricsConfig`.
    """
    import json

    from bodega.atomeval.metrics import MetricsConfig, summarise, surface_proxies
    from bodega.io import read_jsonl

    config = MetricsConfig()
    rows: dict[str, list[dict]] = {"metrics": [], "diagnostics": [], "rewrites": [], "surface": []}
    cases = []
    populations: dict[str, dict[str, int]] = {}
    families = sorted(p.parent.name for p in Path(runs_dir).glob(f"*/{RECORDS}"))
    if not families:
        raise MissingFileError(f"--runs {runs_dir}: no <family>/records.jsonl there; run `bodega atomeval tables` "
                               "first")
    for family in families:
        run = list(read_jsonl(Path(runs_dir) / family / RECORDS))
        meta = json.loads((Path(runs_dir) / family / SUMMARY).read_text())
        base_path = Path(baseline_dir) / family / RECORDS
        if not base_path.exists():
            raise MissingFileError(f"--baseline: {base_path} not found: the baseline has no {family} run")
        base_meta = json.loads((base_path.parent / SUMMARY).read_text())
        if base_meta["verifier"] != meta["verifier"]:
            raise BodegaError(f"{family}: verifier {meta['verifier']} in {runs_dir} but {base_meta['verifier']} "
                             f"in {baseline_dir}; compare runs against the same verifier")
        base_all = list(read_jsonl(base_path))
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


def verifier_metrics(folder: str | Path) -> dict:
    """The verifier's ``metrics.json`` (F1 and accuracy on its attack and dev splits)."""
    import json

    return json.loads((Path(folder) / METRICS).read_text(encoding="utf-8"))


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
