"""The English WordNet reader: NLTK's answers, without NLTK's mapping between WordNet versions."""
from __future__ import annotations

import pytest

WORDS = ("dog", "run", "ran", "better", "geese", "quickly", "bank", "te", "ENE", "news", "fake", "claims", "was",
         "happily", "attack", "nation")


@pytest.mark.parametrize("pos", [None, "n", "v", "a", "r"])
def test_english_wordnet_answers_as_nltk_reader(pos):
    from nltk.corpus import wordnet as nltk_wordnet

    from bodega.wordnet import english_wordnet

    english = english_wordnet()
    for word in WORDS:
        assert [s.name() for s in english.synsets(word, pos)] == [s.name() for s in nltk_wordnet.synsets(word, pos)]
        assert english.morphy(word, pos) == nltk_wordnet.morphy(word, pos)
        assert [[lemma.name() for lemma in s.lemmas()] for s in english.synsets(word, pos)] == \
            [[lemma.name() for lemma in s.lemmas()] for s in nltk_wordnet.synsets(word, pos)]


def test_english_wordnet_skips_the_version_map(monkeypatch):
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from bodega.wordnet import english_wordnet

    english_wordnet.cache_clear()

    def refuse(self, version=None):
        raise AssertionError("index.sense read to map WordNet versions")
    monkeypatch.setattr(WordNetCorpusReader, "map_to_one", refuse)
    assert english_wordnet().map30 is None and english_wordnet() is english_wordnet()
