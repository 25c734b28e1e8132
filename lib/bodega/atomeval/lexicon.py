"""WordNet relations between words: synonymy (shared synset) and generalisation (hypernymy).

Both work on the base forms that :func:`bodega.atomeval.normalise.normalise` produces. WordNet is the
offline 3.0 copy that :func:`bodega.resources.use_nltk_data` provides.
"""
from __future__ import annotations

from functools import lru_cache

from bodega.atomeval.normalise import _wordnet


@lru_cache(maxsize=50_000)
def _synsets(word: str) -> tuple:
    if not word.isalpha() and "-" not in word:
        return ()
    return tuple(_wordnet().synsets(word.replace(" ", "_")))


@lru_cache(maxsize=200_000)
def synonyms(a: str, b: str) -> bool:
    """True when the two words are the same or share a WordNet synset."""
    if a == b:
        return True
    return bool(set(_synsets(a)) & set(_synsets(b)))


@lru_cache(maxsize=50_000)
def _hypernym_closure(word: str) -> frozenset:
    found = set()
    for synset in _synsets(word):
        found.update(synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))
    return frozenset(found)


@lru_cache(maxsize=200_000)
def is_hypernym(general: str, specific: str) -> bool:
    """True when some sense of ``general`` is an ancestor of some sense of ``specific``.

    "film" is a hypernym of "documentary", "animal" of "dog". Identical and synonymous words are not.
    """
    if synonyms(general, specific):
        return False
    return bool(set(_synsets(general)) & _hypernym_closure(specific))
