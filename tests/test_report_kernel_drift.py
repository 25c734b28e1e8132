"""The table and sentence of a victim's predictions on another kind of CPU."""
from __future__ import annotations

from bodega_book.kernel_drift import kernel_drift_sentence, kernel_drift_table

DATA = {"command": "python benchmarks/kernel_drift.py --victims A,B", "measured": "2026-12-06T06:46:58+00:00",
        "cpu_flags": ["avx512_bf16"], "threads": 1,
        "rows": [{"victim": "PR2-A", "precision": "bf16", "trained_on": "amx-bf16", "here": "avx512-bf16", "rows": 4,
                  "max_change": 0.0048, "median_change": 0.0003,
                  "flips": [{"row": 2, "recorded": 0.4966, "here": 0.5003}], "f1_recorded": 0.64,
                  "f1_here": 0.65, "cpu_seconds": 1.0},
                 {"victim": "PR2-B", "precision": "bf16", "trained_on": "amx-bf16", "here": "avx512-bf16", "rows": 4,
                  "max_change": 0.0156, "median_change": 0.0015, "flips": [], "f1_recorded": 0.59, "f1_here": 0.59,
                  "cpu_seconds": 1.0}]}


def test_the_table_counts_flipped_decisions_per_victim():
    table = kernel_drift_table(DATA)
    assert table["decisions flipped"].to_dict() == {"PR2-A": 1, "PR2-B": 0}
    assert table.loc["PR2-B", "largest change of P"] == 0.0156


def test_the_sentence_names_the_largest_change_every_flip_and_the_command():
    sentence = kernel_drift_sentence(DATA)
    assert "by more than 0.0156 (PR2-B)" in sentence
    assert "1 of 8 decisions flipped (PR2-A row 2: 0.4966 -> 0.5003)" in sentence
    assert sentence.endswith("`python benchmarks/kernel_drift.py --victims A,B`.")
