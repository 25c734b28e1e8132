"""``bodega atomeval``: every AtomEval number from one command each.

- ``gold-accuracy``: extractor accuracy on the hand-checked gold atoms;
- ``agreement``: the gate's (and BODEGA's semantic score's) agreement with people;
- ``tables``: ASR / S-ASR / P-ASR / VASR, diagnostics, surface proxies, case study per family;
- ``rewrite``: fill an LLM rewriter's on-disk cache of rewrites, with each family's decoding cost;
- ``decode-speed``: a local rewriter's tokens per second in fp32 and bf16;
- ``compare-rewriters``: rewriters' tables side by side (the rules among them) on their common claims;
- ``main-table``: the paper's Tables 5-9, rewriters by family, for every verifier (the chapter's data);
- ``experiment``: the rewriter experiment at once (rewrite, judge with every verifier, main-table), resumable;
- ``attack-vasr``: VASR of BODEGA attack runs on FC from their records.jsonl.
"""
from __future__ import annotations

import argparse
import json

from bodega.commands import at_least_one, at_least_zero
from bodega.errors import BodegaError, MissingFileError

SPLITS = ("attack", "dev", "train")
"""The prepared FC splits whose claims can be rewritten (``--split``)."""


def family_list(text: str) -> list[str]:
    """``--families``: comma-separated rewriting families, each one of :data:`~bodega.atomeval.rewriters.FAMILIES`."""
    from bodega.atomeval.rewriters import FAMILIES

    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in FAMILIES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"unknown family {', '.join(unknown) or repr(text)}; "
                                         f"choose from {', '.join(FAMILIES)}")
    return names


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega atomeval`` and its actions (gold-accuracy, agreement, tables, rewrite, decode-speed,
    compare-rewriters, VASR of runs)."""
    parser = subparsers.add_parser("atomeval", help="AtomEval: atoms, the validity gate, VASR")
    actions = parser.add_subparsers(dest="action", required=True)
    _add_gold(actions)
    _add_agree(actions)
    _add_tables(actions)
    _add_rewrite(actions)
    _add_speed(actions)
    _add_compare(actions)
    _add_main(actions)
    _add_experiment(actions)
    _add_runs(actions)


def _add_gold(actions) -> None:
    """Add ``gold-accuracy``: extractor accuracy on the gold atoms."""
    gold = actions.add_parser("gold-accuracy", help="extractor accuracy on the gold atoms")
    gold.add_argument("--extractor", default="spacy",
                      help="spacy, openai:<model>[@<base_url>] (key from $OPENAI_API_KEY) or "
                           "transformers:<path or resource role, e.g. smollm2-instruct>")
    gold.add_argument("--out", default=None, help="JSON report path")
    gold.add_argument("--threads", type=at_least_one, default=None, help="torch CPU threads (default: torch's)")
    gold.add_argument("--per-split", type=at_least_zero, default=0,
                      help="only the first N gold claims of each split (dev, test); 0 = all 120")
    gold.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                      help="a local LLM extractor's weights (auto: bf16 only with AMX)")
    gold.set_defaults(func=_gold)


def _add_agree(actions) -> None:
    """Add ``agreement``: the gate against people's meaning judgments."""
    agree = actions.add_parser("agreement", help="gate vs human meaning judgments")
    agree.add_argument("--pairs", required=True,
                       help="CSV of FC claim pairs with human meaning judgments (incrediblae_fc_meaning_dev.csv)")
    agree.add_argument("--profile", default="cpu", help="paper, cpu or smoke (models of the gate)")
    agree.add_argument("--extractor", default="spacy", help="atom extractor, as for gold-accuracy")
    agree.add_argument("--no-semantic", action="store_true", help="skip the BODEGA semantic score")
    agree.add_argument("--ablation", action="store_true",
                       help="instead: agreement with each gate parameter switched off in turn")
    agree.add_argument("--sample", type=at_least_zero, default=0,
                       help="a seeded random sample of N pairs (0 = all), for a slow extractor")
    agree.add_argument("--seed", type=int, default=0, help="the sample's seed")
    agree.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                       help="a local LLM extractor's weights (auto: bf16 only with AMX)")
    agree.add_argument("--threads", type=at_least_one, default=None, help="torch CPU threads (default: torch's)")
    agree.add_argument("--cache", default=None,
                       help="JSON-lines file keeping an LLM extractor's outcomes (a rerun resumes from it)")
    agree.add_argument("--out", default=None, help="JSON report path")
    agree.set_defaults(func=_agreement)


