"""The query accountant's prefetch: texts computed ahead, in batches, never counted as asked; only where the
victim's predictions do not depend on the batch."""
from __future__ import annotations

import numpy as np
import pytest

from bodega.victims.accounting import InvalidPredictions, QueryAccountant, QueryBudgetExceeded
from bodega.victims.cache import ProbabilityCache
from victims_fixtures import one_thread, tiny_bert_dir  # noqa: F401


class LengthScored:
    """P(label 1) from the text's length alone; 'bad' gets a NaN row; records every batch. Says nothing of batches."""

    name, task, weights_hash = "alone", "PR2", "alone-v1"

    def __init__(self):
        self.batches: list[list[str]] = []

    def predict_proba(self, texts):
        self.batches.append(list(texts))
        p = np.array([np.nan if t == "bad" else min(len(t) / 20, 1.0) for t in texts])
        return np.stack([1 - p, p], axis=1)


class ScoredAlone(LengthScored):
    batch_invariant = True  # what it is, and says


def test_prefetched_texts_are_computed_in_batches_and_not_counted_as_queries():
    victim = ScoredAlone()
    accountant = QueryAccountant(victim, batch_size=2)
    texts = ["a", "bb", "ccc", "dddd", "a"]
    assert accountant.prefetch(texts) == 4
    assert victim.batches == [["a", "bb"], ["ccc", "dddd"]]
    assert (accountant.queries, accountant.unique_queries, accountant.forwards, accountant.prefetched) == (0, 0, 4, 4)
    answers = [accountant.predict_proba([t])[0, 1] for t in texts]
    assert answers == [0.05, 0.1, 0.15, 0.2, 0.05] and len(victim.batches) == 2  # every ask answered from memory
    assert (accountant.queries, accountant.unique_queries, accountant.forwards) == (5, 4, 4)
    assert accountant.prefetch(texts) == 0 and len(victim.batches) == 2  # known texts are not computed again


def test_prefetch_looks_no_further_than_the_budget_and_never_spends_it():
    victim = ScoredAlone()
    accountant = QueryAccountant(victim, budget=3)
    accountant.predict_proba(["x"])
    assert accountant.prefetch(["a", "bb", "ccc", "dddd"]) == 2  # two asks are left: the loop cannot ask more
    assert victim.batches[-1] == ["a", "bb"] and accountant.queries == 1
    accountant.predict_proba(["a", "bb"])
    assert accountant.prefetch(["ccc"]) == 0
    with pytest.raises(QueryBudgetExceeded):
        accountant.predict_proba(["ccc"])


def test_a_failing_prefetch_is_left_to_the_ask_of_the_bad_text():
    victim = ScoredAlone()
    accountant = QueryAccountant(victim, batch_size=2)
    assert accountant.prefetch(["ok", "no", "bad", "good"]) == 2  # the batch before the bad one stays
    assert accountant.queries == 0 and victim.batches == [["ok", "no"], ["bad", "good"]]
    assert accountant.predict_proba(["ok", "no"])[:, 1].tolist() == [0.1, 0.1]
    assert accountant.predict_proba(["good"])[0, 1] == 0.2 and victim.batches[-1] == ["good"]
    with pytest.raises(InvalidPredictions, match="'bad'"):
        accountant.predict_proba(["bad"])


def test_prefetched_predictions_are_cached_and_read_from_the_cache(tmp_path):
    victim = ScoredAlone()
    with ProbabilityCache(tmp_path / "cache.sqlite") as cache:
        QueryAccountant(victim, cache=cache).prefetch(["a", "bb"])
        again = QueryAccountant(ScoredAlone(), cache=cache)
        assert again.prefetch(["ccc", "a", "bb"]) == 3
        assert (again.cache_hits, again.forwards, again.queries) == (2, 1, 0)
        third = QueryAccountant(ScoredAlone(), cache=cache)
        assert third.prefetch(["a", "dddd"]) == 1  # the next ask is the cache's: no forward just for the others
        assert (third.cache_hits, third.forwards) == (1, 0)


def test_nothing_is_computed_ahead_when_the_next_ask_would_not_reach_the_model():
    victim = ScoredAlone()
    accountant = QueryAccountant(victim)
    accountant.predict_proba(["a"])
    assert accountant.prefetch(["a", "bb", "ccc"]) == 0 and victim.batches == [["a"]]
    assert accountant.prefetch(["bb", "a", "ccc"]) == 2 and victim.batches[-1] == ["bb", "ccc"]


def test_only_a_victim_that_says_so_is_prefetched():
    class Says(ScoredAlone):
        batch_invariant = False

    for cls in (Says, LengthScored):
        victim = cls()
        accountant = QueryAccountant(victim)
        assert not accountant.prefetches and accountant.prefetch(["a", "bb"]) == 0 and victim.batches == []
    victim = ScoredAlone()
    assert QueryAccountant(victim, prefetch=False).prefetch(["a"]) == 0 and victim.batches == []


def test_batch_dependent_torch_victims_are_not_prefetched(tmp_path):
    """fp32 BERT and the packed BiLSTM are batch-invariant; bf16 weights and BODEGA's right padding are not."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from bodega.precision import Precision
    from bodega.victims.bert import BertVictim
    from bodega.victims.bilstm import BiLSTMClassifier, BiLSTMVictim

    base = tiny_bert_dir(tmp_path / "tiny-bert")
    tokenizer = AutoTokenizer.from_pretrained(base)
    bert = BertVictim(AutoModelForSequenceClassification.from_pretrained(base, num_labels=2), tokenizer, "PR2", "bert")
    assert bert.batch_invariant and QueryAccountant(bert).prefetches
    bert.set_precision(Precision("bf16", "amx-bf16"))
    assert not bert.batch_invariant and not QueryAccountant(bert).prefetches
    for packed in (True, False):
        bilstm = BiLSTMVictim(BiLSTMClassifier(len(tokenizer), pad_id=tokenizer.pad_token_id, packed=packed),
                              tokenizer, "PR2", "bilstm")
        assert bilstm.batch_invariant is packed and QueryAccountant(bilstm).prefetches is packed
