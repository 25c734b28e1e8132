"""Carry committed results over a release that moved every cell key without changing what the cells compute.

A cell's key hashes its stage notebook's code and the library code it runs (:mod:`bodega.experiments.hashing`),
so a refactor that changes no number still moves every key, and the grid would train and attack everything again.
For each finished cell of each grid, this compares the inputs its marker (``cell.json``) recorded with the inputs
the checkout gives it now, leaving out the two code hashes (:data:`CODE_INPUTS`):

- equal (data hashes, victim weights, parameters, profile settings, precision...): the cell is re-keyed: its
  marker gets the new key and inputs, and keeps the old key, code hashes, reason and date under ``rekeyed``;
- different: the cell is refused and listed with the inputs that differ; its marker is left as it is;
- already under the new key: left as it is; not finished (no marker, running, stopped, failed): left as it is.

The code hashes a marker recorded may also be older than the release being carried over (a cell left stale by an
earlier change, whose result may differ). ``--base REV`` (the commit the release started from) re-keys only the
cells that were done under REV's keys (its ``lib``, notebooks and grid files, computed in a child process) and
refuses the others.

Dry run unless ``--write``. Run it from the project folder (grids name their folders relative to it), on a machine
that resolves the grid's precision as the one that ran it:

    python scripts/rekey-results.py parameters/grid_study_v3.yaml --base 8566a47 --because "keys hash code cells only"
    python scripts/rekey-results.py parameters/grid_study_v3.yaml --base 8566a47 --because "..." --write

Exit status: 0 when no finished cell is refused, 1 when some are (each listed), 2 on a wrong option or grid file.
"""
from __future__ import annotations

import argparse
import io
import json
import logging
import os
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bodega.errors import BodegaError
from bodega.experiments import load_grid
from bodega.experiments.cells import Cell, attack_cells, victim_cells
from bodega.experiments.execute import read_marker
from bodega.experiments.hashing import HashCache
from bodega.io import atomic_write_json
from bodega.layout import CELL_MARKER

CODE_INPUTS = ("code", "notebook")
"""The inputs a re-key may change: the hashes of the library code and of the stage notebook's code."""
STATUSES = ("current", "rekeyed", "refused", "unfinished")


@dataclass(frozen=True)
class Verdict:
    """What a re-key does to one cell: ``current``, ``rekeyed``, ``refused`` (``why``) or ``unfinished``."""

    cell: Cell
    status: str
    why: str = ""


def _plain(inputs: dict) -> dict:
    """Inputs as their marker holds them (JSON), without the code hashes."""
    return {k: v for k, v in json.loads(json.dumps(inputs, default=str)).items() if k not in CODE_INPUTS}


def _flat(inputs: dict, prefix: str = "") -> dict:
    """Nested inputs as ``a.b.c`` -> value, so that a difference names the setting inside ``profile_settings``."""
    flat = {}
    for name, value in inputs.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value
    return flat


def _differences(recorded: dict, now: dict) -> list[str]:
    recorded, now = _flat(recorded), _flat(now)
    return [f"{name} ({json.dumps(recorded.get(name, '<absent>'))} -> {json.dumps(now.get(name, '<absent>'))})"
            for name in sorted(set(recorded) | set(now)) if recorded.get(name) != now.get(name)]


BASE_PROBE = """
import json, sys
from pathlib import Path
from bodega.experiments import load_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.execute import is_done
from bodega.experiments.hashing import HashCache
done = {}
for grid in sys.argv[1:]:
    spec, hashes = load_grid(grid), HashCache()
    names = done[grid] = []
    for victim in victim_cells(spec, hashes):
        cells = [victim, *attack_cells(spec, victim, hashes)] if Path(victim.out_dir).is_dir() else [victim]
        names += [cell.name for cell in cells if is_done(cell)]
print(json.dumps(done))
"""
"""Run with REV's library on PYTHONPATH, in a folder holding REV's files: each grid's cells done under REV's keys."""


def base_done(grids: list[str], rev: str) -> dict[str, set[str]]:
    """The cells of each grid that were done under the keys of commit ``rev`` (its ``lib``, notebooks and
    ``parameters``; the project's other folders, results and data among them, linked in as they are now)."""
    archive = subprocess.run(["git", "archive", rev, "lib", "notebooks", "parameters"], capture_output=True)
    if archive.returncode:
        raise BodegaError(f"--base {rev}: git archive failed: {archive.stderr.decode().strip()}")
    with tempfile.TemporaryDirectory(prefix="rekey-base-") as folder:
        base = Path(folder)
        with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
            tar.extractall(base, filter="data")
        for entry in Path.cwd().iterdir():
            if not (base / entry.name).exists():
                (base / entry.name).symlink_to(entry.resolve())
        env = {**os.environ, "PYTHONPATH": str(base / "lib")}
        probe = subprocess.run([sys.executable, "-c", BASE_PROBE, *grids], cwd=base, env=env, capture_output=True,
                               text=True)
    if probe.returncode:
        raise BodegaError(f"--base {rev}: computing its keys failed:\n{probe.stderr.strip()[-2000:]}")
    return {grid: set(names) for grid, names in json.loads(probe.stdout.splitlines()[-1]).items()}


