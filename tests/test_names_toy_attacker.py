"""A new attacker is one file: this one defines a toy attacker, registers it under a name and an alias, and
every reader of attacker names (the attacker registry, grids, the runner, run folders, the report) knows it
by its canonical name, whichever spelling it was given."""
from __future__ import annotations

import json

import numpy as np
import pytest

from attack_fakes import SENTENCES, KeywordVictim, OnesSemantic
from bodega.attacks import AttackResult, get_attacker, register_attacker, registered_attackers, run_attack
from bodega.attacks.base import ATTACKERS, attacker_folder_name
from bodega.errors import BodegaError
from bodega.experiments import parse_grid
from bodega.experiments.cells import run_name
from bodega.report.results import load_results


class LastWordKeeper:
    """Keeps the last word only: it flips :class:`KeywordVictim`'s non-credible sentences, never its credible."""

    name = "LastWordKeeper"

    def attack(self, victim, text: str, goal, rng: np.random.Generator) -> AttackResult:
        shorter = text.split()[-1]
        return AttackResult(shorter, bool(goal.reached(victim.predict_proba([shorter]))[0]))


@pytest.fixture()
def toy_attacker():
    register_attacker("LastWordKeeper", lambda profile="cpu", **options: LastWordKeeper(),
                      aliases=("last-word",))
    yield "LastWordKeeper"
    ATTACKERS.unregister("LastWordKeeper")


def test_the_toy_attacker_is_known_by_its_name_and_alias(toy_attacker):
    assert toy_attacker in registered_attackers()
    assert isinstance(get_attacker("LAST_WORD"), LastWordKeeper)  # case and _ folded, the alias resolved
    grid = parse_grid({"name": "g", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
                       "attackers": ["last_word", "pso"], "scenarios": ["untargeted"]}, "g.yaml")
    assert grid.attackers == ("LastWordKeeper", "SememePSO")
    assert run_name("PR2", "BiLSTM", attacker_folder_name("last-word"), "untargeted") == "PR2-BiLSTM-LastWordKeeper-U"


def test_runs_under_an_alias_are_written_and_read_under_the_canonical_name(toy_attacker, keyword_attack_set,
                                                                         tmp_path):
    out = tmp_path / "results" / "runs" / run_name("PR2", "keyword", "last-word", "untargeted")
    report = run_attack("PR2", KeywordVictim(), keyword_attack_set(), "last-word", out, semantic=OnesSemantic(),
                        progress=False)
    assert report.settings["attacker"] == "LastWordKeeper" and report.settings["n_examples"] == len(SENTENCES)
    assert json.loads((out / "run.json").read_text())["attacker"] == "LastWordKeeper"
    assert 0 < report.summary.success_score < 1
    assert list(load_results(tmp_path / "results").runs.attacker) == ["LastWordKeeper"]


def test_the_python_api_takes_the_toy_attacker_by_its_alias(toy_attacker):
    import bodega

    report = bodega.attack(KeywordVictim(), SENTENCES[:2], [1, 1], task="pr", attacker="LAST_WORD",
                           semantic=OnesSemantic())
    assert report.settings["attacker"] == "LastWordKeeper" and report.settings["task"] == "PR2"
    assert [r.success for r in report.records] == [True, True]


def test_a_name_or_alias_of_another_attacker_is_refused(toy_attacker):
    with pytest.raises(BodegaError, match="'PSO' is taken by 'SememePSO'"):
        register_attacker("Another", lambda profile="cpu", **options: LastWordKeeper(), aliases=("PSO",))
    assert "Another" not in ATTACKERS
