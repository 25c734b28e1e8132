"""The findings page's intervals over trainings, recomputed from the committed records alone.

Independent of ``bodega.report``: each training's value is the mean of the ``bodega`` column of its cell's
``scores.jsonl`` (a failure scores 0), and the interval is scipy's t-interval over those values (Welch's between
two victims, paired between two scenarios of one victim) at the level the claim states, as the findings page says
it judges a difference. Comparisons over trainings use BERT-ATTACK, the attacker run on every training.
"""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

ROOT = Path(__file__).resolve().parents[1]
FINDINGS = ROOT / "book" / "data" / "study_findings.json"
ATTACKER = "BERT-ATTACK"
NUMBER = r"(-?\d+\.\d+)"
VICTIMS = re.compile(rf"^(\w+) − (\w+) {NUMBER} \[{NUMBER}, {NUMBER}\]$")
SCENARIOS = re.compile(rf"^(\w+) (targeted|untargeted) − (targeted|untargeted) {NUMBER} \[{NUMBER}, {NUMBER}\]$")
LEVEL = re.compile(r"(\d+(?:\.\d+)?)% interval")


def _findings() -> dict:
    if not FINDINGS.is_file():
        pytest.skip(f"{FINDINGS} is not committed", allow_module_level=True)
    return json.loads(FINDINGS.read_text(encoding="utf-8"))


def _results(findings: dict) -> Path:
    words = shlex.split(findings["command"])
    return ROOT / words[words.index("--results") + 1]


def _trainings(findings: dict, task: str, victim: str) -> int:
    """The trainings of a victim the findings file was computed on (a later round's committed cells belong to the
    next look); a file without ``victim_trainings`` trained every victim of a task alike."""
    return findings.get("victim_trainings", {}).get(f"{task}-{victim}", findings["trainings"][task])


def _training_values(runs: Path, task: str, victim: str, scenario: str, trainings: int) -> dict[int, float]:
    """Each finished training's cell value, by training (training 0's cell has no ``-t`` suffix), of its first
    ``trainings``."""
    values = {}
    for scores in runs.glob(f"{task}-{victim}-{ATTACKER}-{scenario}*/scores.jsonl"):
        suffix = scores.parent.name.removeprefix(f"{task}-{victim}-{ATTACKER}-{scenario}")
        if suffix and not re.fullmatch(r"-t\d+", suffix):
            continue
        training = int(suffix[2:] or 0)
        if training >= trainings:
            continue
        rows = [json.loads(line) for line in scores.read_text(encoding="utf-8").splitlines() if line.strip()]
        values[training] = float(np.mean([row["bodega"] for row in rows]))
    return values


def _level(findings: dict, finding: dict, differences: int) -> float:
    """The study's level per difference, Bonferroni-adjusted over the claim's differences; the reason prints it."""
    level = 1 - (1 - findings["level"]) / differences
    printed = LEVEL.search(finding["reason"])
    assert printed and float(printed.group(1)) == pytest.approx(level * 100, abs=0.05), finding["reason"]
    return level


def _terms(prefix: str) -> list[tuple[str, dict, str]]:
    findings = _findings()
    return [(f["claim"], f, term) for f in findings["findings"] if f["claim"].startswith(prefix)
            for term in filter(None, f["numbers"].split("; "))]


def _close(recomputed: tuple[float, float, float], printed: tuple[str, str, str]) -> None:
    # the page prints three decimals
    assert recomputed == pytest.approx(tuple(map(float, printed)), abs=6e-4)


@pytest.mark.parametrize("claim, finding, term", _terms("q2-b"), ids=lambda v: v if isinstance(v, str) else "")
def test_a_victim_difference_is_welchs_t_interval_over_the_trainings_cell_values(claim, finding, term):
    match = VICTIMS.match(term)
    assert match, f"{claim}: unexpected term {term!r}"
    first, second = match.group(1), match.group(2)
    findings = _findings()
    runs, task = _results(findings) / "runs", finding["task"]
    a = np.array(list(_training_values(runs, task, first, "T", _trainings(findings, task, first)).values()))
    b = np.array(list(_training_values(runs, task, second, "T", _trainings(findings, task, second)).values()))
    if min(len(a), len(b)) < 2:
        pytest.skip(f"{claim}: one training of a victim, judged over its rows")
    level = _level(findings, finding, len(finding["numbers"].split("; ")))
    interval = stats.ttest_ind(a, b, equal_var=False).confidence_interval(level)
    _close((a.mean() - b.mean(), interval.low, interval.high), match.groups()[2:])


@pytest.mark.parametrize("claim, finding, term", [t for t in _terms("q4-targeting") if not t[2].startswith("pooled")],
                         ids=lambda v: v if isinstance(v, str) else "")
def test_a_scenario_difference_is_the_paired_t_interval_over_the_trainings(claim, finding, term):
    match = SCENARIOS.match(term)
    assert match, f"{claim}: unexpected term {term!r}"
    victim, minuend, subtrahend = match.group(1), match.group(2), match.group(3)
    findings = _findings()
    runs, task = _results(findings) / "runs", finding["task"]
    n = _trainings(findings, task, victim)
    first = _training_values(runs, task, victim, minuend[0].upper(), n)
    second = _training_values(runs, task, victim, subtrahend[0].upper(), n)
    trainings = sorted(set(first) & set(second))
    if len(trainings) < 2:
        pytest.skip(f"{claim}: one training of {victim}, judged over its rows")
    first, second = np.array([first[t] for t in trainings]), np.array([second[t] for t in trainings])
    differences = sum(not term.startswith("pooled") for term in finding["numbers"].split("; "))
    interval = stats.ttest_rel(first, second).confidence_interval(_level(findings, finding, differences))
    _close(((first - second).mean(), interval.low, interval.high), match.groups()[3:])


@pytest.mark.parametrize("finding", [f for f in _findings()["findings"]
                                     if f["claim"].startswith(("q2-bilstm", "q2-bert")) and f["numbers"]],
                         ids=lambda f: f["claim"])
def test_a_most_claims_verdict_follows_from_its_printed_intervals_by_the_written_rule(finding):
    """"Most": each difference (printed so that above 0 is the claim's direction) above 0 agrees, any below 0
    disagrees, else cannot tell; a named deviation may only turn a verdict into "not comparable"."""
    intervals = [tuple(map(float, VICTIMS.match(term).groups()[3:])) for term in finding["numbers"].split("; ")]
    if all(low > 0 for low, _ in intervals):
        literal = "agree"
    elif any(high < 0 for _, high in intervals):
        literal = "disagree"
    else:
        literal = "cannot tell"
    assert finding["verdict"] in (literal, "not comparable"), (finding["claim"], finding["reason"])
