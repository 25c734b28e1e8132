"""What the "Attacks" and "Your own attacker" chapters quote: the benchmark of our attack backends against
OpenAttack (``book/data/attack_vs_openattack.json``) and the example attacker's scores
(``book/data/own_attacker/summary.json``)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

NATIVE = ("native-fixed", "native-as-run")
TABLE_COLUMNS = ["scenario", "attacker", "backend", "n", "cpu_ms_per_example", "queries", "success", "bodega",
                 "same_text", "same_queries"]


def speedups(rows: pd.DataFrame) -> dict[str, list[float]]:
    """Per native backend, OpenAttack's CPU time per example over ours, one value per (scenario, attacker)."""
    cpu: dict[str, list[float]] = {}
    for _, group in rows.groupby(["scenario", "attacker"]):
        ref = group[group.backend == "openattack"].cpu_ms_per_example.iloc[0]
        for backend in NATIVE:
            cpu.setdefault(backend, []).append(ref / group[group.backend == backend].cpu_ms_per_example.iloc[0])
    return cpu


def attack_benchmark_facts(bench: Mapping[str, Any]) -> dict[str, Any]:
    """The values the text quotes: the command, load and date, the sample sizes, how often the as-run backend
    matched OpenAttack's text and queries, and each native backend's speed-up range (``bench_speedup_fixed``,
    ``bench_speedup_asrun``)."""
    rows = pd.DataFrame(bench["rows"])
    as_run = rows[rows.backend == "native-as-run"]
    facts = {"bench_command": bench["command"],
             "bench_load": f"{bench['load_before'][0]:.1f}-{bench['load_after'][0]:.1f}",
             "bench_when": bench["started"], "bench_targeted_n": bench["settings"]["targeted_n"],
             "bench_untargeted_n": bench["settings"]["untargeted_n"],
             "bench_same_text": f"{int(as_run.same_text.sum())}/{int(as_run.n.sum())}",
             "bench_same_queries": f"{int(as_run.same_queries.sum())}/{int(as_run.n.sum())}"}
    for backend, values in speedups(rows).items():
        facts[f"bench_speedup_{backend.split('-', 1)[1].replace('-', '')}"] = f"{min(values):.1f}-{max(values):.1f}x"
    return facts


def attack_benchmark_table(bench: Mapping[str, Any]) -> pd.DataFrame:
    """The benchmark's rows as the chapter shows them: CPU time, queries, scores and agreement, 3 places."""
    from bodega.attacks.base import recorded_attacker

    table = pd.DataFrame(bench["rows"])[TABLE_COLUMNS].rename(columns={"cpu_ms_per_example": "CPU ms/example"})
    table["attacker"] = table.attacker.map(recorded_attacker)  # the benchmark's file may carry older names
    return table.round(3)


def _score(value: float | None) -> str:
    return f"{value:.3f}" if value is not None else "n/a"


def own_attacker_facts(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The example attacker's scores as the chapter quotes them ("n/a" where a score was not computed)."""
    return {"own_n": summary["n_examples"], "own_success": _score(summary["success_score"]),
            "own_semantic": _score(summary["semantic_score"]), "own_character": _score(summary["character_score"]),
            "own_bodega": _score(summary["bodega_score"]),
            "own_queries": f"{summary['queries_per_example']:.1f}"}
