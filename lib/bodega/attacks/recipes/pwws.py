"""PWWS: WordNet synonyms by probability-weighted word saliency (see :mod:`bodega.attacks.word_recipes`)."""
from __future__ import annotations

from functools import partial

from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.constraints import ConstraintSet
from bodega.attacks.fidelity import flag
from bodega.attacks.filter_words import UNK_TEXT, filter_stopwords
from bodega.attacks.pos import PosTagger
from bodega.attacks.searches.pwws import pwws_search
from bodega.attacks.word_recipes import as_run_parts, word_candidates


def pwws(profile: str = "cpu", unk: str = UNK_TEXT, lexicon: str | None = None, vectors: str | None = None,
         filter_words: str = "openattack", fidelity: str = "profile", respace: bool | None = None,
         reask: bool | None = None, openattack_order: bool | None = None):
    """PWWS (Ren et al. 2019): WordNet synonyms ordered by probability-weighted word saliency."""
    ordered = flag(openattack_order, profile, fidelity)
    search = partial(pwws_search, transformation=word_candidates(lexicon, vectors, ordered), unk=unk,
                     openattack_order=ordered)
    return WordLevelAttacker("PWWS", search, PosTagger(), dict(filter_words=filter_words, openattack_order=ordered),
                             **as_run_parts(profile, fidelity, respace, reask),
                             constraints=ConstraintSet((filter_stopwords(filter_words),)))


register_attacker("PWWS", pwws)
