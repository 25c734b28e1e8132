"""Rules a candidate must pass: not a stopword, few enough changes, same part of speech, similar meaning."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from bodega.attacks.pos import PosTagger
from bodega.text import default_stopwords


@dataclass(frozen=True)
class Stopwords:
    """Words an attack never replaces (compared case-insensitively)."""

    words: frozenset[str] = field(default_factory=default_stopwords)

    def allows(self, word: str) -> bool:
        """Whether ``word`` may be replaced."""
        return word.lower() not in self.words


@dataclass(frozen=True)
class MaxModificationRate:
    """At most ``rate`` of the words may change (at least one)."""

    rate: float

    def allows(self, changed: int, total: int) -> bool:
        """Whether ``changed`` of ``total`` words is within the rate."""
        return changed <= max(1, int(self.rate * total))


@dataclass
class PosAgreement:
    """A substitute must keep the word's coarse tag; nouns and verbs may swap (TextFooler's rule)."""

    tagger: PosTagger = field(default_factory=PosTagger)

    def warm_up(self) -> None:
        """Load spaCy's tagger now, so that the first example is not charged for it."""
        self.tagger.nlp

    def mask(self, original_pos: str, candidate_texts: Sequence[str], start: int) -> np.ndarray:
        """For each candidate text, whether the word starting at character ``start`` keeps the original's tag."""
        tags = self.tagger.tags_at(list(candidate_texts), start)
        interchangeable = {"noun", "verb"}
        return np.array([t == original_pos or {t, original_pos} <= interchangeable for t in tags], dtype=bool)


class SentenceEncoder:
    """Mean-pooled, normalised sentence embeddings from a BERT-class encoder (MiniLM by default)."""

    def __init__(self, model_dir: str | None = None, batch_size: int = 64):
        self.model_dir = model_dir
        self.batch_size = batch_size
        self._model = None

    def _load(self):
        import torch
        from transformers import AutoModel, AutoTokenizer

        from bodega.precision import cast_model
        from bodega.resources import resolve

        path = self.model_dir or str(resolve("minilm").path)
        tokenizer = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        # in the attack's precision (bodega.precision)
        model = cast_model(AutoModel.from_pretrained(path, trust_remote_code=False).eval())
        self._model = (torch, tokenizer, model)

    def warm_up(self) -> None:
        """Load the encoder now, so that the first example is not charged for it."""
        if self._model is None:
            self._load()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``, one row each (the encoder loads on first use)."""
        if self._model is None:
            self._load()
        torch, tokenizer, model = self._model
        chunks = []
        with torch.inference_mode():
            for i in range(0, len(texts), self.batch_size):
                batch = tokenizer(list(texts[i:i + self.batch_size]), padding=True, truncation=True,
                                  max_length=256, return_tensors="pt")
                hidden = model(**batch).last_hidden_state.float()  # pooled in fp32 at any precision
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
                chunks.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
        return np.concatenate(chunks) if chunks else np.zeros((0, 1))


@dataclass
class SentenceSimilarity:
    """Cosine similarity of a window around the changed word, as TextFooler scores with USE.

    ``window`` words around the change are compared (the whole text when it is
    shorter); ``short_text_threshold`` applies to texts shorter than the window, as in
    OpenAttack's TextFooler, but only to that text (OpenAttack keeps the lowered
    threshold for every later example: ``sticky=True`` does the same).
    """

    encoder: SentenceEncoder = field(default_factory=SentenceEncoder)
    threshold: float = 0.5
    window: int = 15
    short_text_threshold: float = 0.1
    sticky: bool = False

    def warm_up(self) -> None:
        """Load the sentence encoder now, so that the first example is not charged for it."""
        self.encoder.warm_up()

    def threshold_for(self, n_words: int) -> float:
        """The similarity a candidate must reach in a text of ``n_words`` words (lowered for short texts)."""
        if self.sticky and n_words < self.window:
            self.threshold = self.short_text_threshold
        return self.short_text_threshold if n_words < self.window else self.threshold

    def window_bounds(self, index: int, n_words: int) -> tuple[int, int]:
        """The ``[low, high)`` word span compared around word ``index``: the window, kept inside the text."""
        half = (self.window - 1) // 2
        if n_words <= self.window:
            return 0, n_words
        low = min(max(index - half, 0), n_words - self.window)
        return low, low + self.window

    def scores(self, reference: str, candidates: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each candidate to ``reference``."""
        vectors = self.encoder.encode([reference, *candidates])
        return vectors[1:] @ vectors[0]
