"""``bodega portable-paths``: repair JSON results files that name the absolute paths of the machine that wrote them."""
from __future__ import annotations

import argparse

from bodega.errors import MissingFileError


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega portable-paths``: rewrite machine paths in results files as roles or relative paths."""
    command = subparsers.add_parser(
        "portable-paths",
        help="rewrite absolute paths in JSON results files as resource:<role> or project-relative paths",
        description="In string values only: a path into an installed resource package becomes resource:<role>, "
                    "a path under --root becomes relative to it. Files are rewritten in place, atomically.")
    command.add_argument("files", nargs="+", help="JSON files to rewrite")
    command.add_argument("--root", default=None,
                         help="the project root on the machine that wrote the files (default: this project's root)")
    command.add_argument("--check", action="store_true",
                         help="change nothing; exit 1 when a file would change")
    command.set_defaults(func=_portable_paths)


def _portable_paths(args: argparse.Namespace) -> int:
    import json
    from pathlib import Path

    from bodega.paths import project_root
    from bodega.paths import portable, rewrite_json_file

    root = Path(args.root) if args.root else project_root()
    changed = []
    for name in args.files:
        if not Path(name).is_file():
            raise MissingFileError(f"{name} not found: give JSON files to rewrite")
        if args.check:
            value = json.loads(Path(name).read_text(encoding="utf-8"))
            if portable(value, root) != value:
                changed.append(name)
        elif rewrite_json_file(name, root):
            changed.append(name)
    verb = "would change" if args.check else "rewrote"
    for name in changed:
        print(f"{verb} {name}")
    print(f"{len(changed)} of {len(args.files)} files {'to rewrite' if args.check else 'rewritten'} (root {root})")
    return 1 if args.check and changed else 0