def _add_tables(actions) -> None:
    """Add ``tables``: the AtomEval tables for one verifier and rewriter."""
    tables = actions.add_parser("tables", help="AtomEval tables for one verifier")
    tables.add_argument("--data", default="data/FC", help="prepared FC task folder")
    tables.add_argument("--results", default="results", help="results folder with the trained victims")
    tables.add_argument("--verifier", default="auto", help="auto or a trained victim folder")
    tables.add_argument("--verdicts", default="results/atomeval/verdicts",
                        help="folder of the verifiers' saved verdicts by (weights hash, precision, text): read "
                             "first, the weights loaded only for texts without one, new verdicts appended; "
                             "'none' to always ask the model")
    tables.add_argument("--rewriter", default="rules",
                        help="rules, openai:<model>[@<url>], transformers:<path or role, e.g. smollm2-instruct>, "
                             "or saved:<an earlier --out folder> to judge its rewrites again")
    tables.add_argument("--threads", type=at_least_one, default=None, help="torch CPU threads (default: torch's)")
    tables.add_argument("--rewrite-cache", default="results/atomeval/rewrites.jsonl",
                        help="JSON lines of LLM rewrites by (model hash, prompt, claim), appended per batch and "
                             "read first, so a rerun judges without generating again; 'none' to switch off")
    tables.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                        help="LLM rewriter weights: auto = bf16 where the CPU has AMX, else fp32")
    tables.add_argument("--batch-size", type=at_least_one, default=8, help="LLM rewriter: claims decoded together")
    tables.add_argument("--families", type=family_list, default="colloquial,deseption,factmix,omission,advadd",
                        help="comma-separated rewriting families (default: all five)")
    tables.add_argument("--n-claims", type=at_least_zero, default=0, help="0 = every refuted claim of the split")
    tables.add_argument("--split", default="attack", choices=SPLITS, help="which TSV of --data: attack, dev or train")
    tables.add_argument("--profile", default="cpu", help="paper, cpu or smoke")
    tables.add_argument("--similarity-threshold", type=float, default=0.8,
                        help="S-ASR: a flip counts when SBERT cosine(claim, rewrite) >= this")
    tables.add_argument("--perplexity-ratio", type=float, default=1.5,
                        help="P-ASR: a flip counts when the rewrite's perplexity <= this x the claim's")
    tables.add_argument("--perplexity-threshold", type=float, default=None,
                        help="P-ASR with an absolute perplexity bound instead of the ratio")
    tables.add_argument("--out", default="results/atomeval/tables",
                        help="per family records and summary, and thresholds.json (the metrics as the "
                             "similarity threshold and perplexity ratio vary)")
    tables.set_defaults(func=_tables)


def _add_rewrite(actions) -> None:
    """Add ``rewrite``: fill an LLM rewriter's cache."""
    rewrite = actions.add_parser("rewrite", help="fill an LLM rewriter's cache (no verifier needed), with its cost")
    _add_claims(rewrite)
    rewrite.add_argument("--rewriter", required=True, help="transformers:<path or role> or openai:<model>[@<url>]")
    rewrite.add_argument("--rewrite-cache", default="results/atomeval/rewrites.jsonl", help="as for tables")
    rewrite.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                         help="the rewriter's weights: auto = bf16 where the CPU has AMX, else fp32")
    rewrite.add_argument("--batch-size", type=at_least_one, default=8, help="claims decoded together")
    rewrite.add_argument("--threads", type=at_least_one, default=None, help="torch CPU threads (default: torch's)")
    rewrite.add_argument("--cost", required=True, help="JSON of each family's decoding cost (updated per family)")
    rewrite.set_defaults(func=_rewrite)


def _add_speed(actions) -> None:
    """Add ``decode-speed``: a local rewriter's tokens per second."""
    speed = actions.add_parser("decode-speed", help="a local rewriter's tokens per second in fp32 and bf16 (tiny)")
    speed.add_argument("--rewriter", default="transformers:qwen2.5-0.5b", help="transformers:<path or role>")
    speed.add_argument("--data", default="data/FC", help="prepared FC task folder (the prompts' claims)")
    speed.add_argument("--n-claims", type=at_least_one, default=4, help="claims decoded together")
    speed.add_argument("--new-tokens", type=at_least_one, default=24, help="tokens decoded per claim")
    speed.add_argument("--precisions", default="fp32,bf16", help="measured in this order (comma-separated)")
    speed.add_argument("--threads", type=at_least_one, default=None, help="torch CPU threads (default: torch's)")
    speed.add_argument("--out", default=None, help="JSON report path")
    speed.set_defaults(func=_decode_speed)


