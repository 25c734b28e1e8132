"""Every search obeys the attacker's constraints through one framework step, with no search edited for a rule.

Each of the seven native attackers is built by its recipe and run through ``bodega.attack`` on the
keyword victim: a rule that admits nothing leaves every example unsuccessful, and a rule that only
refuses to replace one word changes the outcome and leaves that word in place.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import numpy as np
import pytest

import bodega
from attack_fakes import SENTENCES, KeywordVictim, OnesSemantic
from bodega.attacks import get_attacker
from bodega.attacks.constraints import Constraint
from bodega.errors import BodegaError

TEXTS = [SENTENCES[2], SENTENCES[5]]  # "corrupt" is the one word whose change flips each
LABELS = [1, 1]
NATIVE = ("PWWS", "TextFooler", "DeepWordBug", "Genetic", "SememePSO", "BAE", "BERT-ATTACK")


class AdmitNothing(Constraint):
    """Every word may change, no candidate passes; counts the texts it was prepared for."""

    def __init__(self):
        self.prepared, self.asked = 0, 0

    def prepare(self, state) -> None:
        self.prepared += 1

    def admits(self, state, index, changes, trials) -> np.ndarray:
        self.asked += len(trials)
        return np.zeros(len(trials), dtype=bool)


class KeepWord(Constraint):
    """A toy rule no search knows: any candidate that replaces ``word`` is refused (the word stays modifiable, so
    only a search that asks ``admits`` obeys it)."""

    def __init__(self, word: str):
        self.word, self.refused = word, 0

    def admits(self, state, index, changes, trials) -> np.ndarray:
        if state.text.words[index].text.lower() != self.word:
            return np.ones(len(trials), dtype=bool)
        self.refused += len(trials)
        return np.zeros(len(trials), dtype=bool)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> str:
    from mlm_fakes import tiny_bert

    return str(tiny_bert(tmp_path_factory.mktemp("constraint-step") / "tiny-bert"))


def _options(name: str, tiny: str) -> dict:
    """The cpu profile's fixed searches; the tiny random BERT as masked LM and sentence encoder."""
    options = dict(fidelity="fixed")
    if name == "TextFooler":
        options.update(encoder_dir=tiny)
    if name in ("BAE", "BERT-ATTACK"):
        options.update(mlm_path=tiny, candidates="masked-lm")
    if name == "BAE":
        options.update(encoder_path=tiny, similarity_threshold=0.9)
    return options


def _attack(name: str, tiny: str, constraints=()):
    return bodega.attack(KeywordVictim(), TEXTS, LABELS, task="PR2", attacker=name,
                         attacker_options=_options(name, tiny), semantic=OnesSemantic(), constraints=constraints)


def _search_functions() -> set:
    """Every search of the package: the ``*_search`` functions of :mod:`bodega.attacks.searches` and of
    :mod:`bodega.attacks.mlm_search`."""
    import bodega.attacks.searches as searches

    modules = [importlib.import_module(f"{searches.__name__}.{module.name}")
               for module in pkgutil.iter_modules(searches.__path__)]
    modules.append(importlib.import_module("bodega.attacks.mlm_search"))
    return {f for module in modules for name, f in inspect.getmembers(module, inspect.isfunction)
            if name.endswith("_search") and f.__module__ == module.__name__}


def test_the_seven_attackers_cover_every_search(tiny):
    used = {get_attacker(name, **_options(name, tiny)).search.func for name in NATIVE}
    assert used == _search_functions() and len(used) == 7


@pytest.mark.parametrize("name", NATIVE)
def test_a_rule_that_admits_nothing_stops_every_search(name, tiny):
    free = _attack(name, tiny)
    assert all(r.success for r in free.records)  # without the rule, both texts flip
    rule = AdmitNothing()
    stopped = _attack(name, tiny, [rule])
    assert not any(r.success for r in stopped.records) and stopped.summary.success_score == 0
    assert rule.prepared == len(TEXTS)  # once per text, by the framework
    assert stopped.settings["attacker"] == name


@pytest.mark.parametrize("name", NATIVE)
def test_a_toy_rule_changes_each_search_without_editing_it(name, tiny):
    free = _attack(name, tiny)
    assert all("corrupt" not in r.adversarial.lower().split() for r in free.records)
    rule = KeepWord("corrupt")
    ruled = _attack(name, tiny, [rule])
    assert rule.refused > 0
    assert [r.adversarial for r in ruled.records] != [r.adversarial for r in free.records]
    for record in ruled.records:
        assert record.adversarial is None or "corrupt" in record.adversarial.lower()


@pytest.mark.parametrize("name", ["BERT-ATTACK", "BAE"])
def test_the_as_run_masked_lm_searches_obey_a_users_rules(name, tiny):
    options = dict(mlm_path=tiny, fidelity="as-run")
    if name == "BAE":
        options.update(encoder_path=tiny, similarity_threshold=0.0)
    victim, goal = KeywordVictim(), bodega.attacks.Goal.untargeted(1)
    free = get_attacker(name, **options).attack(victim, TEXTS[1], goal, np.random.default_rng(0))
    rule = AdmitNothing()
    stopped = get_attacker(name, constraints=[rule], **options).attack(victim, TEXTS[1], goal, np.random.default_rng(0))
    assert free.success and not stopped.success and rule.prepared == 1 and rule.asked > 0


def test_a_kept_run_records_its_rules_and_resumes(tmp_path):
    report = bodega.attack(KeywordVictim(), TEXTS, LABELS, task="PR2", attacker="DeepWordBug",
                           semantic=OnesSemantic(), constraints=[KeepWord("corrupt")], out_dir=tmp_path / "run")
    recorded = report.run.config.attacker_options["constraints"]
    assert recorded == ["KeepWord(refused=0, word='corrupt')"]
    again = bodega.attack(KeywordVictim(), TEXTS, LABELS, task="PR2", attacker="DeepWordBug",
                          semantic=OnesSemantic(), constraints=[KeepWord("corrupt")], out_dir=tmp_path / "run")
    assert [r.adversarial for r in again.records] == [r.adversarial for r in report.records]
    with pytest.raises(BodegaError, match="attacker_options"):
        bodega.attack(KeywordVictim(), TEXTS, LABELS, task="PR2", attacker="DeepWordBug", semantic=OnesSemantic(),
                      constraints=[KeepWord("deal")], out_dir=tmp_path / "run")


def test_rules_that_cannot_apply_are_refused():
    with pytest.raises(BodegaError, match="not a bodega.attacks.constraints.Constraint"):
        get_attacker("DeepWordBug", constraints=["corrupt"])
    with pytest.raises(BodegaError, match="native backend"):
        get_attacker("PWWS", backend="openattack", constraints=[AdmitNothing()])
    with pytest.raises(BodegaError, match="given by name"):
        from attack_fakes import FirstWordDropper

        bodega.attack(KeywordVictim(), TEXTS, LABELS, task="PR2", attacker=FirstWordDropper(),
                      semantic=OnesSemantic(), constraints=[AdmitNothing()])
