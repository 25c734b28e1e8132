"""BERT-ATTACK and BAE: masked-LM candidates per word, search rules, and runs on a tiny random BertForMaskedLM."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from attack_fakes import SENTENCES, KeywordVictim
from bodega.attacks import Goal, get_attacker, registered_attackers
from bodega.attacks.base import WordLevelAttacker
from bodega.attacks.constraints import ConstraintSet, MaxModificationRate, Stopwords
from bodega.attacks.mlm_search import bert_attack_search, word_substitutes
from bodega.mlm.model import Candidate, MaskedLM
from bodega.text import tokenize
from mlm_fakes import tiny_bert


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("tiny-mlm"))


class ListMLM:
    """A fake masked LM proposing fixed words at every single-piece position."""

    def __init__(self, words):
        self.words = words

    def word_predictions(self, text, k):
        return [[Candidate(w, 5.0 - j) for j, w in enumerate(self.words[:k])] for _ in text.words]

    def masked_predictions(self, text, positions, k):
        return {i: [Candidate(w, 5.0 - j) for j, w in enumerate(self.words[:k])] for i in positions}


def test_registered_with_aliases():
    assert {"BAE", "BERT-ATTACK"} <= set(registered_attackers())
    assert get_attacker("BERTattack", mlm_path="unused").name == "BERT-ATTACK"


def test_word_substitutes_filter_and_case():
    cands = [Candidate("##ing", 9), Candidate("the", 8), Candidate("evil", 7), Candidate("wicked", 6),
             Candidate("7", 5), Candidate("bad", 4), Candidate("Wicked", 3), Candidate("vile", 0.1)]
    assert word_substitutes(cands, "Evil", None) == ["The", "Wicked", "Bad", "Vile"]
    assert word_substitutes(cands, "evil", 0.3) == ["the", "wicked", "bad"]  # stops below the threshold


def test_word_predictions_skip_multi_piece_words(tiny_mlm):
    mlm = MaskedLM(tiny_mlm)
    text = tokenize("The  enemy's unbelievably shenanigans, attack!")
    predictions = mlm.word_predictions(text, 5)
    pieces = {w.text: len(mlm._load()[1].tokenize(w.text)) for w in text.words}
    for word, found in zip(text.words, predictions):
        assert (len(found) == 5) == (pieces[word.text] == 1), word.text
    masked = mlm.masked_predictions(text, [0, 4], 7)
    assert sorted(masked) == [0, 4] and all(len(v) == 7 for v in masked.values())


def test_bert_attack_takes_first_flip_in_mlm_order_and_keeps_text():
    victim = KeywordVictim()
    # two of the four words must change: above OpenAttack's cap of int(0.2 * 4) = 0 changes, so widen it
    search = partial(bert_attack_search, mlm=ListMLM(["kind", "calm", "evil", "fine"]), k=36)
    rules = ConstraintSet((MaxModificationRate(0.5, one_more=True), Stopwords(substitutes=True)))
    attacker = WordLevelAttacker("BERT-ATTACK", search, constraints=rules)
    text = "Corrupt  traitors lie,\nagain."
    result = attacker.attack(victim, text, Goal.towards(0), np.random.default_rng(0))
    assert result.success
    assert victim.predict([result.adversarial])[0] == 0
    original, adversarial = tokenize(text), tokenize(result.adversarial)
    changed = {i: b for i, (a, b) in enumerate(zip(original.tokens, adversarial.tokens)) if a != b}
    assert set(changed.values()) <= {"Kind", "kind", "Calm", "calm"}
    assert original.replace(changed) == result.adversarial  # spacing and line breaks untouched


def test_bert_attack_gives_up_beyond_the_change_rate():
    victim = KeywordVictim()
    capped = WordLevelAttacker("BERT-ATTACK", partial(bert_attack_search, mlm=ListMLM(["kind"])),
                               constraints=ConstraintSet((MaxModificationRate(0.1, one_more=True), Stopwords())))
    assert not capped.attack(victim, "Corrupt traitors lie to destroy us!", Goal.towards(0),
                             np.random.default_rng(0)).success


@pytest.mark.parametrize("name", ["BERT-ATTACK", "BAE"])
def test_attackers_run_on_tiny_random_mlm(name, tiny_mlm):
    options = dict(mlm_path=str(tiny_mlm))
    if name == "BAE":
        options.update(encoder_path=str(tiny_mlm), similarity_threshold=0.0)
    attacker = get_attacker(name, **options)
    victim = KeywordVictim()
    # BAE's POS and similarity checks are slower, and it changes at most 20% of the words: three texts it can flip
    texts = SENTENCES if name == "BERT-ATTACK" else [SENTENCES[2], SENTENCES[4], SENTENCES[5]]
    outs = []
    for i, text in enumerate(texts):
        decision = int(victim.predict([text])[0])
        result = attacker.attack(victim, text, Goal.untargeted(decision), np.random.default_rng(i))
        if result.success:
            assert int(victim.predict([result.adversarial])[0]) != decision
            assert len(tokenize(result.adversarial)) == len(tokenize(text))
        outs.append(result.adversarial)
    assert sum(o is not None for o in outs) >= 2, outs
    again = [attacker.attack(victim, t, Goal.untargeted(int(victim.predict([t])[0])), np.random.default_rng(i))
             .adversarial for i, t in enumerate(texts[:2])]
    assert again == outs[:2]


def test_bae_similarity_threshold_blocks_everything(tiny_mlm):
    attacker = get_attacker("BAE", mlm_path=str(tiny_mlm), encoder_path=str(tiny_mlm), similarity_threshold=1.01)
    victim = KeywordVictim()
    text = SENTENCES[0]
    assert not attacker.attack(victim, text, Goal.untargeted(1), np.random.default_rng(0)).success