def _add_compare(actions) -> None:
    """Add ``compare-rewriters``: rewriters side by side."""
    compare = actions.add_parser("compare-rewriters", help="a rewriter's tables beside a baseline's, same claims")
    compare.add_argument("--runs", required=True, nargs="+",
                         help="the folder the tables command wrote (its --out) for the rewriter to compare; or "
                              "several LABEL=FOLDER (e.g. rules=... qwen2.5-0.5b=...): every rewriter x family on "
                              "their common claims, with intervals, diagnostics, case studies and cost (--baseline "
                              "is then not used)")
    compare.add_argument("--cost", nargs="*", default=[], help="LABEL=the cost JSON that bodega atomeval rewrite wrote")
    compare.add_argument("--cases", type=at_least_zero, default=3, help="case studies per rewriter and family")
    compare.add_argument("--baseline", default="results/atomeval/cpu",
                         help="the tables folder of the baseline rewriter")
    compare.add_argument("--out", default=None, help="JSON path")
    compare.add_argument("--verifier", default=None, help="the verifier folder both runs used, to record it")
    compare.set_defaults(func=_compare)


def _add_main(actions) -> None:
    """Add ``main-table``: Tables 5-9 for every verifier."""
    main = actions.add_parser("main-table", help="the paper's Tables 5-9: rewriters by family, for each verifier")
    main.add_argument("--tables", default="results/atomeval/tables",
                      help="folder of <verifier folder name>/<rewriter label> tables runs (default: %(default)s)")
    main.add_argument("--verifiers", nargs="+", required=True, help="the verifiers' trained victim folders")
    main.add_argument("--rewriters", nargs="+", required=True, help="rewriter labels (folders under each verifier's)")
    main.add_argument("--cost", nargs="*", default=[], help="LABEL=the cost JSON that bodega atomeval rewrite wrote")
    main.add_argument("--profile", default="cpu", help="the gate's models for Table 9's unflipped rewrites")
    main.add_argument("--out", required=True, help="JSON path")
    main.set_defaults(func=_main_table)


def _add_claims(parser: argparse.ArgumentParser) -> None:
    """The claims to rewrite: ``--data``, ``--split``, ``--n-claims`` and ``--families``."""
    parser.add_argument("--data", default="data/FC", help="prepared FC task folder")
    parser.add_argument("--split", default="attack", choices=SPLITS, help="which TSV of --data: attack, dev or train")
    parser.add_argument("--n-claims", type=at_least_zero, default=0, help="0 = every refuted claim of the split")
    parser.add_argument("--families", type=family_list, default="colloquial,deseption,factmix,omission,advadd",
                        help="comma-separated rewriting families (default: all five)")


def _add_experiment(actions) -> None:
    """Add ``experiment``: rewrite, judge with every verifier and tabulate, resuming from the caches."""
    run = actions.add_parser("experiment", help="the rewriter experiment: rewrite, judge with every verifier, "
                                                "tabulate (resumes from the rewrite cache and the saved verdicts)")
    run.add_argument("--rewriters", nargs="+", required=True,
                     help="rules, transformers:<role or path>, openai:<model>[@<url>] or saved:<tables run>")
    run.add_argument("--verifiers", nargs="+", required=True, help="the verifiers' trained victim folders")
    _add_claims(run)
    run.add_argument("--tables", default="results/atomeval/tables", help="<verifier>/<rewriter> runs go here")
    run.add_argument("--rewrite-cache", default="results/atomeval/rewrites.jsonl", help="as for tables")
    run.add_argument("--verdicts", default="results/atomeval/verdicts", help="as for tables")
    run.add_argument("--costs", default="results/atomeval",
                     help="folder of each LLM rewriter's cost-<label>-<precision>.json")
    run.add_argument("--cost", nargs="*", default=[], help="more LABEL=cost JSON files to show (earlier runs)")
    run.add_argument("--precision", default="auto", choices=("auto", "fp32", "bf16"),
                     help="LLM rewriter weights: auto = bf16 where the CPU has AMX, else fp32")
    run.add_argument("--batch-size", type=at_least_one, default=16, help="LLM rewriter: claims decoded together")
    run.add_argument("--threads", type=at_least_one, default=None, help="torch CPU threads (default: torch's)")
    run.add_argument("--profile", default="cpu", help="paper, cpu or smoke")
    run.add_argument("--no-surface", action="store_true", help="skip S-ASR and P-ASR (no similarity or LM)")
    run.add_argument("--rejudge", action="store_true", help="judge again the runs that are already complete")
    run.add_argument("--out", required=True, help="the tables' JSON (the chapter reads book/data/atomeval_main.json)")
    run.set_defaults(func=_experiment)


