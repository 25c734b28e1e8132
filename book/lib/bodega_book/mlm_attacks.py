"""Book material for the masked-LM attackers: a results table and ten highlighted examples.

Reads finished run folders (``summary.json`` and ``records.jsonl`` from the runner) and
writes ``<out>/attacks_mlm_results.csv`` and ``<out>/attacks_mlm_examples.md``, which
``book/attacks_mlm.md`` includes. Examples are the successful ones with the highest
BODEGA score, taken in turn from each run.

    python -m bodega_book.mlm_attacks --runs results/runs/PR2-BiLSTM-BERT-ATTACK-T ... --out book/data
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bodega.io import atomic_write_text
from bodega.layout import RECORDS
from bodega.records import SCORED_FIELDS, RunSummary, read_example_records, read_summary

COLUMNS = ("attacker", "scenario", "n_examples", "success_rate", "bodega", "semantic", "character", "queries")


def _summary_row(run: RunSummary) -> dict:
    scores = run.scores
    return dict(attacker=run.config.attacker, scenario=run.config.scenario, n_examples=run.n_examples,
                success_rate=scores.success_score, bodega=scores.bodega_score, semantic=scores.semantic_score,
                character=scores.character_score, queries=scores.queries_per_example)


def write_report(runs: list[Path], out: Path, k: int = 10, profile: str = "cpu") -> tuple[Path, Path]:
    """Write the runs' summary CSV and the ``k`` best examples (alternating runs) as Markdown into ``out``."""
    import pandas as pd

    from bodega.report.run_views import best_examples
    from bodega.scoring import load_semantic_model

    semantic = load_semantic_model(profile)
    rows, tables = [], []
    for run in runs:
        summary = read_summary(run)
        rows.append(_summary_row(summary))
        best = best_examples(read_example_records(run / RECORDS, SCORED_FIELDS), summary.config.task, semantic, k=k)
        best.insert(0, "attacker", summary.config.attacker)
        tables.append(best)
    results = out / "attacks_mlm_results.csv"
    atomic_write_text(results, pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(index=False, float_format="%.4f"))
    # Alternate between runs so both attackers are shown, best first within each.
    chosen, cursor = [], 0
    while len(chosen) < k and any(cursor < len(t) for t in tables):
        for table in tables:
            if cursor < len(table) and len(chosen) < k:
                chosen.append(table.iloc[cursor])
        cursor += 1
    lines = []
    for number, row in enumerate(chosen, start=1):
        lines.append(f"{number}. **{row['attacker']}**, example `{row['id']}`, BODEGA score {row['BODEGA']:.3f}, "
                     f"{row['queries']} queries:\n\n   <p>{row['change']}</p>\n")
    examples = out / "attacks_mlm_examples.md"
    atomic_write_text(examples, "\n".join(lines) if lines else "No successful adversarial examples.\n")
    return results, examples


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--runs`` folders into ``--out``; prints the two files written."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="+", required=True, help="run folders with summary.json and records.jsonl")
    parser.add_argument("--out", default="book/data")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--profile", default="cpu")
    args = parser.parse_args(argv)
    for path in write_report([Path(r) for r in args.runs], Path(args.out), args.k, args.profile):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
