"""The five attackers built from WordNet or character edits: DeepWordBug, PWWS, TextFooler, Genetic, PSO.

Defaults are OpenAttack 2.1.1's, as BODEGA ran them. Deviations common to all: the
input is not lower-cased and untouched text keeps its spacing (OpenAttack lower-cases
PWWS, Genetic, PSO and TextFooler inputs and re-joins tokens with single spaces);
substitutes take the case of the word they replace; part-of-speech tags come from
spaCy (OpenAttack's NLTK tagger cannot load offline); stopwords are spaCy's list.
"""
from __future__ import annotations

from functools import partial

from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.constraints import PosAgreement, SentenceEncoder, SentenceSimilarity, Stopwords
from bodega.attacks.pos import PosTagger
from bodega.attacks.search import (UNK, char_edit_search, genetic_search, pso_search, pwws_search,
                                   textfooler_search)
from bodega.attacks.transformations import (EmbeddingNeighbours, LexiconSubstitutes, WordNetSynonyms,
                                            character_edit)


def word_candidates(lexicon: str | None = None, vectors: str | None = None):
    """WordNet by default; a user lexicon file or a word-vector file when given."""
    if lexicon and vectors:
        raise ValueError("give either lexicon= or vectors=, not both")
    if lexicon:
        return LexiconSubstitutes(lexicon)
    if vectors:
        return EmbeddingNeighbours(vectors)
    return WordNetSynonyms()


def deepwordbug(profile: str = "cpu", transform: str = "homoglyph", power: int = 5, unk: str = UNK):
    """DeepWordBug (Gao et al. 2018): one character edit in each of the ``power`` most important words.

    ``transform`` is homoglyph (default), swap, delete, insert or substitute. The
    homoglyph table is the project's own and covers upper case too (OpenAttack's maps
    only lower-case letters, digits, ``-`` and ``'``, so an edit on a capital is a
    no-op there). OpenAttack's ``swap`` calls a scoring function by mistake; here it swaps.
    """
    search = partial(char_edit_search, edit=character_edit(transform), power=power, unk=unk)
    return WordLevelAttacker("DeepWordBug", search, None, dict(transform=transform, power=power))


def pwws(profile: str = "cpu", unk: str = UNK, lexicon: str | None = None, vectors: str | None = None):
    """PWWS (Ren et al. 2019): WordNet synonyms ordered by probability-weighted word saliency."""
    search = partial(pwws_search, transformation=word_candidates(lexicon, vectors), stopwords=Stopwords(), unk=unk)
    return WordLevelAttacker("PWWS", search, PosTagger())


def textfooler(profile: str = "cpu", vectors: str | None = None, lexicon: str | None = None,
               similarity_threshold: float = 0.5, window: int = 15, importance_threshold: float = -1.0,
               unk: str = UNK, encoder_dir: str | None = None):
    """TextFooler (Jin et al. 2020) with OpenAttack's defaults: WordNet candidates, window 15, threshold 0.5.

    The Universal Sentence Encoder is replaced by the profile's sentence encoder
    (MiniLM, or any BERT-class folder given as ``encoder_dir``); counter-fitted vectors
    are used when ``vectors=`` points at them.
    """
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    if encoder_dir is None:
        settings = get_profile(profile)
        role = settings.models.get("sentence-encoder") or "minilm"
        encoder_dir = str(resolve(role, allow_hub=settings.allow_hub).path)
    encoder = SentenceEncoder(encoder_dir)
    tagger = PosTagger()
    search = partial(textfooler_search, transformation=word_candidates(lexicon, vectors), stopwords=Stopwords(),
                     similarity=SentenceSimilarity(encoder, similarity_threshold, window),
                     pos_agreement=PosAgreement(tagger), importance_threshold=importance_threshold, unk=unk)
    return WordLevelAttacker("TextFooler", search, tagger)


def genetic(profile: str = "cpu", population: int = 20, generations: int = 20,
            lexicon: str | None = None, vectors: str | None = None):
    """Genetic attack (Alzantot et al. 2018): population 20, 20 generations, WordNet candidates."""
    search = partial(genetic_search, transformation=word_candidates(lexicon, vectors), stopwords=Stopwords(),
                     population=population, generations=generations)
    return WordLevelAttacker("Genetic", search, PosTagger())


def pso(profile: str = "cpu", population: int = 20, iterations: int = 20,
        lexicon: str | None = None, vectors: str | None = None):
    """SememePSO (Zang et al. 2020) as OpenAttack runs it by default: WordNet candidates, 20 x 20.

    The paper's HowNet sememe candidates are used when the user supplies them as a
    lexicon file (``lexicon=``, one ``word<TAB>candidates`` line per word).
    """
    search = partial(pso_search, transformation=word_candidates(lexicon, vectors), stopwords=Stopwords(),
                     population=population, iterations=iterations)
    return WordLevelAttacker("PSO", search, PosTagger())


register_attacker("DeepWordBug", deepwordbug)
register_attacker("PWWS", pwws)
register_attacker("TextFooler", textfooler)
register_attacker("Genetic", genetic)
register_attacker("PSO", pso, aliases=("SememePSO",))
