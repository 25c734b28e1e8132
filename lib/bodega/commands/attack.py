"""``bodega attack``: attack a task's examples with one attacker and write records and a summary."""
from __future__ import annotations

import argparse
import json

from bodega.threads import THREADS_HELP


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("attack", help="attack a trained victim and score the run")
    parser.add_argument("--task", required=True, help="HN, PR2, FC or RD")
    parser.add_argument("--victim", required=True, help="trained victim folder (e.g. models/PR2-BiLSTM)")
    parser.add_argument("--data", required=True, help="folder with attack.tsv")
    parser.add_argument("--attacker", required=True,
                        help="BAE, BERT-ATTACK, DeepWordBug, Genetic, PSO, PWWS, SCPN or TextFooler")
    parser.add_argument("--out", required=True, help="run folder for records.jsonl and summary.json")
    parser.add_argument("--targeted", action="store_true", help="targeted scenario (1 -> 0)")
    parser.add_argument("--n", type=int, default=None, help="attack only the first N examples")
    parser.add_argument("--budget", type=int, default=None, help="query budget per example")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default="cpu", help="paper, cpu or smoke")
    parser.add_argument("--backend", default="native", choices=("native", "openattack"))
    parser.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="attacker option (JSON value, e.g. power=3 or transform=\"swap\")")
    parser.set_defaults(func=_attack)


def _parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--option {pair!r}: expected KEY=VALUE")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def _attack(args: argparse.Namespace) -> int:
    from bodega.attacks import run_attack

    summary = run_attack(args.task, args.victim, args.data, args.attacker, args.out, targeted=args.targeted,
                         n_examples=args.n, query_budget=args.budget, seed=args.seed, profile=args.profile,
                         backend=args.backend, attacker_options=_parse_options(args.option))
    print(json.dumps(summary, indent=2))
    return 0
