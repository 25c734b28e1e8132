"""A run folder around the in-memory runner: records on disk as they finish, resumable, locked, and the
adapter that turns ``bodega attack``'s paths and names into the runner's objects.

The records file is the run's state: a run killed at any moment and started again reads it back (a torn
last line from the kill is dropped and the file rewritten), skips the examples already recorded and
continues, so no example is lost or repeated. A run never mixes inputs: ``run.json`` holds what its records
depend on (task, victim weights and precision, the attacked rows' sha256, the trimming tokenizer's hash,
attacker and settings) and a resumed run with other settings is refused; each resumed record must also
match its attack row by id and text. ``run.json`` is written only once everything is checked (options,
victim, data), so a mistyped command leaves nothing that blocks the corrected one. The folder is locked
while a process writes it, so two processes never write the same run.
"""
from __future__ import annotations

from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from bodega.attacks.base import recorded_attacker
from bodega.attacks.runner import AttackOptions, attack_examples
from bodega.errors import BodegaError
from bodega.io import exclusive_lock, relative_path, write_jsonl
from bodega.layout import RECORDS, RUN_CONFIG, RUN_LOCK, SCORES, SUMMARY
from bodega.records import (AttackReport, ExampleRecord, RunConfig, append_example_record, read_run_config,
                            read_run_records, write_run_config, write_summary)


class RunFolder:
    """A run's records, scores and summary in a folder (:mod:`bodega.layout` names its files)."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.records_path = self.out / RECORDS
        self.where = str(self.records_path)
        self.previous: RunConfig | None = None
        self.lines: dict[int, int] = {}

    def resume(self, config: RunConfig) -> list[ExampleRecord]:
        """The records of the run already here, refusing one whose settings differ from ``config``."""
        self.out.mkdir(parents=True, exist_ok=True)
        previous = read_run_config(self.out)
        if previous is not None:
            _check_same_run(self.out, previous, config)
        else:
            _refuse_foreign_outputs(self.out, config)
        self.previous = previous
        numbered = read_run_records(self.records_path)
        self.lines = {record.index: number for number, record in numbered}
        return [record for _, record in numbered]

    def locate(self, index: int) -> str:
        """Where the resumed record of example ``index`` is: the records file and its line."""
        return f"{self.where}:{self.lines.get(index)}"

    def begin(self, config: RunConfig) -> None:
        """Claim the folder for this run: ``run.json`` (a new run) and an empty records file."""
        if self.previous is None:
            write_run_config(self.out, config)
        self.records_path.touch()  # exists even when the scenario selects no example

    def append(self, record: ExampleRecord) -> None:
        """Append one record as one JSON line, flushed before the next example starts."""
        append_example_record(self.records_path, record)

    def finish(self, report: AttackReport, scores: list) -> None:
        """Write ``scores.jsonl`` and ``summary.json``."""
        write_jsonl(self.out / SCORES, [{"index": r.index, "id": r.id, **asdict(score)}
                                        for r, score in zip(report.records, scores)])
        write_summary(self.out, report.run)


def _check_same_run(out: Path, previous: RunConfig, config: RunConfig) -> None:
    """Refuse to resume a run of other settings, or one whose victim names no version."""
    if not config.victim_weights:
        raise BodegaError(f"{out} already holds a run and victim {config.victim} names no version, so "
                          "its earlier records cannot be trusted to come from the same model; give it a "
                          "version (a `version` attribute or --victim-version) or use a new output folder")
    if isinstance(previous.attacker, str):  # a run written under an older name of the same attacker
        previous = replace(previous, attacker=recorded_attacker(previous.attacker))
    different = previous.differences(config)
    if "data" in different:
        before = (previous.data or {}).get("attack_sha256") or "unrecorded"
        raise BodegaError(f"{out} holds a run on another attack.tsv (sha256 {before[:12]}; this --data has "
                          f"{config.data['attack_sha256'][:12]}): resuming would mix records of two data sets; "
                          "use another output folder, or the --data it was run on")
    if different:
        raise BodegaError(f"{out} holds a run with different settings ({', '.join(different)}); "
                          "use another output folder or delete this one")


def _refuse_foreign_outputs(out: Path, config: RunConfig) -> None:
    """Refuse a folder without ``run.json`` holding a summary or scores that no run of these settings wrote:
    they would be overwritten at the end. Other files in it are left alone (the run writes beside them)."""
    import json

    summary_path, scores_path = out / SUMMARY, out / SCORES
    ours = False
    if summary_path.is_file():
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            summary = None
        ours = isinstance(summary, dict) and all(summary.get(key) == getattr(config, key)
                                                 for key in ("task", "attacker", "victim_weights"))
    foreign = [path.name for path in (summary_path, scores_path) if path.exists() and not ours]
    if foreign:
        raise BodegaError(f"--out {out} holds {' and '.join(foreign)} that this run did not write (no {RUN_CONFIG} "
                          "there); give a new or empty folder, or move those files away")


def run_attack(task: str, victim: Any, data_dir: str | Path, attacker: Any, out_dir: str | Path,
               options: AttackOptions | None = None, **settings: Any) -> AttackReport:
    """Attack the examples of ``<data_dir>/attack.tsv`` into the run folder ``out_dir`` and return the
    scored run (see :func:`bodega.attacks.runner.attack_examples`).

    ``victim`` is a trained model folder, ``hf:PATH``, ``py:module:factory`` (with ``victim_options``) or a
    victim object; ``attacker`` a registered name, a ``py:`` spec or an attacker object. Settings come as an
    :class:`~bodega.attacks.runner.AttackOptions` or as its fields by keyword (``targeted=True``); ``out_dir``
    is locked so that two processes never write the same run, and a run killed at any point resumes where it
    stopped."""
    if options is not None and settings:
        raise TypeError("run_attack: give either options= or keyword settings, not both")
    unknown = sorted(set(settings) - {f.name for f in fields(AttackOptions)})
    if unknown:
        raise TypeError(f"run_attack: unknown setting(s) {', '.join(unknown)}")
    options = options if options is not None else AttackOptions(**settings)
    from bodega.attacks.run_inputs import open_run_inputs

    out = Path(out_dir)
    label = _victim_label(victim, out) if isinstance(victim, (str, Path)) else None
    inputs = open_run_inputs(task, victim, data_dir, attacker, options)
    return attack_into(out, inputs.task, inputs.victim, inputs.attacker, inputs.rows, options, victim_label=label,
                       data=inputs.data)


def attack_into(out_dir: str | Path, task: str, victim, attacker, examples: list, options: AttackOptions, *,
                victim_label: str | None = None, data: dict | None = None) -> AttackReport:
    """:func:`bodega.attacks.runner.attack_examples` with its records kept in the run folder ``out_dir``
    (locked while it runs; resumable)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise BodegaError(f"--out {out} is a file, not a folder; give a folder for the run's records and summary")
    with exclusive_lock(out / RUN_LOCK):
        report = attack_examples(task, victim, attacker, examples, options, RunFolder(out),
                                 victim_label=victim_label, data=data)
    return AttackReport(report.summary, report.records, report.run, out)


def _victim_label(victim_path: str | Path, out: Path) -> str:
    """A victim folder as seen from the run folder (``../../models/PR2-BiLSTM``), never an absolute path."""
    return relative_path(victim_path, out) if Path(victim_path).is_dir() else str(victim_path)
