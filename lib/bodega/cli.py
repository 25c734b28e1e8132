"""The ``bodega`` command. Each module in :mod:`bodega.commands` adds one subcommand.

A command module defines ``register(subparsers)``, which adds a parser and sets
``func`` to a callable taking the parsed arguments and returning an exit code.
Discovery keeps this file unchanged as commands are added. Every command runs under the
thread policy of :mod:`bodega.threads`; a command's ``--threads`` overrides its default.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
import traceback

import bodega.commands
from bodega.errors import BodegaError
from bodega.threads import apply_thread_policy

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

DESCRIPTION = """Measure how robust credibility classifiers are to adversarial examples (BODEGA),
and how valid adversarial claim rewrites are (AtomEval).

Typical use: prepare a task's data, train a victim, attack it, score the run:
  bodega data fetch --task PR2 --from ~/Downloads/ptc-v2/ --raw-root raw   (or set BODEGA_RAW)
  bodega data prepare --task PR2 --raw raw/PR2 --out data/PR2
  bodega train --task PR2 --victim BiLSTM --data data/PR2 --out results/models/PR2-BiLSTM
  bodega attack --task PR2 --victim results/models/PR2-BiLSTM --data data/PR2 --attacker PWWS --out results/runs/x
  bodega grid run parameters/grid_demo.yaml     (all of it, for every cell of a grid)
Run "bodega COMMAND --help" for a command's options."""


def build_parser() -> argparse.ArgumentParser:
    """The ``bodega`` parser, each module of :mod:`bodega.commands` adding its command."""
    parser = argparse.ArgumentParser(prog="bodega", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="debug logging, and the traceback of an error as well as its one-line message")
    parser.add_argument("--version", action="version", version=f"%(prog)s {bodega.__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(bodega.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"bodega.commands.{info.name}")
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. A :class:`~bodega.errors.BodegaError` (a user mistake: an option's name unknown to its
    registry as early as parsing), or an OSError about a path (a file where a folder is needed, no permission, a
    full disk), is printed as one line and exits 2; an interrupt (Ctrl-C, SIGTERM where a command asks for it)
    exits 130; any other exception is a bug and propagates with its traceback. ``-v`` shows the traceback of a
    user mistake too."""
    try:
        args = build_parser().parse_args(argv)
    except BodegaError as error:  # an option's name unknown to its registry (bodega.names, as an option's type)
        words = sys.argv[1:] if argv is None else argv
        print(f"bodega {next((w for w in words if not w.startswith('-')), '')}: error: {error}", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format=LOG_FORMAT)
    try:
        # Before any command imports torch: OpenMP reads its wait policy once, when it loads.
        apply_thread_policy(getattr(args, "threads", None))
        return int(args.func(args) or 0)
    except BodegaError as error:
        if args.verbose:
            traceback.print_exc()
        print(f"bodega {args.command}: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        if error.filename is None:  # not about a path the user gave: a bug, shown with its traceback
            raise
        if args.verbose:
            traceback.print_exc()
        print(f"bodega {args.command}: error: cannot use {error.filename}: {error.strerror or error}; check that "
              "path (a file where a folder is needed, its permissions, free space)", file=sys.stderr)
        return 2
    except KeyboardInterrupt as stop:
        if args.verbose:
            traceback.print_exc()
        print(f"bodega {args.command}: {stop or 'interrupted'}; nothing half-written is left", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
