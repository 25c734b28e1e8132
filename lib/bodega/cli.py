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

import bodega.commands
from bodega.threads import apply_thread_policy


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bodega", description=__doc__.splitlines()[0])
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for info in sorted(pkgutil.iter_modules(bodega.commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"bodega.commands.{info.name}")
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        # Before any command imports torch: OpenMP reads its wait policy once, when it loads.
        apply_thread_policy(getattr(args, "threads", None))
        return int(args.func(args) or 0)
    except (FileNotFoundError, KeyError, ValueError, RuntimeError) as error:
        print(f"bodega {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
