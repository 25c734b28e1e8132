"""Rules a candidate must pass: not a stopword, few enough changes, same part of speech, similar meaning.

Every rule is a :class:`Constraint`, and an attacker holds its rules as one :class:`ConstraintSet` (as TextAttack
composes an attack from a goal, constraints, a transformation and a search). The framework prepares the set for
each text and hands it to the search in its state; the set is the one step through which every search asks which
words it may change and which candidates pass, so a new rule (a recipe's, or a user's through
``bodega.attack(..., constraints=...)``) needs no search edit and no search can leave one out.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

import numpy as np

from bodega.attacks.pos import PosTagger
from bodega.errors import BodegaError
from bodega.text import default_stopwords

if TYPE_CHECKING:
    from bodega.attacks.searches.common import SearchState

Changes = dict[int, str]
"""A candidate text as the words it replaces: word index -> substitute."""


class Constraint:
    """A rule on what an attack may change. Override either check; the defaults allow everything.

    ``modifiable`` is asked before candidates are made (may the word at ``index`` change at all?);
    ``admits`` after (which of ``trials``, change-sets that replace the word at ``index`` on top of the
    current ``changes``, pass?). ``prepare`` is called once per attacked text, before the first ``admits``.
    """

    def prepare(self, state: SearchState) -> None:
        """Get ready for a new text (nothing by default)."""

    def modifiable(self, state: SearchState, index: int) -> bool:
        """Whether the word at ``index`` may be replaced."""
        return True

    def admits(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """One bool per trial change-set: whether it passes."""
        return np.ones(len(trials), dtype=bool)

    def warm_up(self) -> None:
        """Load what the rule needs now, so that the first example is not charged for it (nothing by default)."""

    def __repr__(self) -> str:
        """The rule's class and attributes: how a run's settings record it, the same in every process (object's
        default holds an address)."""
        attributes = ", ".join(f"{k}={v!r}" for k, v in sorted(getattr(self, "__dict__", {}).items()))
        return f"{type(self).__qualname__}({attributes})"


@dataclass(frozen=True)
class ConstraintSet:
    """An attacker's rules and the one step every search takes through them.

    :meth:`prepare` is called by the framework once per text before the search starts; the search then asks
    :meth:`modifiable` before it makes candidates and :meth:`admitted` (or :meth:`passing`) for them. Each rule
    sees only the trials the rules before it admitted, so a costly rule listed last (a sentence encoder) scores
    the fewest, and a rule that admits nothing leaves the rules after it nothing to score.
    """

    rules: tuple[Constraint, ...] = ()

    def plus(self, extra: Sequence[Constraint]) -> ConstraintSet:
        """These rules, then ``extra`` (each a :class:`Constraint`)."""
        stray = [rule for rule in extra if not isinstance(rule, Constraint)]
        if stray:
            raise BodegaError(f"constraints: {stray[0]!r} is not a bodega.attacks.constraints.Constraint; subclass "
                              "it and override modifiable and/or admits")
        return ConstraintSet((*self.rules, *extra))

    def prepare(self, state: SearchState) -> None:
        """Tell every rule that a new text is attacked."""
        for rule in self.rules:
            rule.prepare(state)

    def modifiable(self, state: SearchState) -> list[int]:
        """The indices of the words every rule lets a search replace."""
        return [i for i in range(len(state.text)) if all(rule.modifiable(state, i) for rule in self.rules)]

    def admitted(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """One bool per trial change-set (each replaces the word at ``index`` on top of ``changes``): whether
        every rule admits it."""
        passed = np.ones(len(trials), dtype=bool)
        for rule in self.rules:
            alive = np.flatnonzero(passed)
            if not len(alive):
                break
            verdict = np.asarray(rule.admits(state, index, changes, [trials[k] for k in alive]), dtype=bool)
            passed[alive] = verdict
        return passed

    def passing(self, state: SearchState, index: int, substitutes: Sequence[str],
                changes: Changes | None = None) -> list[str]:
        """The substitutes of the word at ``index`` whose change-sets (on top of ``changes``, default none:
        single changes of the original) every rule admits."""
        if not substitutes or not self.rules:
            return list(substitutes)
        changes = changes or {}
        passed = self.admitted(state, index, changes, [{**changes, index: s} for s in substitutes])
        return [s for s, ok in zip(substitutes, passed) if ok]

    def warm_up(self) -> None:
        """Load what every rule needs now, so that the first example is not charged for it."""
        for rule in self.rules:
            rule.warm_up()


@dataclass(frozen=True)
class Stopwords(Constraint):
    """Words an attack never replaces (compared case-insensitively); with ``substitutes``, never puts in either
    (OpenAttack filters the masked LM's candidates of BERT-ATTACK and BAE by the same list)."""

    words: frozenset[str] = field(default_factory=default_stopwords)
    substitutes: bool = False

    def allows(self, word: str) -> bool:
        """Whether ``word`` may be replaced."""
        return word.lower() not in self.words

    def modifiable(self, state: SearchState, index: int) -> bool:
        """Whether the word at ``index`` is no stopword."""
        return self.allows(state.text.words[index].text)

    def admits(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """Trials whose substitute at ``index`` is no stopword, when ``substitutes``; else every trial."""
        return np.array([not self.substitutes or self.allows(trial[index]) for trial in trials], dtype=bool)


@dataclass(frozen=True)
class MaxModificationRate(Constraint):
    """At most ``rate`` of the words may change (at least one). ``one_more`` is OpenAttack's cap of BERT-ATTACK
    and BAE: they count the changes before trying each word, so a text may end with one change past
    ``int(rate * words)``."""

    rate: float
    one_more: bool = False

    def allows(self, changed: int, total: int) -> bool:
        """Whether ``changed`` of ``total`` words is within the rate."""
        limit = int(self.rate * total)
        return changed <= (limit + 1 if self.one_more else max(1, limit))

    def admits(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """Trials that change no more words than the rate allows."""
        return np.array([self.allows(len(trial), len(state.text)) for trial in trials], dtype=bool)


@dataclass
class PosAgreement(Constraint):
    """A substitute must keep the word's coarse tag; nouns and verbs may swap (TextFooler's rule).

    Tags come from spaCy on a window of four words before and after the substitute."""

    tagger: PosTagger = field(default_factory=PosTagger)

    def warm_up(self) -> None:
        """Load spaCy's tagger now, so that the first example is not charged for it."""
        self.tagger.nlp

    def admits(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """Trials whose substitute at ``index`` keeps the original word's tag."""
        n = len(state.text)
        lo, hi = max(index - 4, 0), min(index + 5, n)
        windows = [state.text.window(trial, lo, hi, mark=index) for trial in trials]
        return self.mask(state.pos[index], [w for w, _ in windows], windows[0][1])

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
class SentenceSimilarity(Constraint):
    """Cosine similarity of a window around the changed word, as TextFooler scores with USE.

    ``window`` words around the change are compared (the whole text when it is
    shorter) with the same window of the current text; ``short_text_threshold`` applies to
    texts shorter than the window, as in OpenAttack's TextFooler, but only to that text
    (OpenAttack keeps the lowered threshold for every later example: ``sticky=True`` does the same).
    """

    encoder: SentenceEncoder = field(default_factory=SentenceEncoder)
    threshold: float = 0.5
    window: int = 15
    short_text_threshold: float = 0.1
    sticky: bool = False
    current: float = field(default=0.5, init=False, repr=False)  # the threshold of the text being attacked
    _last: tuple = field(default=((), None), init=False, repr=False, compare=False)

    def prepare(self, state: SearchState) -> None:
        """Fix the threshold of this text (:meth:`threshold_for`)."""
        self.current = self.threshold_for(len(state.text))

    def admits(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """Trials at least as similar as the threshold (:meth:`window_scores`)."""
        return self.window_scores(state, index, changes, trials) >= self.current

    def window_scores(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """Each trial's similarity to the current text, on the window around ``index``; the last result is kept,
        so a search that ranks by it after :meth:`admits` encodes nothing twice."""
        low, high = self.window_bounds(index, len(state.text))
        reference, _ = state.text.window(changes, low, high)
        key = (reference, *(state.text.window(t, low, high)[0] for t in trials))
        if self._last[0] != key:
            self._last = (key, self.scores(key[0], key[1:]))
        return self._last[1]

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


@dataclass
class TextSimilarity(Constraint):
    """Cosine similarity of the whole changed text to the original, at least ``threshold``: BAE's rule
    (OpenAttack's 0.936 for the Universal Sentence Encoder; the encoder here is the caller's).

    The original is encoded once per text (:meth:`prepare`) and every candidate's score is kept for that text,
    so a search that ranks by :meth:`scores` after :meth:`admits` encodes nothing twice.
    """

    encoder: SentenceEncoder = field(default_factory=SentenceEncoder)
    threshold: float = 0.936
    _reference: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _scores: dict[str, float] = field(default_factory=dict, init=False, repr=False, compare=False)

    def prepare(self, state: SearchState) -> None:
        """Encode the original text; forget the last text's scores."""
        self._reference = self.encoder.encode([state.text.text])[0]
        self._scores = {}

    def scores(self, state: SearchState, trials: Sequence[Changes]) -> np.ndarray:
        """Each trial's similarity to the original text (new texts encoded in one batch)."""
        texts = [state.text.replace(trial) for trial in trials]
        missing = [t for t in dict.fromkeys(texts) if t not in self._scores]
        if missing:
            self._scores.update(zip(missing, self.encoder.encode(missing) @ self._reference))
        return np.array([self._scores[t] for t in texts])

    def admits(self, state: SearchState, index: int, changes: Changes, trials: Sequence[Changes]) -> np.ndarray:
        """Trials at least as similar to the original as the threshold."""
        return self.scores(state, trials) >= self.threshold

    def warm_up(self) -> None:
        """Load the sentence encoder now, so that the first example is not charged for it."""
        self.encoder.warm_up()
