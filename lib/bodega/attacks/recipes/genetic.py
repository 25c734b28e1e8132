"""The genetic attack of Alzantot et al. (see :mod:`bodega.attacks.word_recipes`)."""
from __future__ import annotations

from functools import partial

from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.constraints import ConstraintSet
from bodega.attacks.fidelity import flag
from bodega.attacks.filter_words import filter_stopwords
from bodega.attacks.pos import PosTagger
from bodega.attacks.searches.genetic import genetic_search
from bodega.attacks.word_recipes import as_run_parts, word_candidates


def genetic(profile: str = "cpu", population: int = 20, generations: int = 20,
            lexicon: str | None = None, vectors: str | None = None, filter_words: str = "openattack",
            fidelity: str = "profile", respace: bool | None = None, reask: bool | None = None,
            openattack_order: bool | None = None):
    """Genetic attack (Alzantot et al. 2018): population 20, 20 generations, WordNet candidates."""
    ordered = flag(openattack_order, profile, fidelity)
    search = partial(genetic_search, transformation=word_candidates(lexicon, vectors, ordered),
                     population=population, generations=generations, openattack_order=ordered)
    return WordLevelAttacker("Genetic", search, PosTagger(), dict(filter_words=filter_words, openattack_order=ordered),
                             **as_run_parts(profile, fidelity, respace, reask),
                             constraints=ConstraintSet((filter_stopwords(filter_words),)))


register_attacker("Genetic", genetic)
