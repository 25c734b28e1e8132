"""Recompute every victim's attack-set ROC AUC and F1 from its committed predictions, independently of bodega.

For each victim folder under ``<results>/models``, the gold labels come from the prepared data
(``<data>/<TASK>/attack.tsv``, read as plain tab-separated text) and the scores from the folder's
``attack_predictions.jsonl``; scikit-learn computes ROC AUC (of ``p_positive``) and F1 of class 1 (of
``predicted``), and both are compared with the folder's ``metrics.json`` (``attack_quality.roc_auc`` and
``attack.f1``). Nothing of bodega's victim or metric code runs, so a bug there cannot confirm itself; only the
file names come from :mod:`bodega.layout`, their one owner.

The tolerances: F1 rests on 0/1 decisions, so it must agree to rounding (1e-9). The AUC defaults to 1e-4: one
positive-negative pair ordered the other way moves it by 1/(positives x negatives), about 2.5e-5 on a 400-row
attack set, and float noise in the last bits of two nearly equal probabilities (another CPU's kernels) can
swap a few such pairs of a victim that ranks near chance. Every difference is printed, inside the tolerance too.

    python scripts/check_victim_metrics.py --results results/study --data data

Exit status: 0 when every victim agrees, 1 on a mismatch or a missing file (each named), 2 on a wrong option.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from sklearn.metrics import f1_score, roc_auc_score

from bodega.layout import METRICS, MODELS, PREDICTIONS, VICTIM_INFO

AUC_TOLERANCE = 1e-4
F1_TOLERANCE = 1e-9


@dataclass(frozen=True)
class VictimCheck:
    """One victim folder: the recomputed and recorded numbers, and what is wrong (empty when it agrees)."""

    victim: str
    rows: int | None = None
    auc: float | None = None
    recorded_auc: float | None = None
    f1: float | None = None
    recorded_f1: float | None = None
    missing: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether every file is there and both numbers agree within the tolerances."""
        return not self.missing and not self.problems


def gold_labels(path: Path) -> pd.DataFrame:
    """``label`` and ``id`` of every row of a BODEGA TSV (``label<TAB>id<TAB>text``, no header, no quoting)."""
    table = pd.read_csv(path, sep="\t", header=None, names=["label", "id", "text"], usecols=[0, 1],
                        dtype=str, quoting=csv.QUOTE_NONE, keep_default_na=False)
    table["label"] = table["label"].astype(int)
    return table


def _differs(value: float | None, recorded: float | None, tolerance: float) -> bool:
    return value is not None and recorded is not None and not abs(value - recorded) <= tolerance


def check_victim(folder: Path, data: Path, auc_tolerance: float = AUC_TOLERANCE,
                 f1_tolerance: float = F1_TOLERANCE) -> VictimCheck:
    """Recompute one victim's attack-set ROC AUC and F1 and compare them with its ``metrics.json``."""
    missing = [str(folder / name) for name in (VICTIM_INFO, METRICS, PREDICTIONS) if not (folder / name).is_file()]
    task = json.loads((folder / VICTIM_INFO).read_text(encoding="utf-8")).get("task") \
        if (folder / VICTIM_INFO).is_file() else None
    attack = data / str(task) / "attack.tsv"
    if task is not None and not attack.is_file():
        missing.append(str(attack))
    metrics = json.loads((folder / METRICS).read_text(encoding="utf-8")) if (folder / METRICS).is_file() else {}
    recorded_auc = (metrics.get("attack_quality") or {}).get("roc_auc")
    recorded_f1 = (metrics.get("attack") or {}).get("f1")
    if missing:
        return VictimCheck(folder.name, recorded_auc=recorded_auc, recorded_f1=recorded_f1, missing=tuple(missing))
    gold = gold_labels(attack)
    lines = (folder / PREDICTIONS).read_text(encoding="utf-8").splitlines()
    predictions = pd.DataFrame([json.loads(line) for line in lines if line.strip()],
                               columns=["id", "label", "predicted", "p_positive"])
    problems = []
    if len(predictions) != len(gold) or list(predictions["id"]) != list(gold["id"]):
        problems.append(f"{PREDICTIONS} has {len(predictions)} rows, {attack} {len(gold)}; their ids differ")
        return VictimCheck(folder.name, len(predictions), recorded_auc=recorded_auc, recorded_f1=recorded_f1,
                           problems=tuple(problems))
    if (predictions["label"] != gold["label"]).any():
        problems.append(f"{int((predictions['label'] != gold['label']).sum())} labels differ from {attack}")
    undecided = int((predictions["predicted"] != (predictions["p_positive"] > 0.5).astype(int)).sum())
    if undecided:
        problems.append(f"{undecided} rows' predicted class is not p_positive > 0.5")
    auc = float(roc_auc_score(gold["label"], predictions["p_positive"]))
    f1 = float(f1_score(gold["label"], predictions["predicted"], pos_label=1, zero_division=0.0))
    if recorded_auc is None:
        problems.append(f"{METRICS} records no attack_quality.roc_auc")
    if _differs(auc, recorded_auc, auc_tolerance):
        problems.append(f"ROC AUC {auc:.6f} != recorded {recorded_auc:.6f}")
    if recorded_f1 is None:
        problems.append(f"{METRICS} records no attack.f1")
    if _differs(f1, recorded_f1, f1_tolerance):
        problems.append(f"F1 {f1:.6f} != recorded {recorded_f1:.6f}")
    return VictimCheck(folder.name, len(gold), auc, recorded_auc, f1, recorded_f1, problems=tuple(problems))


