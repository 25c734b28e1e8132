"""Coarse part-of-speech tags (noun, verb, adj, adv, other) for word spans, from spaCy.

OpenAttack tags lower-cased text with NLTK's perceptron tagger, whose pickled model
recent NLTK refuses to load; here the packaged spaCy tagger tags the text as it is,
and each word span takes the tag of the spaCy token that starts inside it.
"""
from __future__ import annotations

import bisect
from functools import lru_cache

from bodega.text import TokenizedText


def coarse_tag(penn: str) -> str:
    """Map a Penn Treebank tag to OpenAttack's five classes."""
    if penn.startswith("NN"):
        return "noun"
    if penn.startswith("VB"):
        return "verb"
    if penn.startswith("JJ"):
        return "adj"
    if penn.startswith("RB"):
        return "adv"
    return "other"


@lru_cache(maxsize=1)
def _pipeline():
    from bodega.resources import load_spacy

    nlp = load_spacy()
    keep = {"tok2vec", "tagger"}  # tag_ comes from the tagger; nothing else is needed
    nlp.select_pipes(enable=[name for name in nlp.pipe_names if name in keep])
    return nlp


class PosTagger:
    """Tags word spans; loads spaCy on first use only."""

    def __init__(self, nlp=None):
        self._nlp = nlp

    @property
    def nlp(self):
        """The spaCy pipeline (tagger only), loaded on first use."""
        if self._nlp is None:
            self._nlp = _pipeline()
        return self._nlp

    def tags(self, tokenized: TokenizedText) -> list[str]:
        """One coarse tag per word span: that of the spaCy token the span starts in."""
        if not tokenized.words:
            return []
        doc = self.nlp(tokenized.text)
        starts = [token.idx for token in doc]
        tags = [coarse_tag(token.tag_) for token in doc]
        out = []
        for word in tokenized.words:
            position = bisect.bisect_right(starts, word.start) - 1
            out.append(tags[max(position, 0)])
        return out

    def tags_at(self, texts: list[str], start: int) -> list[str]:
        """The coarse tag of the word starting at character ``start`` in each text (one spaCy batch)."""
        out = []
        for doc in self.nlp.pipe(texts):
            starts = [token.idx for token in doc]
            position = max(bisect.bisect_right(starts, start) - 1, 0)
            out.append(coarse_tag(doc[position].tag_) if len(doc) else "other")
        return out
