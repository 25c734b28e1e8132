"""VASR of BODEGA's word-level attackers on FC, from an attack run's ``records.jsonl``, on the paper's population.

AtomEval attacks *refuted* claims that the verifier first gets right. A BODEGA run attacks other rows too:
the untargeted scenario attacks every row, SUPPORTS claims (label 0) and rows the victim already gets wrong
included. Here ASR and VASR are shares of the **initially correct refuted claims** only:

- SUPPORTS rows are excluded (``supports excluded``);
- refuted rows the victim already called SUPPORTS are the victim's errors, counted apart
  (``victim errors``), never as failed attacks;
- rows whose attack raised an exception are counted apart too (``attack errors``).

A record (:class:`bodega.records.ExampleRecord`, read by :mod:`bodega.records`) has ``index`` (row of
``attack.tsv``), ``id``, ``original`` and ``adversarial`` (``evidence ~ claim`` texts, or null) and
``success``. The gate judges the adversarial claim against the original claim with the original evidence;
with ``check_evidence`` an attack that also edited the evidence must preserve its atoms too.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from bodega.errors import BodegaError, MissingFileError
from bodega.layout import RECORDS, RUN_CONFIG
from bodega.records import ExampleRecord, RunConfig, read_example_records, read_run_config
from bodega.tasks import split_pair

REFUTED = 1  # FC label 1: the claim is refuted (non-credible)
NEEDED = ("index", "id", "original", "adversarial", "success", "error")
"""What each record must hold to be judged."""


@dataclass(frozen=True)
class Start:
    """What held before the attack: the row's gold label and the victim's first decision on it."""

    label: int
    prediction: int


def attack_vasr(records: Iterable[ExampleRecord], starts: dict[int, Start], gate,
                check_evidence: bool = True) -> tuple[dict, list[dict]]:
    """ASR and VASR over the initially correct refuted claims; ``starts`` maps a record's index to its Start."""
    judged = []
    counts = {"records": 0, "supports excluded": 0, "victim errors": 0, "attack errors": 0, "population": 0,
              "successes": 0, "valid": 0}
    for record in records:
        counts["records"] += 1
        start = starts[record.index]
        if start.label != REFUTED:
            counts["supports excluded"] += 1
            continue
        if start.prediction != REFUTED:
            counts["victim errors"] += 1
            continue
        if record.error:
            counts["attack errors"] += 1
            continue
        counts["population"] += 1
        if not record.success or not record.adversarial:
            continue
        counts["successes"] += 1
        evidence, claim = split_pair(record.original)
        adv_evidence, adv_claim = split_pair(record.adversarial)
        verdict = gate.judge(claim, adv_claim, evidence)
        ok = verdict.valid
        evidence_changed = bool(evidence) and adv_evidence != evidence
        if check_evidence and evidence_changed:
            ok = ok and gate.judge(evidence, adv_evidence or record.adversarial).valid
        counts["valid"] += ok
        judged.append({"id": record.id, "valid": ok, "evidence_changed": evidence_changed,
                       "claim": claim, "adversarial_claim": adv_claim,
                       "diagnostics": [d.to_dict() for d in verdict.diagnostics]})
    n = counts["population"]
    summary = {**counts, "ASR": counts["successes"] / n if n else None,
               "VASR": counts["valid"] / n if n else None,
               "valid share of successes": counts["valid"] / counts["successes"] if counts["successes"] else None}
    return summary, judged


def run_starts(folder: Path, records: list[ExampleRecord], data_dir: str | Path, victims: dict[str, Any],
               verdicts_dir: str | Path | None = None) -> dict[int, Start]:
    """Gold labels from ``<data_dir>/attack.tsv`` (checked against the records' ids) and the victim's first
    decisions: a targeted run attacked only refuted rows its victim got right; an untargeted run's victim
    is loaded from its ``run.json`` (weights hash checked) and asked about each refuted original text, one at a
    time as the runner asked it (with ``verdicts_dir``, its saved verdicts answer first: see
    :mod:`bodega.atomeval.verdicts`). SUPPORTS rows are excluded whatever the victim says, so it is not asked."""
    from bodega.data import read_tsv

    rows = read_tsv(Path(data_dir) / "attack.tsv")
    labels = {}
    for record in records:
        index = record.index
        if index >= len(rows) or str(rows[index].id) != record.id:
            raise BodegaError(f"{folder}/records.jsonl: record {index} ({record.id}) is not row {index} of "
                              f"{data_dir}/attack.tsv; pass the --data folder the run attacked")
        labels[index] = int(rows[index].label)
    config = read_run_config(folder)
    if config is None:
        raise MissingFileError(f"{folder}/{RUN_CONFIG} is missing: it names the run's scenario and victim, whose "
                               "first decisions find the initially correct refuted claims; give the whole run folder")
    if config.scenario == "targeted":
        return {i: Start(label, REFUTED) for i, label in labels.items()}
    victim = _run_victim(folder, config, victims, verdicts_dir)
    return {r.index: Start(labels[r.index], int(victim.predict([r.original])[0])
                           if labels[r.index] == REFUTED else 1 - REFUTED) for r in records}


def _run_victim(folder: Path, config: RunConfig, victims: dict[str, Any], verdicts_dir: str | Path | None = None):
    from bodega.victims import load_victim

    path = config.victim
    if path and not Path(path).is_absolute() and (folder / path).exists():
        path = str((folder / path).resolve())  # stored relative to the run folder (bodega attack does)
    if path not in victims and (not path or not Path(path).exists()):
        raise MissingFileError(f"{folder}: the untargeted run's victim {path!r} (run.json) is not here, and its "
                               "first decisions are needed to find the initially correct refuted claims; run "
                               "`bodega atomeval attack-vasr` from the folder the attack ran in")
    if path not in victims and verdicts_dir is not None:
        from bodega.atomeval.verdicts import VerdictVerifier

        victims[path] = VerdictVerifier(path, verdicts_dir, config.profile)
    if path not in victims:
        victims[path] = load_victim(path, profile=config.profile)
    victim = victims[path]
    if config.victim_weights and victim.weights_hash != config.victim_weights:
        raise BodegaError(f"{folder}: victim {path} has weights {victim.weights_hash[:12]}, the run attacked "
                          f"{config.victim_weights[:12]}; the model was retrained after the run")
    return victim


def runs_vasr(runs_dir: str | Path, gate, task: str = "FC", check_evidence: bool = True,
              data_dir: str | Path = "data/FC", victims: dict[str, Any] | None = None,
              verdicts_dir: str | Path | None = None) -> list[dict]:
    """One row per ``<runs_dir>/<task>-*`` run folder holding records.jsonl (empty when there is none).

    ``victims`` (run.json victim path -> loaded victim) is filled as untargeted runs need them; with
    ``verdicts_dir`` each answers from its saved verdicts first."""
    rows = []
    victims = {} if victims is None else victims
    for folder in sorted(Path(runs_dir).glob(f"{task}-*")):
        records_path = folder / RECORDS
        if not records_path.exists():
            continue
        records = read_example_records(records_path, NEEDED)
        config = read_run_config(folder)
        starts = run_starts(folder, records, data_dir, victims, verdicts_dir)
        summary, _ = attack_vasr(records, starts, gate, check_evidence)
        rows.append({"run": folder.name, "victim": config.victim, "attacker": config.attacker,
                     "scenario": config.scenario, **summary})
    return rows
