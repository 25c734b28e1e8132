"""``bodega train``: train a victim classifier on a task's prepared data (resumable)."""
from __future__ import annotations

import argparse

from bodega.layout import METRICS
from bodega.commands import at_least_one
from bodega.names import profile_name, task_name
from bodega.precision import PRECISION_HELP, PRECISIONS
from bodega.profiles import PROFILES
from bodega.tasks import TASKS
from bodega.threads import THREADS_HELP
from bodega.victims.kinds import VICTIM_KINDS, normalise_kind


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega train``: train a victim classifier on a task."""
    parser = subparsers.add_parser("train", help=f"train a victim classifier ({', '.join(VICTIM_KINDS)})")
    parser.add_argument("--task", required=True, type=task_name, help=TASKS.listing())
    parser.add_argument("--victim", required=True, type=normalise_kind,
                        help=f"the victim kind: {VICTIM_KINDS.listing()}")
    parser.add_argument("--data", required=True, help="folder with train.tsv, attack.tsv and dev.tsv")
    parser.add_argument("--out", required=True, help="model folder (re-running resumes an interrupted run)")
    parser.add_argument("--profile", default="cpu", type=profile_name,
                        help=f"{PROFILES.listing()} (default: cpu)")
    parser.add_argument("--max-train", type=int, default=0, help="train on N random rows (0: every row)")
    parser.add_argument("--max-dev", type=int, default=0,
                        help="evaluate each point on N random dev rows (0: every row); for slow victims")
    parser.add_argument("--eval-every", type=int, default=0,
                        help="a dev evaluation point every N training rows (0: at epoch ends only): the learning curve")
    parser.add_argument("--patience", type=int, default=0,
                        help="stop after N evaluation points without a better dev F1 (0: never early; select dev)")
    parser.add_argument("--epochs", type=at_least_one, default=None, help="N >= 1 (default: the profile's value)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (initialisation, row sample, batch order)")
    parser.add_argument("--lr", type=float, default=None,
                        help="peak learning rate (default: the family's: BiLSTM 1e-3, BERT 5e-5, Gemma 1e-4)")
    parser.add_argument("--select", choices=("dev", "last"), default=None,
                        help="keep the point with the best dev F1, or the last one (default: the profile's; "
                             "paper: last, as BODEGA)")
    parser.add_argument("--bilstm-padding", choices=("packed", "right"), default="packed",
                        help="BiLSTM only: packed sequences (batch-independent), or right padding read by the "
                             "LSTM as BODEGA ran it")
    parser.add_argument("--threads", type=int, default=None, help=THREADS_HELP)
    parser.add_argument("--precision", choices=PRECISIONS, default="fp32",
                        help=PRECISION_HELP + "; bf16 trains BERT and the decoders under bf16 autocast, "
                             "the BiLSTM in fp32")
    parser.set_defaults(func=_train)


def _competence_note(model_dir) -> str:
    from bodega.victims.competence import competence_of_model

    quality = competence_of_model(model_dir)
    if quality is None:
        return "attack AUC not recorded (trained before it was)"
    return f"attack AUC {quality.roc_auc:.4f}, " + ("competent" if quality.competent else
                                                  f"not competent: {quality.reason}")


def _train(args: argparse.Namespace) -> int:
    import json

    from bodega.victims import train_victim

    out = train_victim(args.task, args.victim, args.data, args.out, profile=args.profile,
                       max_train=args.max_train, epochs=args.epochs, seed=args.seed, select=args.select,
                       lr=args.lr, bilstm_padding=args.bilstm_padding, max_dev=args.max_dev,
                       precision=args.precision, eval_every=args.eval_every, patience=args.patience)
    metrics = json.loads((out / METRICS).read_text(encoding="utf-8"))
    print(f"{out}: point {metrics['selected_point']}, epoch {metrics['selected_epoch']}, "
          f"{metrics['selected_rows_seen']} rows seen ({metrics['selection']}); "
          f"attack F1 {metrics['attack']['f1']:.4f} acc {metrics['attack']['accuracy']:.4f}; "
          f"dev F1 {metrics['dev']['f1']:.4f} acc {metrics['dev']['accuracy']:.4f}; "
          f"{_competence_note(out)}")
    return 0
