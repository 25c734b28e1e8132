"""NLTK's English WordNet reader, loaded without the mapping between WordNet versions.

Why: NLTK 3.9's reader maps every synset of WordNet 3.0 to the loaded version when it is
constructed, reading ``index.sense`` twice, even when the loaded version is 3.0 itself
(it compares the version number with the corpus name ``"wordnet"``). The mapping serves
only the Open Multilingual Wordnet's other languages, which this package never reads,
and it took about half of the reader's load (5 of 9 CPU seconds in a profiled attack
cell). Every English lookup (``synsets``, ``morphy``, lemmas) reads the same files and
gives the same answers.
"""
from __future__ import annotations

import warnings
from functools import lru_cache


@lru_cache(maxsize=1)
def english_wordnet():
    """The project's WordNet 3.0 (:func:`bodega.resources.use_nltk_data`) as an NLTK reader, loaded once."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from bodega.resources import use_nltk_data

    use_nltk_data()

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version: str = "wordnet"):
            return None  # no other language's data is read: nothing to map to WordNet 3.0

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return EnglishWordNet(nltk.data.find("corpora/wordnet"), None)
