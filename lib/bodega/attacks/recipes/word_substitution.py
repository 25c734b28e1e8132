"""The five attackers built from WordNet or character edits: DeepWordBug, PWWS, TextFooler, Genetic, PSO.

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

from functools import partial

from bodega.errors import BodegaError
from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.constraints import PosAgreement, SentenceEncoder, SentenceSimilarity
from bodega.attacks.fidelity import flag
from bodega.attacks.filter_words import UNK_TEXT, filter_stopwords
from bodega.attacks.pos import PosTagger
from bodega.attacks.search import char_edit_search, genetic_search, pso_search, pwws_search, textfooler_search
from bodega.attacks.transformations import (EmbeddingNeighbours, LexiconSubstitutes, WordNetSynonyms,
                                            character_edit, openattack_homoglyph)


def word_candidates(lexicon: str | None = None, vectors: str | None = None, openattack_lists: bool = False):
    """WordNet by default (``openattack_lists``: OpenAttack's lists); a user lexicon or word-vector file when given."""
    if lexicon and vectors:
        raise BodegaError("give either lexicon= or vectors=, not both")
    if lexicon:
        return LexiconSubstitutes(lexicon)
    if vectors:
        return EmbeddingNeighbours(vectors)
    return WordNetSynonyms(openattack_lists=openattack_lists)


def deepwordbug(profile: str = "cpu", transform: str = "homoglyph", power: int = 5, unk: str = UNK_TEXT,
                fidelity: str = "profile", respace: bool | None = None, reask: bool | None = None,
                openattack_order: bool | None = None, homoglyphs: str | None = None):
    """DeepWordBug (Gao et al. 2018): one character edit in each of the ``power`` most important words.

    ``transform`` is homoglyph (default), swap, delete, insert or substitute.
    ``homoglyphs="bodega"`` is the project's table, which covers capitals too;
    ``"openattack"`` is OpenAttack's (lower case, digits, ``-`` and ``'`` only: an edit of a
    capital is a no-op there). OpenAttack's ``swap`` calls a scoring function by mistake;
    here it swaps. OpenAttack does not lower-case DeepWordBug's input, only re-spaces it.
    """
    as_run = flag(None, profile, fidelity)
    homoglyphs = homoglyphs or ("openattack" if as_run else "bodega")
    if homoglyphs not in ("openattack", "bodega"):
        raise BodegaError(f"homoglyphs={homoglyphs!r}: choose 'openattack' or 'bodega'")
    edit = (openattack_homoglyph if transform == "homoglyph" and homoglyphs == "openattack"
            else character_edit(transform))
    ordered = flag(openattack_order, profile, fidelity)
    search = partial(char_edit_search, edit=edit, power=power, unk=unk, openattack_order=ordered)
    return WordLevelAttacker("DeepWordBug", search, None,
                             dict(transform=transform, power=power, homoglyphs=homoglyphs, openattack_order=ordered),
                             respace=flag(respace, profile, fidelity), lower=False,
                             reask=flag(reask, profile, fidelity))


def _as_run_parts(profile: str, fidelity: str, respace: bool | None, reask: bool | None) -> dict:
    """The WordNet attackers' shared as-run options: OpenAttack lower-cases and re-spaces their input."""
    chosen = flag(respace, profile, fidelity)
    return dict(respace=chosen, lower=chosen, reask=flag(reask, profile, fidelity))


def pwws(profile: str = "cpu", unk: str = UNK_TEXT, lexicon: str | None = None, vectors: str | None = None,
         filter_words: str = "openattack", fidelity: str = "profile", respace: bool | None = None,
         reask: bool | None = None, openattack_order: bool | None = None):
    """PWWS (Ren et al. 2019): WordNet synonyms ordered by probability-weighted word saliency."""
    ordered = flag(openattack_order, profile, fidelity)
    search = partial(pwws_search, transformation=word_candidates(lexicon, vectors, ordered),
                     stopwords=filter_stopwords(filter_words), unk=unk, openattack_order=ordered)
    return WordLevelAttacker("PWWS", search, PosTagger(), dict(filter_words=filter_words, openattack_order=ordered),
                             **_as_run_parts(profile, fidelity, respace, reask))


def textfooler(profile: str = "cpu", vectors: str | None = None, lexicon: str | None = None,
               similarity_threshold: float = 0.5, window: int = 15, importance_threshold: float = -1.0,
               unk: str = UNK_TEXT, encoder_dir: str | None = None, filter_words: str = "openattack",
               fidelity: str = "profile", respace: bool | None = None, reask: bool | None = None,
               sticky_threshold: bool | None = None):
    """TextFooler (Jin et al. 2020) with OpenAttack's defaults: WordNet candidates, window 15, threshold 0.5.

    The Universal Sentence Encoder is replaced by the profile's sentence encoder
    (MiniLM, or any BERT-class folder given as ``encoder_dir``); counter-fitted vectors
    are used when ``vectors=`` points at them. ``sticky_threshold`` (as-run) keeps
    OpenAttack's bug: after one text shorter than the window, the threshold stays 0.1 for
    every later text of the run.
    """
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    if encoder_dir is None:
        settings = get_profile(profile)
        role = settings.models.get("sentence-encoder") or "minilm"
        encoder_dir = str(resolve(role, allow_hub=settings.allow_hub).path)
    encoder = SentenceEncoder(encoder_dir)
    tagger = PosTagger()
    similarity = SentenceSimilarity(encoder, similarity_threshold, window,
                                    sticky=flag(sticky_threshold, profile, fidelity))
    search = partial(textfooler_search, transformation=word_candidates(lexicon, vectors),
                     stopwords=filter_stopwords(filter_words), similarity=similarity,
                     pos_agreement=PosAgreement(tagger), importance_threshold=importance_threshold, unk=unk)
    return WordLevelAttacker("TextFooler", search, tagger, dict(filter_words=filter_words, sticky=similarity.sticky),
                             **_as_run_parts(profile, fidelity, respace, reask))


def genetic(profile: str = "cpu", population: int = 20, generations: int = 20,
            lexicon: str | None = None, vectors: str | None = None, filter_words: str = "openattack",
            fidelity: str = "profile", respace: bool | None = None, reask: bool | None = None,
            openattack_order: bool | None = None):
    """Genetic attack (Alzantot et al. 2018): population 20, 20 generations, WordNet candidates."""
    ordered = flag(openattack_order, profile, fidelity)
    search = partial(genetic_search, transformation=word_candidates(lexicon, vectors, ordered),
                     stopwords=filter_stopwords(filter_words), population=population, generations=generations,
                     openattack_order=ordered)
    return WordLevelAttacker("Genetic", search, PosTagger(), dict(filter_words=filter_words, openattack_order=ordered),
                             **_as_run_parts(profile, fidelity, respace, reask))


def pso(profile: str = "cpu", population: int = 20, iterations: int = 20,
        lexicon: str | None = None, vectors: str | None = None, filter_words: str = "openattack",
        fidelity: str = "profile", respace: bool | None = None, openattack_bests: bool | None = None):
    """SememePSO (Zang et al. 2020) as OpenAttack runs it by default: WordNet candidates, 20 x 20.

    The paper's HowNet sememe candidates are used when the user supplies them as a
    lexicon file (``lexicon=``, one ``word<TAB>candidates`` line per word). OpenAttack's PSO
    remembers the texts it asked, so it has no ``reask`` option; ``openattack_bests`` (as-run)
    keeps its never-updated bests and its random draws (:func:`~bodega.attacks.search.pso_search`).
    """
    bests = flag(openattack_bests, profile, fidelity)
    search = partial(pso_search, transformation=word_candidates(lexicon, vectors, bests),
                     stopwords=filter_stopwords(filter_words), population=population, iterations=iterations,
                     openattack_bests=bests)
    return WordLevelAttacker("PSO", search, PosTagger(), dict(filter_words=filter_words, openattack_bests=bests),
                             **_as_run_parts(profile, fidelity, respace, False))


register_attacker("DeepWordBug", deepwordbug)
register_attacker("PWWS", pwws)
register_attacker("TextFooler", textfooler)
register_attacker("Genetic", genetic)
register_attacker("PSO", pso, aliases=("SememePSO",))
