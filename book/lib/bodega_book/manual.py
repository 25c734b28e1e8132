"""The manual-analysis sample: the best adversarial examples of one run, changes highlighted.

BODEGA's authors read the 20 best examples per task of BERT-ATTACK against BiLSTM. "Best" is the
per-example BODEGA score when the run stored it (in ``scores.jsonl``); otherwise
the character similarity (the part of the score that needs no model, so the report never runs one),
and the table says which was used.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from bodega.layout import RECORDS, RUNS, SCORES
from bodega.experiments.cells import run_name
from bodega.io import read_jsonl
from bodega.records import SCORED_FIELDS, ExampleRecord
from bodega.report.results import Results

"""Per-example scores of a run, one line ``{"index", "id", "bodega", ...}``, written by the attack runner."""


def _key(row: dict):
    """A score's row in attack.tsv (ids repeat in PR2, where they name articles); the id for older runs."""
    return ("index", row["index"]) if "index" in row else ("id", row["id"])


def _record_key(record: ExampleRecord):
    """A record's row, as :func:`_key` gives a score's."""
    return ("index", record.index) if record.index is not None else ("id", record.id)


@dataclass(frozen=True)
class Sample:
    """The examples picked for manual reading from one run, and the score they were ranked by."""

    task: str
    run: str
    ranked_by: str
    table: pd.DataFrame  # id, score, original, adversarial, diff_html


def manual_sample(results: Results, task: str, attacker: str = "BERT-ATTACK", victim: str = "BiLSTM",
                  n: int = 20) -> Sample | None:
    """The ``n`` best successful examples of the untargeted run (targeted if only that exists)."""
    from bodega.report.diff import render_diff_html
    from bodega.scoring.text import character_similarity

    for scenario in ("untargeted", "targeted"):
        name = run_name(task, victim, attacker, scenario)
        if (results.root / RUNS / name / RECORDS).exists():
            break
    else:
        return None
    records = [r for r in results.records(name, SCORED_FIELDS) if r.success and r.adversarial is not None]
    stored = {_key(s): s["bodega"] for s in read_jsonl(results.root / RUNS / name / SCORES)}
    ranked_by = "BODEGA score" if records and all(_record_key(r) in stored for r in records) \
        else "character similarity"
    rows = []
    for record in records:
        score = stored[_record_key(record)] if ranked_by == "BODEGA score" else character_similarity(
            record.original, record.adversarial)
        rows.append({"id": record.id, "score": round(float(score), 4), "original": record.original,
                     "adversarial": record.adversarial,
                     "diff_html": render_diff_html(record.original, record.adversarial)})
    table = pd.DataFrame(rows, columns=["id", "score", "original", "adversarial", "diff_html"])
    table = table.sort_values(["score", "id"], ascending=[False, True]).head(n).reset_index(drop=True)
    return Sample(task, name, ranked_by, table)


def sample_html(sample: Sample) -> str:
    """An HTML table for the book: rank, id, score and the highlighted change."""
    rows = "".join(f"<tr><td>{i + 1}</td><td>{row.id}</td><td>{row.score:.3f}</td><td>{row.diff_html}</td></tr>"
                   for i, row in sample.table.iterrows())
    return (f"<table><thead><tr><th>#</th><th>id</th><th>{sample.ranked_by}</th><th>change</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")