def _add_runs(actions) -> None:
    """Add ``attack-vasr``: VASR of BODEGA attack runs."""
    runs = actions.add_parser("attack-vasr", help="VASR of BODEGA attack runs on FC")
    runs.add_argument("--runs", default="results/runs", help="a folder of <TASK>-* attack run folders")
    runs.add_argument("--data", default="data/FC", help="the prepared FC folder the runs attacked (gold labels)")
    runs.add_argument("--profile", default="cpu", help="paper, cpu or smoke")
    runs.add_argument("--claim-only", action="store_true", help="do not require the evidence to be preserved")
    runs.add_argument("--verdicts", default="results/atomeval/verdicts",
                      help="the victims' saved verdicts, asked before their weights ('none': always the weights)")
    runs.add_argument("--out", default=None, help="JSON report path")
    runs.set_defaults(func=_attack_vasr)


def _set_threads(threads: int | None) -> None:
    """Cap torch's CPU threads for the whole command: the verifier's decisions near P = 0.5 can differ
    between thread counts, so runs meant to be compared must use the same number."""
    if threads:
        import torch

        torch.set_num_threads(threads)


def _gold(args: argparse.Namespace) -> int:
    from bodega.atomeval.runs import extractor_accuracy

    _set_threads(args.threads)
    report = extractor_accuracy(args.extractor, args.out, args.threads, args.per_split, args.precision)
    for split in ("dev", "test", "all"):
        print(f"{split}: {report['correct'][split]}/{report['n'][split]} = {report['accuracy'][split]:.3f}")
    if "llm" in report:
        print(json.dumps(report["llm"]))
    return 0


def _agreement(args: argparse.Namespace) -> int:
    from bodega.atomeval.runs import gate_ablation, human_agreement

    from bodega.io import refuse_overwriting

    refuse_overwriting({"--out": args.out}, {"--pairs": args.pairs})
    if args.ablation:
        for row in gate_ablation(args.pairs, args.extractor, args.out)["rows"]:
            print(json.dumps(row))
        return 0
    _set_threads(args.threads)
    result = human_agreement(args.pairs, args.profile, args.extractor, not args.no_semantic, args.out,
                             args.sample, args.seed, args.precision, args.cache)
    for row in result["rows"]:
        print(json.dumps(row))
    return 0


def _tables(args: argparse.Namespace) -> int:
    from bodega.atomeval.factories import make_gate, make_rewriter
    from bodega.atomeval.runs import run_tables
    from bodega.atomeval.tables import table_metrics
    from bodega.atomeval.verifiers import get_verifier
    from bodega.atomeval.fever import refuted_claims
    from bodega.atomeval.metrics import MetricsConfig

    _set_threads(args.threads)
    claims = refuted_claims(args.data, args.split, args.n_claims or None)
    verdicts = None if args.verdicts.lower() == "none" else args.verdicts
    verifier, folder = get_verifier(args.verifier, args.results, args.data, args.profile, verdicts_dir=verdicts)
    cache = None if args.rewrite_cache.lower() == "none" else args.rewrite_cache
    rewriter = make_rewriter(args.rewriter, args.threads, cache, args.precision, args.batch_size)
    families = args.families
    if hasattr(rewriter, "covers"):  # saved rewrites: only the claims an earlier run rewrote
        claims = [c for c in claims if rewriter.covers(c.claim, families)]
        print(f"{len(claims)} claims have saved rewrites for every family under {rewriter.source}")
    config = MetricsConfig(similarity_threshold=args.similarity_threshold,
                           perplexity_ratio=args.perplexity_ratio, perplexity_threshold=args.perplexity_threshold)
    results = run_tables(claims, verifier, folder.name, make_gate(args.profile), rewriter,
                         families, args.out, args.profile, config)
    print(table_metrics(results).to_string(index=False))
    if hasattr(verifier, "computed"):
        print(f"verdicts: {verifier.saved} saved, {verifier.computed} computed by {folder} ({verifier.file.path})")
    return 0


