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
victim is still asked one text at a time in OpenAttack's order. The search is the one it
shares with BERT-ATTACK (:mod:`bodega.attacks.mlm_as_run`); this module adds the fillers
and the part-of-speech and similarity rules.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from bodega.attacks.mlm_as_run import OpenAttackMaskedLM

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
class BaeAsRun(OpenAttackMaskedLM):
    """OpenAttack 2.1.1's BAE-R over any victim with ``predict_proba``."""

    similarity: Similarity
    nlp: Any = None
    k: int = 50
    similarity_threshold: float = 0.936
    name: str = "BAE"
    unknown_after = True

    def _load(self):
        model = super()._load()
        if self.nlp is None:
            from bodega.attacks.pos import _pipeline

            self.nlp = _pipeline()
        return model

    def _word_candidates(self, words: list[str]) -> Callable[[int], list[str]]:
        """OpenAttack's ``get_substitues(..., 'r')``: top ``k`` tokens at ``[MASK]`` in sub-word position
        ``index + 1`` of the original text, no threshold."""
        torch, tokenizer, model = self._load()
        sub_words = [piece for word in words for piece in tokenizer.tokenize(word)]
        sub_words = ["[CLS]"] + sub_words[:self.max_length - 2] + ["[SEP]"]

        def candidates(index: int) -> list[str]:
            masked = list(sub_words)
            masked[index + 1] = "[MASK]"
            ids = torch.tensor([tokenizer.convert_tokens_to_ids(masked)])
            with torch.inference_mode():
                logits = model(ids, token_type_ids=torch.zeros_like(ids))[0]
            return tokenizer.convert_ids_to_tokens(torch.topk(logits[0, index + 1], self.k)[1])
        return candidates

    def _screen(self, final: list[str], index: int, fillers: list[str], texts: list[str],
                original: str) -> tuple[list[str], list[str], np.ndarray]:
        """Fillers that keep the Penn tags of the current words; of those, the ones similar enough are asked."""
        if not fillers:
            return [], [], np.zeros(0, dtype=bool)
        tags = penn_tags(self.nlp, [final] + [final[:index] + [s] + final[index + 1:] for s in fillers])
        kept = [j for j, after in enumerate(tags[1:]) if after == tags[0]]
        fillers, texts = [fillers[j] for j in kept], [texts[j] for j in kept]
        scores = self.similarity(texts, original) if texts else np.zeros(0)
        return fillers, texts, ~(np.asarray(scores) < self.similarity_threshold)
