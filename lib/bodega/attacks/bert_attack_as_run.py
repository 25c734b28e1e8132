"""BERT-ATTACK exactly as OpenAttack 2.1.1's ``BERTAttacker(filter_words, use_bpe=False)`` ran in BODEGA.

The ``fidelity="as-run"`` form of the BERT-ATTACK recipe. OpenAttack's algorithm is kept
with its quirks, each of which the fixed search (:mod:`bodega.attacks.mlm_search`) changes:
the text is lower-cased and split on single spaces, with newlines deleted (a word with
punctuation attached, or any word the masked LM splits into several pieces, gets no
substitutes, since ``use_bpe=False``); the last word is never ranked; substitutes are the
top-``k`` tokens of the unmasked text until one scores below ``threshold_pred_score``, any
token but sub-words and filter words (digits and punctuation included); probabilities are
soft-maxed again; candidates are asked one at a time and the first success ends the attack;
a word whose candidates all fail keeps the last one tried (the trial list aliases the
current words: "candidate aliasing"); the attack gives up after more than
``int(0.2 * words)`` changes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bodega.attacks.goal import Goal
from bodega.attacks.result import AttackResult


@dataclass
class BertAttackAsRun:
    """OpenAttack 2.1.1's BERT-ATTACK over any victim with ``predict_proba``."""

    mlm_path: str
    filter_words: frozenset[str]
    k: int = 36
    threshold_pred_score: float = 0.3
    max_length: int = 512
    max_change_rate: float = 0.2
    name: str = "BERT-ATTACK"
    _model: Any = field(default=None, repr=False)

    def warm_up(self) -> None:
        self._load()

    def _load(self):
        if self._model is None:
            import torch
            from transformers import BertForMaskedLM, BertTokenizer

            tokenizer = BertTokenizer.from_pretrained(self.mlm_path, do_lower_case=True)
            self._model = (torch, tokenizer, BertForMaskedLM.from_pretrained(self.mlm_path).eval())
        return self._model

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        torch, tokenizer, model = self._load()

        def probs(texts: list[str]):
            return torch.softmax(torch.Tensor(np.asarray(victim.predict_proba(texts))), -1)

        seq = text.lower()
        words = seq.replace("\n", "").lower().split(" ")
        sub_words, keys = [], []
        for word in words:
            pieces = tokenizer.tokenize(word)
            keys.append((len(sub_words), len(sub_words) + len(pieces)))
            sub_words += pieces
        orig_probs = probs([seq])[0]
        current_prob = orig_probs.max()
        sub_words = ["[CLS]"] + sub_words[:self.max_length - 2] + ["[SEP]"]
        with torch.inference_mode():
            logits = model(torch.tensor([tokenizer.convert_tokens_to_ids(sub_words)]))[0].squeeze()
        scores_all, predictions = torch.topk(logits, self.k, -1)
        predictions, scores_all = predictions[1:len(sub_words) + 1], scores_all[1:len(sub_words) + 1]

        masked = [" ".join(words[:i] + ["[UNK]"] + words[i + 1:]) for i in range(len(words) - 1)]
        leave = probs(masked) if masked else torch.zeros((0, 2))
        moved = torch.argmax(leave, dim=-1)
        importance = (current_prob - leave[:, goal.target] + (moved != goal.target).float()
                      * (leave.max(dim=-1)[0] - torch.index_select(orig_probs, 0, moved))).numpy()
        final = list(words)
        changes = 0
        for index, _ in sorted(enumerate(importance), key=lambda item: item[1], reverse=True):
            if changes > int(self.max_change_rate * len(words)):
                return AttackResult(None, False)
            target_word = words[index]
            if target_word in self.filter_words or keys[index][0] > self.max_length - 2:
                continue
            most_gap, candidate = 0.0, None
            for substitute in self._substitutes(predictions, scores_all, keys[index], tokenizer):
                if substitute == target_word or "##" in substitute or substitute in self.filter_words:
                    continue
                final[index] = substitute  # OpenAttack writes each trial into the current words
                trial = tokenizer.convert_tokens_to_string(final)
                trial_probs = probs([trial])[0]
                label = int(torch.argmax(trial_probs))
                if (label == goal.target) == goal.targeted:
                    return AttackResult(trial, True)
                gap = current_prob - trial_probs[goal.target]
                if gap > most_gap:
                    most_gap, candidate = gap, substitute
            if most_gap > 0:
                changes += 1
                current_prob = current_prob - most_gap
                final[index] = candidate
        return AttackResult(None, False)

    def _substitutes(self, predictions, scores, key: tuple[int, int], tokenizer) -> list[str]:
        """OpenAttack's ``get_substitues`` without BPE: a one-piece word's tokens above the threshold."""
        if key[1] - key[0] != 1:
            return []
        out = []
        for token_id, score in zip(predictions[key[0]], scores[key[0]]):
            if self.threshold_pred_score != 0 and score < self.threshold_pred_score:
                break
            out.append(tokenizer._convert_id_to_token(int(token_id)))
        return out
