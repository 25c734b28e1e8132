"""Constraints behind one interface: a new rule works in every search without editing one."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from attack_fakes import KeywordVictim
from bodega.attacks import Goal
from bodega.attacks.base import WordLevelAttacker
from bodega.attacks.constraints import Constraint, ConstraintSet, MaxModificationRate, Stopwords
from bodega.attacks.searches.genetic import genetic_search
from bodega.attacks.searches.pwws import pwws_search
from bodega.attacks.transformations import LexiconSubstitutes

TEXT = "Corrupt traitors lie to destroy us!"
LEXICON = "corrupt\tcrooked dishonest\ntraitors\tturncoats snakes\nlie\tfib\ndestroy\truin smash\n"
WEIGHTS = {"corrupt": 1.0, "traitors": 1.0, "lie": 1.0, "destroy": 1.0}  # three of the four must go


class NoLetter(Constraint):
    """A toy rule no search knows: no substitute may contain ``letter``, and the first word stays."""

    def __init__(self, letter: str):
        self.letter, self.asked = letter, 0

    def modifiable(self, state, index: int) -> bool:
        return index != 0

    def admits(self, state, index, changes, trials) -> np.ndarray:
        self.asked += len(trials)
        return np.array([self.letter not in trial[index] for trial in trials], dtype=bool)


def _attack(search, tmp_path, constraints) -> str | None:
    lexicon = tmp_path / "lexicon.tsv"
    lexicon.write_text(LEXICON, encoding="utf-8")
    searcher = partial(search, transformation=LexiconSubstitutes(lexicon))
    attacker = WordLevelAttacker("toy", searcher, constraints=ConstraintSet(tuple(constraints)))
    result = attacker.attack(KeywordVictim(WEIGHTS), TEXT, Goal.untargeted(1), np.random.default_rng(0))
    return result.adversarial


@pytest.mark.parametrize("search", [pwws_search, genetic_search], ids=["PWWS", "Genetic"])
def test_a_new_constraint_steers_two_searches_unedited(search, tmp_path):
    free = _attack(search, tmp_path, [])
    assert free is not None and "r" in "".join(w for w, o in zip(free.split(), TEXT.split()) if w != o)
    rule = NoLetter("r")
    ruled = _attack(search, tmp_path, [rule])
    assert rule.asked > 0
    assert ruled is not None and ruled.startswith("Corrupt ")
    changed = [w for w, o in zip(ruled.split(), TEXT.split()) if w != o]
    assert changed and all("r" not in w for w in changed)


def test_the_library_rules_are_constraints(tmp_path):
    assert _attack(pwws_search, tmp_path, [Stopwords(frozenset(["corrupt", "traitors", "lie", "destroy"]))]) is None
    assert _attack(pwws_search, tmp_path, [MaxModificationRate(0.5)]) is not None  # three of six words
    assert _attack(pwws_search, tmp_path, [MaxModificationRate(0.01)]) is None  # one word at most


def test_filter_words_refuse_substitutes_only_when_asked(tmp_path):
    from bodega.attacks.searches.common import SearchState
    from bodega.text import tokenize

    state = SearchState(tokenize(TEXT), ["other"] * 6, None, np.random.default_rng(0))
    trials = [{2: "the"}, {2: "fib"}]
    assert Stopwords().admits(state, 2, {}, trials).tolist() == [True, True]
    assert Stopwords(substitutes=True).admits(state, 2, {}, trials).tolist() == [False, True]
    assert not Stopwords().modifiable(state, 3) and Stopwords().modifiable(state, 2)  # "to" is a stopword
