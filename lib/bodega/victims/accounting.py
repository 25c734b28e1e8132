"""Query accounting around a victim: counts, a budget, caching and length-bucketed batching.

``queries`` counts every text an attack asks about, cache hits and repeats included, so
that numbers compare with BODEGA and OpenAttack; ``unique_queries`` counts distinct texts
of the current example; ``forwards`` counts texts the model actually computed, and
``cache_hits`` texts the persistent cache answered. Only cache misses reach the model, each
distinct text once, in batches of similar length (less padding). Counters and budget are per
example (``start_example``); ``total_*`` keep the totals since construction.

A loop that asks one candidate at a time and stops at the first success (PWWS's greedy
phase, the as-run BERT-ATTACK and BAE candidates) may :meth:`QueryAccountant.prefetch` the
texts it is about to ask: they join the forward of the next ask that reaches the model
and are remembered, but not asked, so ``queries``, ``unique_queries`` and the budget (which
counts asks) are what they were; only ``forwards`` (and ``cache_hits``) include them, and
``prefetched`` counts them (not in :meth:`~QueryAccountant.counts`: records keep their fields).
Prefetching changes the batch a text is computed in, so it is on only for a victim whose
``batch_invariant`` is true (its probabilities for a text do not depend on the other texts
of the batch: the fp32 transformers, the packed BiLSTM); bf16 victims (a text's
probability moves with its batch by up to 0.003-0.1, book: Performance), the 4-bit Gemma and
BODEGA's right-padded BiLSTM are not prefetched, nor is a victim that does not say, so
their results stay those of a run without it.

Every row the model returns is checked (finite, within [0, 1], summing to 1): a NaN row's
argmax is class 0, which would count as a successful attack. A bad row raises
:class:`InvalidPredictions`, naming the victim and the text, and is never cached.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from bodega.errors import BodegaError
from bodega.victims.base import argmax_predictions, check_texts
from bodega.victims.cache import ProbabilityCache

MEMORY_ENTRIES = 200_000
SUM_TOLERANCE = 1e-4  # a row's probabilities must sum to 1 within this (float32 softmax: ~1e-7)


class QueryBudgetExceeded(RuntimeError):
    """A call would take the current example past its query budget; nothing was computed."""


class InvalidPredictions(ValueError):
    """A victim returned rows that are not probabilities (NaN, infinite, outside [0, 1], not summing to 1)."""


def check_probabilities(probs: np.ndarray, texts: list[str], victim_name: str) -> None:
    """Raise :class:`InvalidPredictions` for the first row of ``probs`` that is not a probability pair."""
    finite = np.isfinite(probs).all(axis=1)
    with np.errstate(invalid="ignore"):
        valid = finite & (probs >= 0).all(axis=1) & (probs <= 1).all(axis=1) & (
            np.abs(probs.sum(axis=1) - 1) <= SUM_TOLERANCE)
    if not valid.all():
        bad = int(np.flatnonzero(~valid)[0])
        text = texts[bad] if len(texts[bad]) <= 80 else texts[bad][:77] + "..."
        raise InvalidPredictions(
            f"victim {victim_name} returned {probs[bad].tolist()} for {text!r} ({int((~valid).sum())} of "
            f"{len(texts)} rows invalid): probabilities must be finite, within [0, 1] and sum to 1")


def batch_invariant(victim) -> bool:
    """Whether ``victim`` declares that a text's probabilities do not depend on its batch (default: no)."""
    return bool(getattr(victim, "batch_invariant", False))


