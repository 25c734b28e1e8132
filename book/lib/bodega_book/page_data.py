"""The data files of the book's pages: one schema each, checked when a benchmark writes the file and when a page
reads it.

A page's table is a three-part contract: a command writes ``book/data/<file>``, a page builder reads its keys, a
page calls the builder. :data:`SCHEMAS` is the one place that contract is written: the top-level keys every
reader relies on, their types, and the command that writes the file. A file that is missing or does not match
raises :class:`PageDataError`, so a page never prints a placeholder in place of a lost table and
``jupyter-book build -W`` fails instead.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from bodega.errors import BodegaError

NUMBER = (int, float)


class PageDataError(BodegaError):
    """A book page's data file is missing or does not hold what its page reads."""


@dataclass(frozen=True)
class Schema:
    """What a page reads of one kind of data file: ``required`` top-level keys with their types, ``optional``
    ones (checked where present: a key added after files of the kind were committed, whose readers say what its
    absence means), and the ``command`` that writes such a file (named in every error, so that the fix is one
    line away); a kind read into a typed object is checked, every key, by its own reader instead (``reader``,
    which raises :class:`PageDataError` naming the key at fault)."""

    command: str
    required: dict[str, type | tuple[type, ...]] = field(default_factory=dict)
    top: type = dict
    reader: Callable[[Any], Any] | None = None
    optional: dict[str, type | tuple[type, ...]] = field(default_factory=dict)

    def problems(self, data: Any) -> list[str]:
        """What ``data`` lacks or has of the wrong type, empty when it matches."""
        if self.reader is not None:
            try:
                self.reader(data)
            except PageDataError as error:
                return [str(error)]
            return []
        if not isinstance(data, self.top):
            return [f"expected a JSON {'object' if self.top is dict else 'array'}, got {type(data).__name__}"]
        if self.top is not dict:
            return []
        found = []
        for key, kind in [*self.required.items(), *self.optional.items()]:
            if key not in data:
                if key in self.required:
                    found.append(f"no key {key!r}")
            elif isinstance(data[key], bool) or not isinstance(data[key], kind):
                names = "/".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
                found.append(f"{key!r} is {type(data[key]).__name__}, expected {names}")
        return found




def _read_plan(data: Any) -> Any:
    """A plan file's content read by the plan's own typed reader (every key, every schema version)."""
    from bodega_book.study_plan import plan_from_dict

    return plan_from_dict(data)


def _read_attack_sets(data: Any) -> Any:
    """The attack-set file's content read by its own reader."""
    from bodega_book.attack_sets import attack_sets_from_dict

    return attack_sets_from_dict(data)


def _read_data_splits(data: Any) -> Any:
    """The split-count file's content read by its own reader."""
    from bodega_book.data_splits import data_splits_from_dict

    return data_splits_from_dict(data)


_PILOT = Schema("python benchmarks/study_pilot.py --grid GRID --out book/data/FILE", reader=_read_plan)
_PRECISION = Schema("python benchmarks/precision.py --json book/data/FILE",
                    {"command": str, "training": list, "throughput": dict, "batch_dependence": dict,
                     "attack_cells": dict})
_CONTENTION = Schema("python benchmarks/contention.py --out book/data/FILE",
                     {"command": str, "policies": dict, "measurements": list, "summary": list})

