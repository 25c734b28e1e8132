"""VASR of BODEGA's word-level attackers on FC, from an attack run's ``records.jsonl``.

A record (``bodega.attacks`` runner output) has ``original`` and ``adversarial`` (``evidence ~
claim`` texts, or null) and ``success``. The gate judges the adversarial claim against the original
claim with the original evidence; VASR = successful records whose rewrite passes the gate / records.
With ``check_evidence`` an attack that also edited the evidence must preserve its atoms too.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

from bodega.io import read_jsonl
from bodega.tasks import split_pair


def attack_vasr(records: Iterable[dict], gate, check_evidence: bool = True) -> tuple[dict, list[dict]]:
    judged = []
    n = successes = valid = 0
    for record in records:
        n += 1
        if not record.get("success") or not record.get("adversarial"):
            continue
        successes += 1
        evidence, claim = split_pair(record["original"])
        adv_evidence, adv_claim = split_pair(record["adversarial"])
        verdict = gate.judge(claim, adv_claim, evidence)
        ok = verdict.valid
        evidence_changed = bool(evidence) and adv_evidence != evidence
        if check_evidence and evidence_changed:
            ok = ok and gate.judge(evidence, adv_evidence or record["adversarial"]).valid
        valid += ok
        judged.append({"id": record.get("id"), "valid": ok, "evidence_changed": evidence_changed,
                       "claim": claim, "adversarial_claim": adv_claim,
                       "diagnostics": [d.to_dict() for d in verdict.diagnostics]})
    summary = {"records": n, "successes": successes, "ASR": successes / n if n else None,
               "VASR": valid / n if n else None,
               "valid share of successes": valid / successes if successes else None}
    return summary, judged


def runs_vasr(runs_dir: str | Path, gate, task: str = "FC", check_evidence: bool = True) -> list[dict]:
    """One row per ``<runs_dir>/<task>-*`` run folder holding records.jsonl (empty when there is none)."""
    rows = []
    for folder in sorted(Path(runs_dir).glob(f"{task}-*")):
        records_path = folder / "records.jsonl"
        if not records_path.exists():
            continue
        summary_path = folder / "summary.json"
        meta = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        summary, _ = attack_vasr(read_jsonl(records_path), gate, check_evidence)
        rows.append({"run": folder.name, "victim": meta.get("victim"), "attacker": meta.get("attacker"),
                     "scenario": meta.get("scenario"), **summary})
    return rows