def _rewrite(args: argparse.Namespace) -> int:
    import logging

    from bodega.atomeval.factories import make_rewriter
    from bodega.atomeval.runs import generate_rewrites
    from bodega.atomeval.fever import refuted_claims

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    _set_threads(args.threads)
    claims = refuted_claims(args.data, args.split, args.n_claims or None)
    rewriter = make_rewriter(args.rewriter, args.threads, args.rewrite_cache, args.precision, args.batch_size)
    if getattr(rewriter, "cache", None) is None:
        raise BodegaError(f"--rewriter {args.rewriter}: only an LLM rewriter has rewrites to cache")
    report = generate_rewrites(claims, rewriter, args.families, args.cost)
    print(json.dumps(report, indent=1))
    return 0


def _decode_speed(args: argparse.Namespace) -> int:
    from bodega.atomeval.decode_speed import decode_speed
    from bodega.io import atomic_write_json

    _set_threads(args.threads)
    report = decode_speed(args.rewriter, args.data, tuple(args.precisions.split(",")), n_claims=args.n_claims,
                          new_tokens=args.new_tokens, threads=args.threads)
    if args.out:
        atomic_write_json(args.out, report)
    print(json.dumps(report, indent=1))
    return 0


def _compare(args: argparse.Namespace) -> int:
    from bodega.atomeval.tables import compare_rewriters

    if len(args.runs) == 1 and "=" not in args.runs[0]:
        result = compare_rewriters(args.runs[0], args.baseline, args.out, verifier_folder=args.verifier)
        for row in result["metrics"]:
            print(json.dumps(row))
        return 0
    from bodega.report.atomeval_comparison import compare_many

    runs, costs = _labelled(args.runs, "--runs"), _labelled(args.cost, "--cost")
    result = compare_many(runs, costs, args.verifier, args.cases, args.out)
    for row in result["metrics"]:
        print(json.dumps({k: row[k] for k in ("rewriter", "family", "claims", "ASR", "S-ASR", "P-ASR", "VASR", "gap")}))
    return 0


def _main_table(args: argparse.Namespace) -> int:
    from bodega.report.atomeval_comparison import main_table

    from bodega.atomeval.factories import make_gate

    result = main_table(args.tables, args.verifiers, args.rewriters, _labelled(args.cost, "--cost"), args.out,
                        make_gate(args.profile))
    for verifier, comparison in result["verifiers"].items():
        for row in comparison["metrics"]:
            print(json.dumps({"verifier": verifier, **{k: row[k] for k in ("rewriter", "family", "claims", "ASR",
                                                                             "S-ASR", "P-ASR", "VASR")}}))
    return 0


def _experiment(args: argparse.Namespace) -> int:
    import logging

    from bodega.atomeval.pipeline import ExperimentPlan, run_experiment
    from bodega.report.atomeval_comparison import main_table

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    _set_threads(args.threads)
    plan = ExperimentPlan(args.rewriters, args.verifiers, args.data, args.split, args.n_claims,
                          tuple(args.families), args.tables, args.rewrite_cache, args.verdicts, args.costs,
                          args.precision, args.batch_size, args.threads, args.profile, not args.no_surface,
                          args.rejudge, _labelled(args.cost, "--cost"))
    result = run_experiment(plan, main_table, args.out)
    for verifier, comparison in result["verifiers"].items():
        for row in comparison["metrics"]:
            print(json.dumps({"verifier": verifier, **{k: row[k] for k in ("rewriter", "family", "claims", "ASR",
                                                                             "VASR")}}))
    return 0


def _labelled(items: list[str], option: str) -> dict[str, str]:
    """``LABEL=PATH`` items as a dict; a path without a label is labelled by its folder name."""
    out = {}
    for item in items:
        label, sep, path = item.partition("=")
        if not sep:
            label, path = item.rstrip("/").rsplit("/", 1)[-1], item
        if label in out:
            raise BodegaError(f"{option}: label {label!r} given twice; write LABEL=PATH")
        out[label] = path
    return out


def _attack_vasr(args: argparse.Namespace) -> int:
    from bodega.atomeval.attack_runs import runs_vasr
    from bodega.atomeval.factories import make_gate
    from bodega.io import atomic_write_json

    from pathlib import Path

    if not Path(args.runs).is_dir():
        raise MissingFileError(f"--runs {args.runs}: no such folder of attack runs")
    verdicts = None if args.verdicts.lower() == "none" else args.verdicts
    rows = runs_vasr(args.runs, make_gate(args.profile), check_evidence=not args.claim_only, data_dir=args.data,
                     verdicts_dir=verdicts)
    if not rows:
        print(f"no FC attack runs with records.jsonl under {args.runs}")
    for row in rows:
        print(json.dumps(row))
    if args.out:
        atomic_write_json(args.out, rows)
    return 0