class QueryAccountant:
    """The only door from an attack to a victim: counts every query, enforces the budget, caches answers.

    Attackers receive one as their ``victim`` and call :meth:`predict_proba`; the runner calls
    :meth:`start_example` before each example and reads :meth:`counts` after it. ``budget`` caps the
    queries of one example (None: no cap); ``cache`` is the persistent prediction cache, keyed by
    the victim's ``weights_hash`` and ``precision`` (a victim without a hash cannot use one);
    ``batch_size`` is how many texts go to the model at once.
    """

    def __init__(self, victim, budget: int | None = None, cache: ProbabilityCache | None = None,
                 batch_size: int = 32, prefetch: bool = True):
        if budget is not None and budget < 0:
            raise BodegaError(f"budget must be >= 0 or None, got {budget}")
        if cache is not None and not getattr(victim, "weights_hash", ""):
            raise BodegaError(f"victim {getattr(victim, 'name', victim)!r} has no identity (weights hash or "
                             "version), so its predictions cannot be cached across runs; give it a version")
        self.victim = victim
        self.budget = budget
        self.cache = cache
        self.precision = str(getattr(victim, "precision", "fp32"))
        self.batch_size = batch_size
        self.prefetches = prefetch and batch_invariant(victim)  # see the module docstring
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self.total_queries = self.total_forwards = self.total_cache_hits = self.total_prefetched = 0
        self.start_example()

    @property
    def name(self) -> str:
        """The victim's name, so that the accountant can stand where a victim is expected."""
        return self.victim.name

    @property
    def task(self) -> str:
        """The victim's task."""
        return self.victim.task

    @property
    def weights_hash(self) -> str:
        """The victim's identity (weights hash or version), which keys the cache."""
        return self.victim.weights_hash

    def start_example(self) -> None:
        """Reset the per-example counters and budget (the caches stay)."""
        self.queries = 0
        self.forwards = 0
        self.cache_hits = 0
        self.prefetched = 0
        self._seen: set[str] = set()

    @property
    def unique_queries(self) -> int:
        """Distinct texts asked about in the current example."""
        return len(self._seen)

    def counts(self) -> dict[str, int]:
        """The current example's queries, unique queries, forwards and cache hits, as the record stores them."""
        return {"queries": self.queries, "unique_queries": self.unique_queries, "forwards": self.forwards,
                "cache_hits": self.cache_hits}

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """The victim's ``(n, 2)`` probabilities for ``texts``, every text counted.

        Raises :class:`QueryBudgetExceeded` before computing anything when the texts would take the
        example past its budget, and :class:`InvalidPredictions` for a row that is not a probability pair.
        """
        texts = check_texts(texts)
        if self.budget is not None and self.queries + len(texts) > self.budget:
            raise QueryBudgetExceeded(
                f"{self.name}: {len(texts)} more queries would exceed the budget of {self.budget} "
                f"({self.queries} used for this example)")
        self.queries += len(texts)
        self.total_queries += len(texts)
        self._seen.update(texts)
        return self._answer(texts)

    def prefetch(self, texts: list[str]) -> int:
        """Compute ahead, without asking them, the texts a loop will ask in this order; return how many.

        Only when the first (the loop's next ask) is unknown, so that the others join the
        forward that ask makes anyway (up to ``batch_size`` texts: no extra call). Speculative:
        nothing is counted as a query, at most the budget's remaining asks are looked at (the
        loop cannot ask more), and a failure (an invalid row, a victim error) is left to the
        ask of that text, so an example fails exactly when and where it did without
        prefetching. A no-op unless the victim is batch-invariant.
        """
        if not self.prefetches:
            return 0
        texts = check_texts(texts)
        if self.budget is not None:
            texts = texts[:max(self.budget - self.queries, 0)]
        if not texts or texts[0] in self._memory:
            return 0
        missing: dict[str, list[int]] = {t: [] for t in texts if t not in self._memory}
        fresh = list(missing)
        try:
            self._read_cache(missing, None)
            if texts[0] in missing:
                self._compute(missing, None)
        except Exception:  # noqa: BLE001 - speculative: the real ask of the text raises it, if it is ever asked
            pass
        done = sum(t in self._memory for t in fresh)  # a failed batch's predecessors stay
        self.prefetched += done
        self.total_prefetched += done
        return done

    def _answer(self, texts: list[str]) -> np.ndarray:
        """The probabilities of ``texts`` from memory, the persistent cache, else the model."""
        result = np.empty((len(texts), 2), dtype=np.float64)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            known = self._memory.get(text)
            if known is not None:
                self._memory.move_to_end(text)
                result[i] = known
            else:
                missing.setdefault(text, []).append(i)
        self._read_cache(missing, result)
        if missing:
            self._compute(missing, result)
        return result

    def _read_cache(self, missing: dict[str, list[int]], result: np.ndarray | None) -> None:
        """Answer what the persistent cache holds of ``missing`` (rows ``missing[text]`` of ``result``), popping it."""
        if not missing or self.cache is None:
            return
        distinct = list(missing)
        hits = self.cache.get(self.weights_hash, distinct, self.precision)
        self.cache_hits += len(hits)
        self.total_cache_hits += len(hits)
        for j, probs in hits.items():
            self._remember(distinct[j], probs)
            for i in missing.pop(distinct[j]):
                result[i] = probs

    def predict(self, texts: list[str]) -> np.ndarray:
        """The decisions (argmax) for ``texts``, counted as queries like :meth:`predict_proba`."""
        return argmax_predictions(self.predict_proba(texts))

    def _compute(self, missing: dict[str, list[int]], result: np.ndarray | None) -> None:
        ordered = sorted(missing, key=len)
        for start in range(0, len(ordered), self.batch_size):
            batch = ordered[start:start + self.batch_size]
            probs = np.asarray(self.victim.predict_proba(batch), dtype=np.float64)
            if probs.shape != (len(batch), 2):
                raise BodegaError(f"{self.name}: predict_proba returned shape {probs.shape} "
                                 f"for {len(batch)} texts, expected ({len(batch)}, 2)")
            self.forwards += len(batch)
            self.total_forwards += len(batch)
            check_probabilities(probs, batch, self.name)
            if self.cache is not None:
                self.cache.put(self.weights_hash, batch, probs, self.precision)
            for text, row in zip(batch, probs):
                self._remember(text, row)
                for i in missing[text]:
                    result[i] = row

    def _remember(self, text: str, probs: np.ndarray) -> None:
        self._memory[text] = probs
        if len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)
