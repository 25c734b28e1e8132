"""The demo grid's per-cell numbers before and after a change, side by side.

"Before" is read from the executed stage notebooks committed at a git revision (their summary
table is the run's ``summary.json`` as displayed); "after" from a results folder's
``runs/*/summary.json``. Used to show what the fidelity changes (BODEGA's normalisation, trimming,
BODEGA's attacker settings) moved:

    .venv/bin/python benchmarks/demo_before_after.py --before-rev 0fe0d76 --after results/demo \
        --out book/data/demo_before_after.csv
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

import pandas as pd

COLUMNS = ("bodega_score", "success_score", "semantic_score", "character_score", "queries_per_example")
NOTEBOOKS = "book/generated/demo/runs"


def _number(value) -> float:
    """A summary value; a score with no successful example to average is shown as None."""
    return float("nan") if value in (None, "None", "NaN") else float(value)


def _summary_from_notebook(notebook: dict) -> dict[str, float]:
    """The run summary a stage notebook displayed (a one-column ``value`` table)."""
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            text = "".join(output.get("data", {}).get("text/plain", ""))
            if "bodega_score" not in text:
                continue
            values = {}
            for line in text.splitlines():
                match = re.match(r"^(\w+)\s+(-?[0-9.]+(?:e-?\d+)?|None|NaN)\s*$", line)
                if match and match.group(1) in COLUMNS:
                    values[match.group(1)] = _number(match.group(2))
            weights = re.search(r"^victim_weights\s+([0-9a-f]+)", text, re.M)
            if len(values) == len(COLUMNS) and weights:
                return {**values, "victim_weights": weights.group(1)}
    raise ValueError("no run summary table in the notebook")


def before(rev: str, root: Path) -> pd.DataFrame:
    """Summaries of the demo runs whose executed notebooks were committed at ``rev``."""
    names = subprocess.run(["git", "ls-tree", "--name-only", f"{rev}:{NOTEBOOKS}"], cwd=root, check=True,
                           capture_output=True, text=True).stdout.split()
    rows = []
    for name in sorted(n for n in names if n.endswith(".ipynb")):
        source = subprocess.run(["git", "show", f"{rev}:{NOTEBOOKS}/{name}"], cwd=root, check=True,
                                capture_output=True, text=True).stdout
        rows.append({"cell": name.removesuffix(".ipynb"), **_summary_from_notebook(json.loads(source))})
    return pd.DataFrame(rows)


def after(results: Path) -> pd.DataFrame:
    rows = []
    for path in sorted((results / "runs").glob("*/summary.json")):
        summary = json.loads(path.read_text())
        rows.append({"cell": path.parent.name, **{c: _number(summary[c]) for c in COLUMNS},
                     "victim_weights": summary["victim_weights"]})
    return pd.DataFrame(rows)


def compare(old: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    """One row per cell present in both, ``<column>_before`` / ``_after`` / ``_change``, and whether the
    victim's weights are the same (a retrained victim mixes its own change into the cell's)."""
    merged = old.merge(new, on="cell", suffixes=("_before", "_after"))
    for column in COLUMNS:
        merged[f"{column}_change"] = merged[f"{column}_after"] - merged[f"{column}_before"]
    # The notebooks show the weights hash cut short: the same victim when the full hash starts with it.
    merged["same_victim"] = [new.startswith(old) for old, new in
                             zip(merged["victim_weights_before"], merged["victim_weights_after"])]
    ordered = ["cell", "same_victim"] + [f"{c}_{part}" for c in COLUMNS for part in ("before", "after", "change")]
    return merged[ordered]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-rev", required=True, help="git revision whose committed demo notebooks are 'before'")
    parser.add_argument("--after", required=True, type=Path, help="results folder of the re-run grid")
    parser.add_argument("--out", type=Path, help="CSV to write")
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    table = compare(before(args.before_rev, root), after(args.after))
    if table.empty:
        raise SystemExit(f"no cell of {args.after} matches a committed notebook at {args.before_rev}")
    with pd.option_context("display.width", 250, "display.max_columns", 30):
        print(table.round(3).to_string(index=False))
    if args.out:
        tmp = args.out.with_suffix(".tmp")
        table.to_csv(tmp, index=False, float_format="%.6g")
        tmp.replace(args.out)


if __name__ == "__main__":
    main()