# kind of data file -> its schema; the benchmark that writes a kind names it in write_page_data
SCHEMAS: dict[str, Schema] = {
    "atomeval_attack_vasr": Schema("bodega atomeval attack-vasr --runs results/study/runs --data data/FC "
                                   "--out results/atomeval/attack_vasr_study.json (copied to book/data/FILE)",
                                   top=list),
    "atomeval_main": Schema("bodega atomeval experiment --rewriters ... --verifiers ... --out book/data/FILE",
                            {"rewriters": list, "verifiers": dict, "case": dict, "cost": list}),
    "attack_sets": Schema("python benchmarks/attack_sets.py --data data --out book/data/FILE",
                          reader=_read_attack_sets),
    "attack_vs_openattack": Schema("python benchmarks/attack_vs_openattack.py ... --json book/data/FILE",
                                   {"command": str, "rows": list, "settings": dict}),
    "bilstm_padding": Schema("python benchmarks/bilstm_padding.py --out book/data/FILE",
                             {"command": str, "models": dict, "attack_rows": int}),
    "cell_profile": Schema("python benchmarks/cell_profile.py --cell TASK=VICTIM_FOLDER --attacker ATTACKER "
                           "--runs cold,warm,reused --out book/data/FILE",
                           {"command": str, "precision": str, "kernels": str, "rows": list}),
    "contention": _CONTENTION,
    "data_splits": Schema("python benchmarks/data_splits.py --data data --out book/data/FILE",
                          reader=_read_data_splits),
    "decoder_pilot": Schema("python benchmarks/decoder_pilot.py --json book/data/FILE", {"rows": list}),
    "folding_effect": Schema("python benchmarks/folding_effect.py --runs RUNS --out book/data/FILE",
                             {"command": str, "rows": list}),
    "grid_cost": Schema("python benchmarks/grid_cost.py results/demo --json book/data/FILE",
                        {"command": str, "cores": int, "cells": list, "cpu_minutes": NUMBER,
                         "wall_cell_minutes": NUMBER, "idle_minutes_estimate": NUMBER}),
    "mlm_recovery": Schema("python benchmarks/mlm_recovery.py --data data --out book/data/FILE (without .json)",
                           {"items_rule": str, "runs": list}),
    "own_attacker": Schema("bodega attack --task PR2 --victim results/attack/models/PR2-BiLSTM --data data/PR2 "
                           "--attacker py:book/examples/word_dropper.py:build --option max_words=3 --targeted --n 30 "
                           "--out book/data/own_attacker --profile cpu --threads 1",
                           {"n_examples": int, "success_score": NUMBER, "semantic_score": (*NUMBER, type(None)),
                            "character_score": (*NUMBER, type(None)), "bodega_score": NUMBER,
                            "queries_per_example": NUMBER}),
    "precision": _PRECISION,
    "score_speed": Schema("python benchmarks/score_speed.py --out book/data/FILE",
                          {"command": str, "PR2": dict, "HN": dict}),
    "scpn_speed": Schema("python benchmarks/scpn_speed.py --json book/data/FILE", {"command": str, "rows": list}),
    "semantic_agreement": Schema("bodega score-agreement --out book/data/semantic_agreement.csv",
                                 {"n_pairs": int, "rows": list, "per_annotator_auc_semantic": list}),
    "semantic_agreement_examples": Schema("bodega score-agreement --out book/data/semantic_agreement.csv",
                                          top=list),
    "study_dev_baselines": Schema("python benchmarks/study_dev_baselines.py --out book/data/FILE",
                                  {"grid": str, "victims": dict}),
    "study_pilot": _PILOT,
    "study_round_two": Schema("python benchmarks/study_round_two.py --out book/data/FILE",
                              {"command": str, "grid": str, "level": NUMBER, "budget_hours": NUMBER,
                               "spent_hours": NUMBER, "round_one_cells": int, "round_one_hours": NUMBER,
                               "left_hours": NUMBER, "taken_hours": NUMBER, "factor": str, "taken": list,
                               "seeds": dict, "picks": list}),
    # level: the confidence of a single difference over trainings, 1 - 0.05 / looks (absent: 0.95, one look, as
    # study v3 published); looks: how many times the study judges its data (study v4: 2); trainings: {task: the
    # fewest trainings of a victim attacked there}; victim_trainings: {TASK-VICTIM: its trainings} (absent: as
    # trainings, every victim of a task trained alike, as study v3 published)
    "study_findings": Schema("python benchmarks/study_findings.py --results results/study-v3 "
                             "--grid parameters/grid_study_v3.yaml --out book/data/FILE",
                             {"command": str, "grid": str, "n_planned": int, "n_finished": int, "trainings": dict,
                              "retrain_spread": dict, "findings": list},
                             optional={"level": NUMBER, "looks": int, "victim_trainings": dict}),
    "study_renders": Schema("python benchmarks/study_renders.py --out book/data/FILE", top=list),
    "kernel_drift": Schema("python benchmarks/kernel_drift.py --results RESULTS --victims NAMES --json book/data/FILE",
                           {"command": str, "measured": str, "cpu_flags": list, "threads": int, "rows": list}),
    "trimming": Schema("bodega trimming --data data --out book/data/FILE", {"max_tokens": int, "tokenizers": dict}),
    "victim_throughput": Schema("python benchmarks/victim_throughput.py --json book/data/FILE",
                                {"command": str, "rows": list, "compute_bound_minilm_pr2": dict}),
    "victim_query_cost": Schema("python benchmarks/victim_throughput.py --committed MODELS --json book/data/FILE",
                                {"command": str, "task": str, "kernels": str, "rows": list, "torch_threads": int,
                                 "load_average": NUMBER}),
}

