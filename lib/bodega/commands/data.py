"""``bodega data fetch`` / ``prepare`` / ``prepare-missing``: get raw corpora, convert them into BODEGA's TSV splits."""
from __future__ import annotations

import argparse
from pathlib import Path

from bodega.commands import at_least_one
from bodega.names import name_list, task_name
from bodega.tasks import TASKS

RAW_HELP = "folder holding HN/, PR2/, FC/, RD/ (default: $BODEGA_RAW)"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bodega data``: fetch raw corpora, prepare task data, prepare what is missing."""
    data = subparsers.add_parser("data", help="get raw corpora and prepare task data")
    actions = data.add_subparsers(dest="action", required=True)
    fetch = actions.add_parser(
        "fetch", help="copy or download a task's raw corpus into a raw root and check every file's sha256",
        description="Copy a task's raw corpus from a folder or archive, or download it from a URL, into "
                    "RAW_ROOT/<its folder> (the layout prepare-missing, the data notebook and the grid read), "
                    "and check the sha256 of every file against the list shipped with the package. The book's "
                    "page 'Getting the data' says where each corpus is published.")
    fetch.add_argument("--task", required=True, type=task_name, help=TASKS.listing())
    fetch.add_argument("--from", dest="origin", required=True, metavar="PATH_OR_URL",
                       help="the corpus's folder (or a folder holding it), a zip or tar archive, or an http(s) or "
                            "file URL of one")
    fetch.add_argument("--raw-root", default=None, help="where to put it: the " + RAW_HELP)
    fetch.add_argument("--max-download-mb", type=at_least_one, default=2048,
                       help="stop a download past this many MiB (default 2048)")
    fetch.add_argument("--max-extract-mb", type=at_least_one, default=2048,
                       help="stop extracting an archive's corpus files past this many MiB (default 2048)")
    fetch.add_argument("--timeout", type=at_least_one, default=60,
                       help="seconds to wait for a server before giving up (default 60)")
    fetch.add_argument("--deadline", type=at_least_one, default=1800,
                       help="seconds a download may take in all, however steadily the server sends (default 1800)")
    fetch.set_defaults(func=_fetch)
    prepare = actions.add_parser("prepare", help="convert a raw corpus to train/attack/dev TSV")
    prepare.add_argument("--task", required=True, type=task_name, help=TASKS.listing())
    prepare.add_argument("--raw", required=True, help="folder of the raw corpus")
    prepare.add_argument("--out", required=True, help="output folder for train.tsv, attack.tsv, dev.tsv")
    prepare.add_argument("--source", default=None, help="source format where a task has several")
    prepare.add_argument("--skip-hash-check", action="store_true",
                         help="convert a copy whose files differ from the sha256 list shipped with the package "
                              "(by default such a copy is refused, naming the files)")
    prepare.set_defaults(func=_prepare)
    missing = actions.add_parser(
        "prepare-missing", help="prepare every task whose splits are missing under --out-root",
        description="For each task without train/attack/dev TSV files under OUT_ROOT/<TASK>, convert its raw "
                    "corpus from RAW_ROOT (laid out as bodega data fetch writes it, as the data notebook and the "
                    "grid read it). A task whose raw folder is absent is reported and left unprepared.")
    missing.add_argument("--raw-root", default=None, help=RAW_HELP)
    missing.add_argument("--out-root", default="data", help="folder to write <TASK>/{train,attack,dev}.tsv into")
    missing.add_argument("--tasks", default=None, type=name_list(task_name),
                         help="comma-separated tasks (default: every task)")
    missing.add_argument("--skip-hash-check", action="store_true",
                         help="convert copies whose files differ from the shipped sha256 list")
    missing.set_defaults(func=_prepare_missing)


def _fetch(args: argparse.Namespace) -> int:
    from bodega.data.corpora import corpus, fetch
    from bodega.data.transfer import MIB, Limits
    from bodega.paths import raw_root
    from bodega.io import terminate_as_interrupt

    task = args.task
    limits = Limits(args.max_download_mb * MIB, args.max_extract_mb * MIB, float(args.timeout),
                    float(args.deadline))
    with terminate_as_interrupt():  # SIGTERM unwinds, so the temporary files are removed
        target = fetch(task, args.origin, raw_root(args.raw_root), limits)
    entry = corpus(task)
    print(f"{task}: {len(entry.files)} files of {entry.name} in {target}, every sha256 as listed "
          f"(corpus digest {entry.digest()[:16]})")
    print(f"next: bodega data prepare --task {task} --raw {target} --out data/{task}")
    return 0


def _prepare(args: argparse.Namespace) -> int:
    from bodega.data.converters.common import RawDataError
    from bodega.data.prepare import prepare
    from bodega.io import refuse_overwriting

    refuse_overwriting({"--out": args.out}, {"--raw": args.raw})
    try:
        splits = prepare(args.task, args.raw, args.out, args.source, verify=not args.skip_hash_check)
    except RawDataError as error:
        raise RawDataError(f"{error}. With a copy at hand, `bodega data fetch --task {args.task} --from PATH_OR_URL` "
                           "puts it in place and checks its files") from error
    for name, rows in splits.items():
        print(f"{name}: {len(rows)} rows, {sum(r.label for r in rows)} positive")
    for note in splits.notes:
        print(f"note: {note}")
    return 0


def missing_tasks(out_root: str | Path, tasks: list[str]) -> list[str]:
    """The tasks of ``tasks`` lacking one of the split files under ``out_root`` (as the grid decides it)."""
    from bodega.experiments.runner import SPLIT_FILES

    return [t for t in tasks if not all((Path(out_root) / t / name).exists() for name in SPLIT_FILES)]


def _prepare_missing(args: argparse.Namespace) -> int:
    from bodega.data.prepare import prepare_tasks
    from bodega.paths import raw_root

    tasks = list(args.tasks or TASKS)
    todo = missing_tasks(args.out_root, tasks)
    for task in sorted(set(tasks) - set(todo), key=tasks.index):
        print(f"{task}: already prepared under {Path(args.out_root) / task}")
    if todo:
        for task, line in prepare_tasks(todo, raw_root(args.raw_root), args.out_root, missing_ok=True,
                                             verify=not args.skip_hash_check).items():
            print(f"{task}: {line}")
    return 0
