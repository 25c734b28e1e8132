"""The masked-LM attackers, BERT-ATTACK and BAE, and the paraphrase attacker SCPN.

Substitute words come from the profile's word-candidate source (``candidates=``):
``masked-lm`` is the profile's masked LM, ``bert-base-uncased`` on ``paper`` (as BODEGA)
and the project's MiniLM with a fitted masked-LM head on ``cpu`` (see ``bodega resources
build-mlm``; ``mlm_path=`` overrides it); ``causal-lm`` is the profile's causal LM read
from the left context (Gemma-3-270M on ``cpu``, :mod:`bodega.mlm.causal`;
``causal_path=`` overrides it). ``paper`` uses the masked LM; ``cpu`` uses the source
that recovered masked words best in the book's measurement (``CPU_CANDIDATES``). BAE's sentence
similarity uses the profile's sentence encoder (MiniLM) in place of the Universal Sentence Encoder. Searches and
their differences from OpenAttack are in :mod:`bodega.attacks.mlm_search`.
"""
from __future__ import annotations

from functools import partial

from bodega.errors import BodegaError
from bodega.attacks.base import WordLevelAttacker, register_attacker
from bodega.attacks.constraints import (ConstraintSet, MaxModificationRate, PosAgreement, SentenceEncoder,
                                        TextSimilarity)
from bodega.attacks.filter_words import filter_stopwords
from bodega.attacks.pos import PosTagger

PAPER_THRESHOLD = 0.3
"""OpenAttack's ``threshold_pred_score`` on the masked LM's logits, for bert-base-uncased."""


def _threshold(profile: str, threshold: float | str | None) -> float | None:
    """``"profile"`` means the reference's 0.3 for bert-base-uncased and none for other masked LMs.

    The fitted cpu head's logits are on another scale (its output bias is a log
    frequency), so a threshold set for BERT's logits would not mean the same there.
    """
    if threshold != "profile":
        return None if threshold is None else float(threshold)
    from bodega.profiles import get_profile

    return PAPER_THRESHOLD if get_profile(profile).models.get("masked-lm") == "bert-base-uncased" else None


CANDIDATE_SOURCES = ("masked-lm", "causal-lm")
CPU_CANDIDATES = "causal-lm"
"""The source the ``cpu`` and ``smoke`` profiles use (measured in ``book/data/mlm_recovery_routes.csv``)."""


def candidate_source(profile: str, candidates: str = "profile") -> str:
    """``"profile"``: the masked LM where it is bert-base-uncased (``paper``), else ``CPU_CANDIDATES``."""
    from bodega.profiles import get_profile

    if candidates == "profile":
        return "masked-lm" if get_profile(profile).models.get("masked-lm") == "bert-base-uncased" else CPU_CANDIDATES
    if candidates not in CANDIDATE_SOURCES:
        raise BodegaError(f"candidates={candidates!r}: choose 'profile' or one of {', '.join(CANDIDATE_SOURCES)}")
    return candidates


def _causal_path(profile: str, path: str | None) -> str:
    from bodega.mlm.model import profile_model

    return profile_model(profile, "causal-lm", path, "causal_path", "causal LM")


class _LazyMaskedLM:
    """Resolves the profile's word-candidate model only when the attack first needs it."""

    def __init__(self, profile: str, path: str | None, batch_size: int, source: str = "masked-lm",
                 causal_path: str | None = None):
        self.profile, self.path, self.batch_size = profile, path, batch_size
        self.source, self.causal_path = source, causal_path
        self._mlm = None

    def _get(self):
        if self._mlm is None:
            if self.source == "causal-lm":
                from bodega.mlm.causal import CausalLMCandidates

                self._mlm = CausalLMCandidates(_causal_path(self.profile, self.causal_path))
            else:
                from bodega.mlm.model import MaskedLM, resolve_masked_lm

                self._mlm = MaskedLM(resolve_masked_lm(self.profile, self.path), batch_size=self.batch_size)
        return self._mlm

    def warm_up(self) -> None:
        self._get().warm_up()

    def word_predictions(self, *args, **kwargs):
        return self._get().word_predictions(*args, **kwargs)

    def masked_predictions(self, *args, **kwargs):
        return self._get().masked_predictions(*args, **kwargs)


def _source(profile: str, candidates: str, mlm_path: str | None, causal_path: str | None) -> str:
    """An explicit model path picks its kind when ``candidates`` is left to the profile."""
    if candidates == "profile" and (mlm_path is None) != (causal_path is None):
        return "masked-lm" if mlm_path is not None else "causal-lm"
    return candidate_source(profile, candidates)


