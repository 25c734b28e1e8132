"""Targeted rows the committed predictions would not have admitted: where a targeted run's eligibility differs
from the victim's committed attack-set predictions.

Why a page needs it: BODEGA's targeted scenario attacks the non-credible rows the victim gets right. A targeted
run decides that with the victim's live prediction when it runs; ``attack_predictions.jsonl`` was written at
training, and bf16 kernels differ between kinds of CPU, so a row whose probability sits at 0.5 can fall on either
side. The cells' keys are final, so the records stand as run and the page shows the difference instead.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bodega.io import read_jsonl
from bodega.layout import PREDICTIONS, RECORDS, CellName, run_folders, victim_dir
from bodega.records import read_example_records


@dataclass(frozen=True)
class Admitted:
    """One attack row of one victim training that targeted cells attacked although the committed predictions call
    it credible (or it is labelled credible)."""

    victim: str  # the victim training's folder name: ``PR2-GEMMA2B``, ``RD-GEMMA2B-t2``
    row: int  # its index in attack.tsv
    id: str
    p_positive: float  # the committed P(non-credible)
    cells: tuple[str, ...]  # the targeted cells that attacked it


def admitted_rows(results: str | Path) -> list[Admitted]:
    """Every targeted record of ``results`` whose row the committed predictions of its victim training do not
    call non-credible and correct, grouped by (victim training, row), in folder order."""
    found: dict[tuple[str, int], Admitted] = {}
    predictions: dict[Path, list[dict]] = {}
    for folder in run_folders(results):
        name = CellName.parse(folder.name, attack=True)
        if name.scenario != "targeted" or not (folder / RECORDS).exists():
            continue
        victim = victim_dir(results, name.task, name.victim, name.training)
        rows = predictions.setdefault(victim, list(read_jsonl(victim / PREDICTIONS)))
        for record in read_example_records(folder / RECORDS, ("index",)):
            row = rows[record.index]
            if row["label"] == 1 and row["predicted"] == 1:
                continue
            key = (victim.name, record.index)
            seen = found.get(key) or Admitted(victim.name, record.index, row["id"], row["p_positive"], ())
            found[key] = Admitted(seen.victim, seen.row, seen.id, seen.p_positive, (*seen.cells, folder.name))
    return list(found.values())


def admitted_table(rows: list[Admitted]) -> str:
    """The rows as a Markdown table: victim training, row, committed P(non-credible), targeted cells."""
    lines = ["| victim (training) | attack row | committed P(non-credible) | targeted cells that attacked it |",
             "|---|---|---|---|"]
    lines += [f"| {r.victim} | `{r.id}` | {r.p_positive:.3f} | {len(r.cells)} |" for r in rows]
    return "\n".join(lines)


def admitted_text(rows: list[Admitted]) -> str:
    """``23 targeted records (in 23 cells) attack 5 rows ... P(non-credible) 0.489-0.500``."""
    records = sum(len(r.cells) for r in rows)
    cells = len({cell for r in rows for cell in r.cells})
    low, high = min(r.p_positive for r in rows), max(r.p_positive for r in rows)
    return (f"{records} targeted records (in {cells} cells) attack {len(rows)} row{'s' * (len(rows) != 1)} that the "
            f"committed predictions would not admit, with P(non-credible) {low:.3f}-{high:.3f}")
