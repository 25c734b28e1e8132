"""SememePSO: a particle swarm over WordNet substitutions (see :mod:`bodega.attacks.word_recipes`)."""
from __future__ import annotations

from functools import partial

from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.constraints import ConstraintSet
from bodega.attacks.fidelity import flag
from bodega.attacks.filter_words import filter_stopwords
from bodega.attacks.pos import PosTagger
from bodega.attacks.searches.pso import pso_search
from bodega.attacks.word_recipes import as_run_parts, word_candidates


def pso(profile: str = "cpu", population: int = 20, iterations: int = 20,
        lexicon: str | None = None, vectors: str | None = None, filter_words: str = "openattack",
        fidelity: str = "profile", respace: bool | None = None, openattack_bests: bool | None = None):
    """SememePSO (Zang et al. 2020) as OpenAttack runs it by default: WordNet candidates, 20 x 20.

    The paper's HowNet sememe candidates are used when the user supplies them as a
    lexicon file (``lexicon=``, one ``word<TAB>candidates`` line per word). OpenAttack's PSO
    remembers the texts it asked, so it has no ``reask`` option; ``openattack_bests`` (as-run)
    keeps its never-updated bests and its random draws (:func:`~bodega.attacks.searches.pso.pso_search`).
    """
    bests = flag(openattack_bests, profile, fidelity)
    search = partial(pso_search, transformation=word_candidates(lexicon, vectors, bests), population=population,
                     iterations=iterations, openattack_bests=bests)
    return WordLevelAttacker("SememePSO", search, PosTagger(),
                             dict(filter_words=filter_words, openattack_bests=bests),
                             **as_run_parts(profile, fidelity, respace, False),
                             constraints=ConstraintSet((filter_stopwords(filter_words),)))


register_attacker("SememePSO", pso, aliases=("PSO",))  # PSO: BODEGA's and OpenAttack's name