# every data file a page reads -> its kind
FILES: dict[str, str] = {
    "atomeval_attack_vasr_study.json": "atomeval_attack_vasr", "atomeval_main.json": "atomeval_main",
    "attack_sets.json": "attack_sets",
    "attack_vs_openattack.json": "attack_vs_openattack", "bilstm_padding.json": "bilstm_padding",
    "cell_profile_v3.json": "cell_profile",
    "contention.json": "contention", "contention_options.json": "contention", "data_splits.json": "data_splits",
    "decoder_pilot.json": "decoder_pilot",
    "folding_effect.json": "folding_effect", "grid_cost_demo.json": "grid_cost", "kernel_drift.json": "kernel_drift",
    "mlm_recovery.json": "mlm_recovery",
    "own_attacker/summary.json": "own_attacker", "precision.json": "precision",
    "precision_avx512_bf16.json": "precision", "score_speed.json": "score_speed",
    "scpn_speed.json": "scpn_speed", "semantic_agreement.json": "semantic_agreement",
    "semantic_agreement_examples.json": "semantic_agreement_examples",
    "study_dev_baselines.json": "study_dev_baselines", "study_pilot.json": "study_pilot",
    "study_pilot_v2.json": "study_pilot", "study_pilot_v3.json": "study_pilot",
    "study_pilot_v3_replan.json": "study_pilot", "study_pilot_v3_hn.json": "study_pilot",
    "study_pilot_v3_paired.json": "study_pilot",
    "study_findings.json": "study_findings", "study_renders.json": "study_renders", "trimming.json": "trimming",
    # study v3's verdicts as it published them (the rules and intervals of its release, kept for the changes table)
    "study_v3_findings.json": "study_findings",
    # study v4's round 2 as planned at look 1 (kept: the grid's seeds change once round 2 is added to it)
    "study_round_two.json": "study_round_two",
    "victim_throughput.json": "victim_throughput", "victim_query_cost_hn.json": "victim_query_cost",
}


def _schema(kind: str) -> Schema:
    if kind not in SCHEMAS:
        raise PageDataError(f"no schema for page data of kind {kind!r}; add it to bodega_book.page_data.SCHEMAS")
    return SCHEMAS[kind]


def check_page_data(kind: str, data: Any, where: str | Path) -> Any:
    """``data`` when it matches the schema of ``kind``; otherwise :class:`PageDataError` naming ``where``."""
    schema = _schema(kind)
    problems = schema.problems(data)
    if problems:
        raise PageDataError(f"{where}: not a {kind} data file ({'; '.join(problems)}); write it again with "
                            f"`{schema.command.replace('FILE', Path(where).name)}`")
    return data


def write_page_data(kind: str, path: str | Path, data: Any) -> None:
    """Check ``data`` against the schema of ``kind``, then write it (atomically) as indented JSON to ``path``."""
    from bodega.io import atomic_write_text

    check_page_data(kind, data, path)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def read_page_data(name: str, folder: str | Path = "data") -> Any:
    """The data file ``name`` of the book's data folder (a page runs in ``book/``), checked against its schema.
    A missing file raises: the page's table is lost, and the book build must say so rather than render."""
    if name not in FILES:
        raise PageDataError(f"{name} is not a registered page data file; add it to bodega_book.page_data.FILES")
    path = Path(folder) / name
    if not path.is_file():
        command = _schema(FILES[name]).command.replace("FILE", name)
        raise PageDataError(f"{path} is missing: `{command}` writes it")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise PageDataError(f"{path}: not valid JSON ({error})") from None
    return check_page_data(FILES[name], data, path)