def judge(cell: Cell, done_at_base: set[str] | None = None) -> Verdict:
    """Whether ``cell``'s finished result can take its new key: its other inputs are the ones it ran with and,
    with ``done_at_base``, it was done under the keys of the release's base."""
    marker = read_marker(cell.out_dir)
    if not marker or marker.get("status") != "done":
        return Verdict(cell, "unfinished")
    missing = [name for name in cell.expected if not (Path(cell.out_dir) / name).exists()]
    if missing:
        return Verdict(cell, "refused", f"its marker says done but {', '.join(missing)} is missing")
    if marker.get("key") == cell.key:
        return Verdict(cell, "current")
    if not isinstance(marker.get("inputs"), dict):
        return Verdict(cell, "refused", "its marker records no inputs to compare")
    differences = _differences(_plain(marker["inputs"]), _plain(cell.inputs))
    if differences:
        return Verdict(cell, "refused", "inputs differ: " + "; ".join(differences))
    if done_at_base is not None and cell.name not in done_at_base:
        return Verdict(cell, "refused", "not done under the base's keys (its code moved before this release)")
    return Verdict(cell, "rekeyed")


def rekeyed_marker(marker: dict, cell: Cell, because: str, date: str) -> dict:
    """``marker`` under ``cell``'s key and inputs, the old key and code hashes kept with the reason and date."""
    earlier = {"from": marker["key"], **{name: marker["inputs"].get(name) for name in CODE_INPUTS},
               "because": because, "date": date}
    return {**marker, "key": cell.key, "inputs": json.loads(json.dumps(cell.inputs, default=str)),
            "rekeyed": [*marker.get("rekeyed", []), earlier]}


def grid_verdicts(grid: str | Path, done_at_base: set[str] | None = None) -> list[Verdict]:
    """A verdict for every cell of ``grid`` (attack cells of the victims that have a folder)."""
    spec, hashes = load_grid(grid), HashCache()
    verdicts = []
    for victim in victim_cells(spec, hashes):
        verdicts.append(judge(victim, done_at_base))
        if Path(victim.out_dir).is_dir():
            verdicts += [judge(cell, done_at_base) for cell in attack_cells(spec, victim, hashes)]
    return verdicts


def write(verdicts: list[Verdict], because: str) -> int:
    """Write the new marker of every cell to re-key (atomically); the count."""
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    rekeyed = [v.cell for v in verdicts if v.status == "rekeyed"]
    for cell in rekeyed:
        atomic_write_json(Path(cell.out_dir) / CELL_MARKER, rekeyed_marker(read_marker(cell.out_dir), cell,
                                                                           because, date))
    return len(rekeyed)


def summary(grid: str, verdicts: list[Verdict], written: bool) -> list[str]:
    """The lines printed for one grid: counts, then every refused cell with why."""
    counts = {status: sum(v.status == status for v in verdicts) for status in STATUSES}
    verb = "re-keyed" if written else "to re-key (dry run: --write changes the markers)"
    lines = [f"{grid}: {len(verdicts)} cells: {counts['current']} current, {counts['rekeyed']} {verb}, "
             f"{counts['refused']} refused, {counts['unfinished']} unfinished"]
    lines += [f"  refused {v.cell.name}: {v.why}" for v in verdicts if v.status == "refused"]
    return lines


class _Once(logging.Filter):
    """Lets each message through once: every grid's cells resolve its precision, and each would warn again."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        new = message not in self.seen
        self.seen.add(message)
        return new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("grids", nargs="+", metavar="GRID", help="grid files whose finished cells to re-key")
    parser.add_argument("--because", required=True, help="why the keys moved (kept in every re-keyed marker)")
    parser.add_argument("--base", metavar="REV", help="re-key only cells done under the keys of this commit "
                        "(the one the release started from)")
    parser.add_argument("--write", action="store_true", help="change the markers (default: only report)")
    args = parser.parse_args(argv)
    if not args.because.strip():
        parser.error("--because needs a reason")
    logging.basicConfig(format="%(levelname)s %(message)s", level=logging.WARNING)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_Once())
    refused = 0
    try:
        base = base_done(args.grids, args.base) if args.base else {}
    except BodegaError as error:
        print(f"rekey-results: {error}", file=sys.stderr)
        return 2
    for grid in args.grids:
        try:
            verdicts = grid_verdicts(grid, base.get(grid) if args.base else None)
        except BodegaError as error:
            print(f"rekey-results: {error}", file=sys.stderr)
            return 2
        if args.write:
            write(verdicts, args.because.strip())
        print("\n".join(summary(grid, verdicts, args.write)))
        refused += sum(v.status == "refused" for v in verdicts)
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