def bert_attack(profile: str = "cpu", k: int = 36, max_change_rate: float = 0.2,
                threshold_pred_score: float | str | None = "profile", mlm_path: str | None = None,
                batch_size: int = 32, candidates: str = "profile", causal_path: str | None = None,
                filter_words: str = "openattack", fidelity: str = "profile", openattack_search: bool | None = None):
    """BERT-ATTACK (Li et al. 2020) as BODEGA ran it: k=36, no sub-word combinations (``use_bpe=False``),
    importance by masking, at most ``int(0.2 * words)`` changes (OpenAttack 2.1.1's cap; the
    original BERT-Attack repository's 0.4 is not what ran), BODEGA's filter words.

    ``openattack_search`` (as-run) is OpenAttack's own search, quirks included
    (:mod:`bodega.attacks.bert_attack_as_run`), on the masked LM (``mlm_path`` or the profile's).
    """
    from bodega.attacks.fidelity import flag
    from bodega.attacks.mlm_search import bert_attack_search

    if flag(openattack_search, profile, fidelity):
        from bodega.attacks.bert_attack_as_run import BertAttackAsRun
        from bodega.attacks.filter_words import bodega_filter_words
        from bodega.mlm.model import resolve_masked_lm

        threshold = 0.3 if threshold_pred_score == "profile" else (threshold_pred_score or 0)
        return BertAttackAsRun(resolve_masked_lm(profile, mlm_path), frozenset(bodega_filter_words(filter_words)),
                               k=k, threshold_pred_score=float(threshold), max_change_rate=max_change_rate)

    source = _source(profile, candidates, mlm_path, causal_path)
    threshold = _threshold(profile, threshold_pred_score) if source == "masked-lm" else None
    search = partial(bert_attack_search, mlm=_LazyMaskedLM(profile, mlm_path, batch_size, source, causal_path), k=k,
                     threshold=threshold)
    rules = (MaxModificationRate(max_change_rate, one_more=True), filter_stopwords(filter_words, substitutes=True))
    return WordLevelAttacker("BERT-ATTACK", search, None, dict(k=k, max_change_rate=max_change_rate,
                                                               candidates=source, filter_words=filter_words),
                             constraints=ConstraintSet(rules))


def bae(profile: str = "cpu", k: int = 50, max_change_rate: float = 0.2, similarity_threshold: float = 0.936,
        threshold_pred_score: float | str | None = "profile", mlm_path: str | None = None,
        encoder_path: str | None = None, batch_size: int = 32, candidates: str = "profile",
        causal_path: str | None = None, filter_words: str = "openattack", fidelity: str = "profile",
        openattack_search: bool | None = None):
    """BAE-R (Garg and Ramakrishnan 2020), OpenAttack's default: replace only, k=50, similarity >= 0.936.

    ``openattack_search`` (as-run) is OpenAttack's own search, quirks included
    (:mod:`bodega.attacks.bae_as_run`: its part-of-speech rule, whole-text similarity
    threshold, ranking and one-at-a-time queries), on the masked LM (``mlm_path`` or the
    profile's) and the profile's sentence encoder.
    """
    from bodega.attacks.fidelity import flag
    from bodega.attacks.mlm_search import bae_search
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    if encoder_path is None:
        chosen = get_profile(profile)
        encoder_path = str(resolve(chosen.models.get("sentence-encoder") or "minilm", allow_hub=chosen.allow_hub).path)
    if flag(openattack_search, profile, fidelity):
        from bodega.attacks.bae_as_run import BaeAsRun, encoder_similarity
        from bodega.attacks.filter_words import bodega_filter_words
        from bodega.mlm.model import resolve_masked_lm

        return BaeAsRun(resolve_masked_lm(profile, mlm_path), frozenset(bodega_filter_words(filter_words)),
                        encoder_similarity(SentenceEncoder(encoder_path)), k=k,
                        similarity_threshold=similarity_threshold, max_change_rate=max_change_rate)
    source = _source(profile, candidates, mlm_path, causal_path)
    threshold = _threshold(profile, threshold_pred_score) if source == "masked-lm" else None
    tagger = PosTagger()
    similarity = TextSimilarity(SentenceEncoder(encoder_path), similarity_threshold)
    search = partial(bae_search, mlm=_LazyMaskedLM(profile, mlm_path, batch_size, source, causal_path),
                     similarity=similarity, k=k, threshold=threshold)
    rules = (MaxModificationRate(max_change_rate, one_more=True), filter_stopwords(filter_words, substitutes=True),
             PosAgreement(tagger), similarity)
    return WordLevelAttacker("BAE", search, tagger, dict(k=k, similarity_threshold=similarity_threshold,
                                                         candidates=source, filter_words=filter_words),
                             constraints=ConstraintSet(rules))


register_attacker("BERT-ATTACK", bert_attack, aliases=("BERTattack",))
register_attacker("BAE", bae)