def check_results(results: Path, data: Path, auc_tolerance: float = AUC_TOLERANCE,
                  f1_tolerance: float = F1_TOLERANCE) -> list[VictimCheck]:
    """:func:`check_victim` for every folder under ``<results>/models``."""
    return [check_victim(folder, data, auc_tolerance, f1_tolerance)
            for folder in sorted(p for p in (results / MODELS).iterdir() if p.is_dir())]


def _number(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.6f}"


def _difference(value: float | None, recorded: float | None) -> str:
    return "-" if value is None or recorded is None else f"{value - recorded:+.1e}"


def table(checks: list[VictimCheck]) -> str:
    """The checks as a fixed-width table, one victim a line, then what is missing or wrong."""
    header = ("victim", "rows", "AUC", "recorded", "diff", "F1", "recorded", "diff", "verdict")
    lines = [header] + [(c.victim, str(c.rows or "-"), _number(c.auc), _number(c.recorded_auc),
                         _difference(c.auc, c.recorded_auc), _number(c.f1), _number(c.recorded_f1),
                         _difference(c.f1, c.recorded_f1), "ok" if c.ok else "MISSING" if c.missing else "MISMATCH")
                        for c in checks]
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip() for line in lines]
    text += [f"{c.victim}: missing {path}" for c in checks for path in c.missing]
    text += [f"{c.victim}: {problem}" for c in checks for problem in c.problems]
    return "\n".join(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", required=True, type=Path, help="a results tree (e.g. results/study)")
    parser.add_argument("--data", default=Path("data"), type=Path, help="prepared data: <TASK>/attack.tsv")
    parser.add_argument("--auc-tolerance", type=float, default=AUC_TOLERANCE,
                        help="largest |recomputed - recorded| ROC AUC that agrees (default: %(default)s)")
    parser.add_argument("--f1-tolerance", type=float, default=F1_TOLERANCE,
                        help="largest |recomputed - recorded| F1 that agrees (default: %(default)s)")
    args = parser.parse_args(argv)
    if not (args.results / MODELS).is_dir():
        print(f"--results: {args.results / MODELS} is not a folder; give a results tree such as results/study",
              file=sys.stderr)
        return 2
    checks = check_results(args.results, args.data, args.auc_tolerance, args.f1_tolerance)
    if not checks:
        print(f"--results: no victim folders under {args.results / MODELS}", file=sys.stderr)
        return 2
    print(table(checks))
    failed = [c for c in checks if not c.ok]
    print(f"{len(checks) - len(failed)} of {len(checks)} victims agree with their {METRICS} "
          f"(ROC AUC within {args.auc_tolerance:g}, F1 within {args.f1_tolerance:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
