"""The finished runs a later run of the same cell replaced since a commit, as entries of a grid's
``cost-outside-markers.yaml``: their CPU time is in no current marker, but it was spent.

A victim whose weights are not committed (the BERT role's) is trained again on a new machine; where the new
weights differ, the runner runs its attack cells again and overwrites their markers. Run this after such a
run, with the commit whose markers the runner overwrote (or without ``--since``: every commit that changed a
marker), and ``--append`` to add the entries the file lacks:

    .venv/bin/python benchmarks/superseded_runs.py results/study --since 3d81ca6 --append
    .venv/bin/python benchmarks/superseded_runs.py results/study --append     # the whole history

``--uncounted`` lists instead the finished attack cells whose marker holds less CPU time than their examples
record (each example's CPU seconds in ``records.jsonl``): a run stopped by a runner that did not count its
notebook's kernel (before 79dabe1), or killed outright, left examples behind for the run that resumed it and took
their cost along; the gap is a lower bound of what the marker misses. A training records only wall seconds per
point, which exceed its CPU time on a busy machine, so it gives no such bound and is not listed.
"""
from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path, PurePosixPath

from bodega.experiments.execute import read_marker
from bodega.layout import CELL_MARKER, RECORDS, cell_markers
from bodega.records import read_example_records
from bodega_book.cost import OUTSIDE_MARKERS

MARKERS = "*/*/cell.json"  # <kind>/<cell>/cell.json under a results folder, as cell_costs reads them


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def superseded_runs(results: str | Path, commit: str) -> list[dict]:
    """One entry per marker that was finished at ``commit`` and is now gone or from another run (a new
    ``finished`` time): the old run's wall and recorded CPU seconds, and where they were read."""
    short = _git("rev-parse", "--short=7", commit).strip()
    entries = []
    for path in sorted(_git("ls-tree", "-r", "--name-only", commit, "--", str(results)).split()):
        marker = PurePosixPath(path).relative_to(PurePosixPath(results))
        if len(marker.parts) != 3 or marker.name != CELL_MARKER:  # <kind>/<cell>/cell.json, as cell_costs reads
            continue
        old = json.loads(_git("show", f"{commit}:{path}"))
        if old.get("status") != "done":
            continue
        current = read_marker(Path(path).parent) or {}
        if current.get("finished") == old["finished"]:
            continue
        entries.append({"cell": old["name"], "stopped": old["finished"], "wall_seconds": old["seconds"],
                        "cpu_seconds": old.get("cpu_seconds"),
                        "source": f"superseded: its marker at commit {short}"})
    return entries


def examples_cpu_seconds(folder: Path) -> float:
    """The CPU seconds a finished attack cell's examples record (``records.jsonl``)."""
    return sum(record.cpu_seconds or 0.0 for record in read_example_records(folder / RECORDS))


def uncounted_runs(results: str | Path) -> list[dict]:
    """One entry per finished attack cell whose marker's CPU seconds (every run of it) fall short of its examples'
    (:func:`examples_cpu_seconds`): the shortfall, a lower bound of the CPU time of runs no marker holds."""
    entries = []
    for path in cell_markers(results):
        marker = read_marker(path.parent) or {}
        if marker.get("status") != "done" or marker.get("cpu_seconds") is None or not (path.parent / RECORDS).is_file():
            continue
        examples, counted = examples_cpu_seconds(path.parent), float(marker["cpu_seconds"])
        if examples > counted:
            entries.append({"cell": marker["name"], "stopped": marker["finished"], "wall_seconds": 0.0,
                            "cpu_seconds": round(examples - counted, 2),
                            "source": f"uncounted: its examples' CPU seconds in records.jsonl ({examples:.1f}) exceed "
                                      f"the CPU seconds of every run its marker holds ({counted:.2f}); the run "
                                      "finished at 'stopped' resumed examples an uncounted run had attacked "
                                      "(a lower bound)"})
    return entries


def _identity(entry: dict) -> tuple[str, str, str]:
    """What makes an entry of the file one account of CPU time: the run (cell, when it stopped) and what the entry
    counts (its source up to the first colon: "superseded", "uncounted", ...): a run's superseded marker and the
    gap between its examples and that marker are two parts of one run's time, both to be counted."""
    return entry["cell"], entry["stopped"], str(entry.get("source", "")).split(":")[0]


def as_yaml(entries: list[dict]) -> str:
    """The entries as lines of the file's ``runs:`` list."""
    lines = []
    for entry in entries:
        lines.append(f"  - cell: {entry['cell']}")
        lines += [f"    {key}: {json.dumps(entry[key])}" for key in ("stopped", "wall_seconds", "cpu_seconds", "source")
                  if entry[key] is not None]
    return "".join(line + "\n" for line in lines)


def superseded_in_history(results: str | Path) -> list[dict]:
    """:func:`superseded_runs` over every commit that changed a marker of ``results``, each run once (the
    oldest commit that holds it names it)."""
    pattern = str(PurePosixPath(results) / MARKERS)
    found: dict[tuple[str, str], dict] = {}
    for commit in reversed(_git("log", "--format=%H", "--", pattern).split()):
        for entry in superseded_runs(results, commit):
            found.setdefault((entry["cell"], entry["stopped"]), entry)
    return sorted(found.values(), key=lambda entry: entry["stopped"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="a grid's results folder, e.g. results/study (run from the repository root)")
    parser.add_argument("--since", default=None, help="the commit whose markers the later runs overwrote "
                        "(default: every commit that changed a marker)")
    parser.add_argument("--uncounted", action="store_true", help="list the finished attack cells whose markers hold "
                        "less CPU time than their examples record, instead of superseded runs")
    parser.add_argument("--append", action="store_true", help=f"add the entries {OUTSIDE_MARKERS} lacks to it")
    args = parser.parse_args()
    if not Path(args.results).is_dir():
        parser.error(f"{args.results} is not a results folder; give a grid's results folder, e.g. results/study")
    if args.uncounted:
        entries = uncounted_runs(args.results)
    else:
        entries = (superseded_runs(args.results, args.since) if args.since
                   else superseded_in_history(args.results))
    path = Path(args.results) / OUTSIDE_MARKERS
    if args.append:
        import yaml

        text = path.read_text(encoding="utf-8") if path.exists() else "runs:\n"
        known = {_identity(run) for run in (yaml.safe_load(text) or {}).get("runs") or []}
        entries = [entry for entry in entries if _identity(entry) not in known]
        path.write_text(text + as_yaml(entries), encoding="utf-8")
        print(f"{len(entries)} run(s) added to {path}")
    else:
        print(as_yaml(entries), end="")


if __name__ == "__main__":
    main()
