"""TextFooler: the most similar successful substitute of each important word (:mod:`bodega.attacks.word_recipes`)."""
from __future__ import annotations

from functools import partial

from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.constraints import ConstraintSet, PosAgreement, SentenceEncoder, SentenceSimilarity
from bodega.attacks.fidelity import flag
from bodega.attacks.filter_words import UNK_TEXT, filter_stopwords
from bodega.attacks.pos import PosTagger
from bodega.attacks.searches.textfooler import textfooler_search
from bodega.attacks.word_recipes import as_run_parts, word_candidates


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
    search = partial(textfooler_search, transformation=word_candidates(lexicon, vectors), similarity=similarity,
                     importance_threshold=importance_threshold, unk=unk)
    return WordLevelAttacker("TextFooler", search, tagger, dict(filter_words=filter_words, sticky=similarity.sticky),
                             **as_run_parts(profile, fidelity, respace, reask),
                             constraints=ConstraintSet((filter_stopwords(filter_words), similarity,
                                                        PosAgreement(tagger))))


register_attacker("TextFooler", textfooler)
