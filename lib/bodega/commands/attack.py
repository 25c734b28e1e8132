"""``bodega attack``: attack a task's examples with one attacker and write records and a summary."""
from __future__ import annotations

import argparse
import json

from bodega.attacks.base import ATTACKERS, registered_attackers
from bodega.commands import at_least_one
from bodega.errors import BodegaError
from bodega.names import attacker_name, profile_name, task_name
from bodega.precision import PRECISION_HELP, PRECISIONS
from bodega.profiles import PROFILES
from bodega.tasks import TASKS
from bodega.threads import THREADS_HELP


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega attack``: attack a victim on a task's attack set and score the run."""
    parser = subparsers.add_parser("attack", help="attack a trained victim and score the run")
    parser.add_argument("--task", required=True, type=task_name, help=TASKS.listing())
    parser.add_argument("--victim", required=True,
                        help="a victim folder trained by bodega train (e.g. results/models/PR2-BiLSTM); "
                             "hf:PATH, a local transformers sequence-classification folder; or "
                             "py:module:factory, a function returning an object with predict_proba(texts) -> [n, 2] "
                             "(column 1 = P(non-credible))")
    parser.add_argument("--positive-label", default=None,
                        help="hf: victims: the label (name in config.json's id2label, or 0/1) meaning "
                             "non-credible; default: read from id2label")
    parser.add_argument("--victim-version", default=None,
                        help="py: victims: a version naming the model, needed to cache or resume (default: "
                             "the object's version attribute)")
    parser.add_argument("--trim-tokenizer", default=None,
                        help="py: victims: a tokenizer folder whose first 512 tokens are kept, as BODEGA "
                             "trims (default: the object's trim_tokenizer attribute, else no trimming)")
    parser.add_argument("--data", required=True, help="folder with attack.tsv")
    parser.add_argument("--attacker", required=True, type=attacker_name,
                        help=f"{ATTACKERS.listing(registered_attackers())}; or your own "
                             "as py:module:factory or py:path/to/file.py:factory (with --backend openattack: a "
                             "factory of an OpenAttack attacker)")
    parser.add_argument("--out", required=True, help="run folder for records.jsonl and summary.json")
    parser.add_argument("--targeted", action="store_true", help="targeted scenario (1 -> 0)")
    parser.add_argument("--n", type=at_least_one, default=None,
                        help="attack only the first N examples (N >= 1; leave it out to attack every example)")
    parser.add_argument("--budget", type=int, default=None, help="query budget per example")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the attacker")
    parser.add_argument("--profile", default="cpu", type=profile_name, help=PROFILES.listing())
    parser.add_argument("--backend", default="native", choices=("native", "openattack"),
                        help="this package's attackers, or OpenAttack 2.1.1's as BODEGA ran them")
    parser.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32",
                        help=PRECISION_HELP + "; applies to the victim (not the BiLSTM) and the attack's encoder "
                             "and substitute LM; the run's BODEGA score is computed in fp32")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="attacker option (JSON value, e.g. power=3 or transform=\"swap\")")
    parser.add_argument("--allow-other-task", action="store_true",
                        help="attack a victim trained for another task than --task (a transfer experiment); "
                             "without it such a victim is refused")
    parser.add_argument("--allow-pickle", action="store_true",
                        help="hf: victims: load pickle weights (pytorch_model.bin), which can run code when "
                             "loaded; without it only safetensors are loaded")
    parser.add_argument("--cache", default=None, metavar="PATH|off",
                        help="the persistent prediction cache (SQLite) to use, or off (default: "
                             "$BODEGA_PREDICTION_CACHE, else .bodega-cache/predictions.sqlite in the project: "
                             "the checkout, or the current folder outside one)")
    parser.set_defaults(func=_attack)


def _parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise BodegaError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def _victim_options(args: argparse.Namespace) -> dict:
    names = {"positive_label": args.positive_label, "version": args.victim_version,
             "trim_tokenizer": args.trim_tokenizer, "allow_pickle": args.allow_pickle or None}
    return {key: value for key, value in names.items() if value is not None}


def _cache(value: str | None):
    """--cache: None (the default file), off, or a path."""
    if value is None:
        return True
    return False if value.strip().lower() in ("off", "none", "no") else value


def _attack(args: argparse.Namespace) -> int:
    from bodega.attacks import run_attack

    report = run_attack(args.task, args.victim, args.data, args.attacker, args.out, targeted=args.targeted,
                         n_examples=args.n, query_budget=args.budget, seed=args.seed, profile=args.profile,
                         backend=args.backend, attacker_options=_parse_options(args.option),
                         victim_options=_victim_options(args), allow_other_task=args.allow_other_task,
                         prediction_cache=_cache(args.cache), precision=args.precision)
    print(json.dumps(report.run.to_dict(), indent=2))
    return 0
