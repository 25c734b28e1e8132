"""BAE exactly as OpenAttack 2.1.1's ``BAEAttacker(filter_words=...)`` ran in BODEGA (BAE-R, its default).

The ``fidelity="as-run"`` form of the BAE recipe. OpenAttack's search is kept with its
quirks, each of which the fixed search (:mod:`bodega.attacks.mlm_search`) changes:

* the text is lower-cased and split on single spaces, newlines deleted; the original is
  asked lower-cased, newlines kept;
* importance inserts ``[UNK]`` *after* each word (it does not replace the word), for all
  but the last word, which is never ranked; probabilities are soft-maxed again;
* a word's fillers are the masked LM's top ``k`` tokens with ``[MASK]`` at sub-word
  position ``word index + 1`` of the *original* text (the word's own position only while
  no earlier word splits into several pieces); ``threshold_pred_score`` is not used;
  any token but the word, sub-words and filter words is tried (digits, punctuation,
  ``[UNK]`` included);
* part of speech: a filler is kept when the Penn tags of the whole word list are
  unchanged (NLTK's perceptron tagger there; spaCy's tagger on the same word list here,
  an empty word tagged as a space: OpenAttack's NLTK tagger file cannot be loaded);
* similarity: the whole text against the lower-cased original, no window, at least
  0.936, a fixed threshold (the sentence encoder is the caller's: MiniLM in place of the
  Universal Sentence Encoder);
* fillers are asked one at a time and the first success ends the attack; a word whose
  fillers all fail keeps the best-moving one, or else the last filler that passed the
  part-of-speech rule, even one that failed the similarity threshold (the trial list
  aliases the current words: "candidate aliasing"); the attack gives up after more than
  ``int(0.2 * words)`` changes.

The tags of the current words never change (a filler is kept only with equal tags), so
all fillers of one word are tagged, and their texts encoded, in one batch each; the
victim is still asked one text at a time in OpenAttack's order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from bodega.attacks.goal import Goal
from bodega.attacks.result import AttackResult

Similarity = Callable[[Sequence[str], str], np.ndarray]
"""Scores of texts against one reference text: OpenAttack's ``encoder.calc_score(text, reference)``."""


def penn_tags(nlp, word_lists: Sequence[Sequence[str]]) -> list[list[str]]:
    """spaCy's Penn tags of pre-split word lists (OpenAttack tags the list as given, no re-tokenising)."""
    from spacy.tokens import Doc

    docs = [Doc(nlp.vocab, words=[w if w else " " for w in words]) for words in word_lists]
    return [[token.tag_ for token in doc] for doc in nlp.pipe(docs)]


def encoder_similarity(encoder) -> Similarity:
    """Cosine of a :class:`~bodega.attacks.constraints.SentenceEncoder`'s normalised embeddings."""
    def similarity(texts: Sequence[str], reference: str) -> np.ndarray:
        return encoder.encode(list(texts)) @ encoder.encode([reference])[0]
    return similarity


@dataclass
class BaeAsRun:
    """OpenAttack 2.1.1's BAE-R over any victim with ``predict_proba``."""

    mlm_path: str
    filter_words: frozenset[str]
    similarity: Similarity
    nlp: Any = None
    k: int = 50
    similarity_threshold: float = 0.936
    max_length: int = 512
    max_change_rate: float = 0.2
    name: str = "BAE"
    _model: Any = field(default=None, repr=False)

    def warm_up(self) -> None:
        self._load()

    def _load(self):
        if self._model is None:
            import torch
            from transformers import BertForMaskedLM, BertTokenizer

            tokenizer = BertTokenizer.from_pretrained(self.mlm_path, do_lower_case=True)
            self._model = (torch, tokenizer, BertForMaskedLM.from_pretrained(self.mlm_path).eval())
        if self.nlp is None:
            from bodega.attacks.pos import _pipeline

            self.nlp = _pipeline()
        return self._model

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        torch, tokenizer, model = self._load()

        def probs(texts: list[str]):
            return torch.softmax(torch.Tensor(np.asarray(victim.predict_proba(texts))), -1)

        seq = text.lower()
        words = seq.replace("\n", "").split(" ")
        sub_words = [piece for word in words for piece in tokenizer.tokenize(word)]
        orig_probs = probs([seq])[0]
        current_prob = orig_probs.max()
        sub_words = ["[CLS]"] + sub_words[:self.max_length - 2] + ["[SEP]"]

        inserted = [" ".join(words[:i + 1] + ["[UNK]"] + words[i + 1:]) for i in range(len(words) - 1)]
        leave = probs(inserted) if inserted else torch.zeros((0, orig_probs.shape[0]))
        moved = torch.argmax(leave, dim=-1)
        importance = (current_prob - leave[:, goal.target] + (moved != goal.target).float()
                      * (leave.max(dim=-1)[0] - torch.index_select(orig_probs, 0, moved))).numpy()
        final = list(words)
        changes = 0
        for index, _ in sorted(enumerate(importance), key=lambda item: item[1], reverse=True):
            if changes > int(self.max_change_rate * len(words)):
                return AttackResult(None, False)
            target_word = words[index]
            if target_word in self.filter_words:
                continue
            fillers = [s for s in self._fillers(index + 1, sub_words, tokenizer, model, torch)
                       if s != target_word and "##" not in s and s not in self.filter_words]
            fillers = self._same_tags(final, index, fillers)
            texts = [tokenizer.convert_tokens_to_string(final[:index] + [s] + final[index + 1:]) for s in fillers]
            scores = self.similarity(texts, seq) if texts else np.zeros(0)
            most_gap, candidate = 0.0, None
            for substitute, trial, score in zip(fillers, texts, scores):
                final[index] = substitute  # OpenAttack writes each tagged trial into the current words
                if score < self.similarity_threshold:
                    continue
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

    def _fillers(self, masked_index: int, sub_words: list[str], tokenizer, model, torch) -> list[str]:
        """OpenAttack's ``get_substitues(..., 'r')``: top ``k`` tokens at ``[MASK]``, no threshold."""
        masked = list(sub_words)
        masked[masked_index] = "[MASK]"
        ids = torch.tensor([tokenizer.convert_tokens_to_ids(masked)])
        with torch.inference_mode():
            logits = model(ids, token_type_ids=torch.zeros_like(ids))[0]
        return tokenizer.convert_ids_to_tokens(torch.topk(logits[0, masked_index], self.k)[1])

    def _same_tags(self, words: list[str], index: int, fillers: list[str]) -> list[str]:
        """Fillers whose word list keeps the Penn tags of ``words`` (OpenAttack's part-of-speech rule)."""
        if not fillers:
            return []
        tags = penn_tags(self.nlp, [words] + [words[:index] + [s] + words[index + 1:] for s in fillers])
        return [s for s, after in zip(fillers, tags[1:]) if after == tags[0]]
