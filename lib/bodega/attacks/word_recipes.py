"""What the WordNet and character-edit recipes share: their candidate source and their as-run options.

Defaults are OpenAttack 2.1.1's with BODEGA's settings (``runs/attack.py``): filter
words = OpenAttack's list + ``~`` (``filter_words="spacy"`` selects spaCy's list + ``~``),
``unk='🔥'`` for DeepWordBug, PWWS and TextFooler. Each remaining difference from
OpenAttack is a named option whose default follows ``fidelity`` (as-run on ``paper``,
fixed elsewhere; :mod:`bodega.attacks.fidelity`): ``respace`` (attack OpenAttack's
lower-cased, re-spaced token view, punctuation tokens included, instead of the text as
it is), ``reask`` (send a text each time it is asked), ``openattack_order`` (DeepWordBug
PWWS and Genetic: OpenAttack's order of work and random draws, so both give the same text and
query count), ``homoglyphs`` (DeepWordBug: OpenAttack's table, or ours that covers capitals),
``openattack_bests`` (PSO: OpenAttack's bests that never update, and its random draws),
``sticky_threshold`` (TextFooler: the short-text threshold stays for later texts).
Part-of-speech tags come from spaCy in every setting (OpenAttack's NLTK tagger cannot
load offline).
"""
from __future__ import annotations

from bodega.errors import BodegaError
from bodega.attacks.fidelity import flag
from bodega.attacks.transformations import EmbeddingNeighbours, LexiconSubstitutes, WordNetSynonyms


def word_candidates(lexicon: str | None = None, vectors: str | None = None, openattack_lists: bool = False):
    """WordNet by default (``openattack_lists``: OpenAttack's lists); a user lexicon or word-vector file when given."""
    if lexicon and vectors:
        raise BodegaError("give either lexicon= or vectors=, not both")
    if lexicon:
        return LexiconSubstitutes(lexicon)
    if vectors:
        return EmbeddingNeighbours(vectors)
    return WordNetSynonyms(openattack_lists=openattack_lists)


def as_run_parts(profile: str, fidelity: str, respace: bool | None, reask: bool | None) -> dict:
    """The WordNet attackers' shared as-run options: OpenAttack lower-cases and re-spaces their input."""
    chosen = flag(respace, profile, fidelity)
    return dict(respace=chosen, lower=chosen, reask=flag(reask, profile, fidelity))
