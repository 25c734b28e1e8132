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
``int(0.2 * words)`` changes. The search is the one it shares with BAE
(:mod:`bodega.attacks.mlm_as_run`); this module adds where its candidates come from.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from bodega.attacks.mlm_as_run import OpenAttackMaskedLM


@dataclass
class BertAttackAsRun(OpenAttackMaskedLM):
    """OpenAttack 2.1.1's BERT-ATTACK over any victim with ``predict_proba``."""

    k: int = 36
    threshold_pred_score: float = 0.3
    name: str = "BERT-ATTACK"

    def _word_candidates(self, words: list[str]) -> Callable[[int], list[str]]:
        """The top ``k`` tokens of the unmasked text at each one-piece word (one masked-LM call for all)."""
        torch, tokenizer, model = self._load()
        sub_words, keys = [], []
        for word in words:
            pieces = tokenizer.tokenize(word)
            keys.append((len(sub_words), len(sub_words) + len(pieces)))
            sub_words += pieces
        sub_words = ["[CLS]"] + sub_words[:self.max_length - 2] + ["[SEP]"]
        with torch.inference_mode():
            logits = model(torch.tensor([tokenizer.convert_tokens_to_ids(sub_words)]))[0].squeeze()
        scores, predictions = torch.topk(logits, self.k, -1)
        predictions, scores = predictions[1:len(sub_words) + 1], scores[1:len(sub_words) + 1]

        def candidates(index: int) -> list[str]:
            if keys[index][0] > self.max_length - 2:
                return []
            return self._substitutes(predictions, scores, keys[index], tokenizer)
        return candidates

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
