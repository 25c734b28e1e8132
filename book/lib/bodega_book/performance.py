"""Tables of the Performance chapter's precision section, computed from ``book/data/precision.json``.

Why here: the book page only loads the file, calls these functions and displays what they return, so the
arithmetic (speed-ups, intervals, the sentence the Deviations page repeats) is tested code, not page code.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

BATCHES = (1, 8, 32)


@dataclass(frozen=True)
class PrecisionTables:
    """What the page shows: the machine, throughput with speed-ups, attack cells, batch dependence, training."""

    machine: str
    throughput: pd.DataFrame
    attacks: pd.DataFrame
    batch_dependence: pd.DataFrame
    training: pd.DataFrame
    encoder: str
    verdict: str


def machine_line(measured: dict) -> str:
    """The CPU flags that decide ``auto``, the bf16 kernels and what ``auto`` chose."""
    present = [flag for flag, on in measured["cpu_flags"].items() if on]
    absent = [flag for flag, on in measured["cpu_flags"].items() if not on]
    return (f"CPU flags present: {', '.join(present) or 'none'}; absent: {', '.join(absent) or 'none'}. "
            f"bf16 runs on `{measured['bf16_kernels']}` kernels here, and `--precision auto` chose "
            f"`{measured['auto_resolves_to']}`.")


def throughput_table(measured: dict) -> pd.DataFrame:
    """texts/s per victim variant and batch size, with each variant's speed-up over the victim's fp32."""
    rows = []
    for victim, variants in measured["throughput"].items():
        base = next(v for v in variants if v["variant"] == "fp32")
        for variant in variants:
            row = {"victim": victim, "variant": variant["variant"]}
            for batch in BATCHES:
                row[f"texts/s, batch {batch}"] = variant[f"batch_{batch}"]
            for batch in BATCHES:
                row[f"x fp32, batch {batch}"] = variant[f"batch_{batch}"] / base[f"batch_{batch}"]
            rows.append(row)
    return pd.DataFrame(rows)


def attack_table(measured: dict) -> pd.DataFrame:
    """Each attack cell in fp32 and bf16: times, success, BODEGA score with interval, queries, speed-up."""
    rows = []
    for victim, cell in measured["attack_cells"]["cells"].items():
        intervals = cell["bodega_intervals"]
        for precision in ("fp32", "bf16"):
            run = cell[precision]
            estimate, low, high = intervals[precision]
            rows.append({"victim": victim, "precision": precision, "kernels": run["kernels"],
                         "examples": run["examples"], "attack wall (s)": run["attack_seconds"],
                         "attack CPU (s)": run["attack_cpu_seconds"], "whole run wall (s)": run["wall_seconds"],
                         "success": run["success"], "BODEGA": estimate,
                         "BODEGA 95% interval": f"[{low:.3f}, {high:.3f}]",
                         "queries/example": run["queries_per_example"],
                         "CPU speed-up": cell["fp32"]["attack_cpu_seconds"] / run["attack_cpu_seconds"]})
        estimate, low, high = intervals["bf16_minus_fp32"]
        rows.append({"victim": victim, "precision": "bf16 - fp32 (paired)", "BODEGA": estimate,
                     "BODEGA 95% interval": f"[{low:.3f}, {high:.3f}]"})
    return pd.DataFrame(rows)


def batch_table(measured: dict) -> pd.DataFrame:
    """Each text alone against the same texts in one call: largest probability change, decisions flipped."""
    return pd.DataFrame([{"victim": victim, "variant": variant, "texts": row["texts"],
                          "largest P(non-credible) change": row["max_probability_change"],
                          "decisions flipped": row["decision_flips"]}
                         for victim, variants in measured["batch_dependence"].items()
                         for variant, row in variants.items()])


def training_table(measured: dict) -> pd.DataFrame:
    """The training measurements per victim and precision: time per step, CPU time, loss and dev scores."""
    frame = pd.DataFrame(measured["training"])
    return frame[["kind", "precision", "kernels", "rows", "steps", "seconds_per_step", "cpu_seconds", "loss",
                  "dev_f1", "dev_accuracy"]].rename(columns={
                      "seconds_per_step": "wall s/step", "cpu_seconds": "CPU s (steps and evaluations)",
                      "dev_f1": "dev F1", "dev_accuracy": "dev accuracy"})


def encoder_line(measured: dict) -> str:
    """One sentence on the sentence encoder's speed and largest cosine change in bf16 against fp32."""
    encoder = measured["encoder"]
    return (f"The attack's sentence encoder (MiniLM) encoded {encoder['texts']} texts in "
            f"{encoder['fp32_seconds']:.2f} s in fp32 and {encoder['bf16_seconds']:.2f} s in bf16 "
            f"({encoder['fp32_seconds'] / encoder['bf16_seconds']:.2f}x); the largest change of a cosine "
            f"similarity between them was {encoder['max_cosine_change']:.4f}.")


def verdict_line(measured: dict) -> str:
    """Per attack cell: bf16's speed-up in attack CPU time and whether its BODEGA score lies in fp32's interval."""
    parts = []
    for victim, cell in measured["attack_cells"]["cells"].items():
        speed = cell["fp32"]["attack_cpu_seconds"] / cell["bf16"]["attack_cpu_seconds"]
        _, low, high = cell["bodega_intervals"]["fp32"]
        inside = low <= cell["bf16"]["bodega"] <= high
        parts.append(f"{victim}: bf16 {speed:.2f}x faster in attack CPU time, BODEGA score "
                     f"{cell['bf16']['bodega']:.3f} {'inside' if inside else 'outside'} fp32's interval "
                     f"[{low:.3f}, {high:.3f}]")
    return "; ".join(parts) + "."


def precision_tables(measured: dict) -> PrecisionTables:
    """Every table and sentence of the Performance chapter's precision section, from the benchmark file."""
    return PrecisionTables(machine_line(measured), throughput_table(measured), attack_table(measured),
                           batch_table(measured), training_table(measured), encoder_line(measured),
                           verdict_line(measured))


def bf16_effect(measured: dict) -> str:
    """One sentence on what bf16 changed in the measured run (``precision.json``), for the Deviations page."""
    changes = [row["max_probability_change"] for variants in measured["batch_dependence"].values()
               for name, row in variants.items() if name.startswith("bf16")]
    paired = [cell["bodega_intervals"]["bf16_minus_fp32"] for cell in measured["attack_cells"]["cells"].values()]
    return (f"measured (Performance chapter, {len(paired)} PWWS cells): BODEGA score bf16 - fp32 "
            + ", ".join(f"{d:+.3f} [{low:.3f}, {high:.3f}]" for d, low, high in paired)
            + f"; a text's probability moves with its batch by up to {max(changes):.4f} in bf16")
