"""Query accounting around a victim: counts, a budget, caching and length-bucketed batching.

``queries`` counts every text an attack asks about, cache hits and repeats included, so
that numbers compare with BODEGA and OpenAttack; ``unique_queries`` counts distinct texts
of the current example; ``forwards`` counts texts the model actually computed. Only cache
misses reach the model, each distinct text once, in batches of similar length (less
padding). Counters and budget are per example (``start_example``); ``total_*`` keep the
totals since construction.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from bodega.precision import victim_key
from bodega.victims.base import argmax_predictions, check_texts
from bodega.victims.cache import ProbabilityCache

MEMORY_ENTRIES = 200_000


class QueryBudgetExceeded(RuntimeError):
    """A call would take the current example past its query budget; nothing was computed."""


class QueryAccountant:
    def __init__(self, victim, budget: int | None = None, cache: ProbabilityCache | None = None,
                 batch_size: int = 32):
        if budget is not None and budget < 0:
            raise ValueError(f"budget must be >= 0 or None, got {budget}")
        if cache is not None and not getattr(victim, "weights_hash", ""):
            raise ValueError(f"victim {getattr(victim, 'name', victim)!r} has no identity (weights hash or "
                             "version), so its predictions cannot be cached across runs; give it a version")
        self.victim = victim
        self.budget = budget
        self.cache = cache
        self.batch_size = batch_size
        self._memory: OrderedDict[str, np.ndarray] = OrderedDict()
        self.total_queries = self.total_forwards = 0
        self.start_example()

    @property
    def name(self) -> str:
        return self.victim.name

    @property
    def task(self) -> str:
        return self.victim.task

    @property
    def weights_hash(self) -> str:
        return self.victim.weights_hash

    @property
    def precision(self) -> str:
        return getattr(self.victim, "precision", "fp32")

    def start_example(self) -> None:
        """Reset the per-example counters and budget (the caches stay)."""
        self.queries = 0
        self.forwards = 0
        self._seen: set[str] = set()

    @property
    def unique_queries(self) -> int:
        return len(self._seen)

    def counts(self) -> dict[str, int]:
        return {"queries": self.queries, "unique_queries": self.unique_queries, "forwards": self.forwards}

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        texts = check_texts(texts)
        if self.budget is not None and self.queries + len(texts) > self.budget:
            raise QueryBudgetExceeded(
                f"{self.name}: {len(texts)} more queries would exceed the budget of {self.budget} "
                f"({self.queries} used for this example)")
        self.queries += len(texts)
        self.total_queries += len(texts)
        self._seen.update(texts)
        result = np.empty((len(texts), 2), dtype=np.float64)
        missing: dict[str, list[int]] = {}
        for i, text in enumerate(texts):
            known = self._memory.get(text)
            if known is not None:
                self._memory.move_to_end(text)
                result[i] = known
            else:
                missing.setdefault(text, []).append(i)
        if missing and self.cache is not None:
            distinct = list(missing)
            for j, probs in self.cache.get(victim_key(self.victim), distinct).items():
                self._remember(distinct[j], probs)
                for i in missing.pop(distinct[j]):
                    result[i] = probs
        if missing:
            self._compute(missing, result)
        return result

    def predict(self, texts: list[str]) -> np.ndarray:
        return argmax_predictions(self.predict_proba(texts))

    def _compute(self, missing: dict[str, list[int]], result: np.ndarray) -> None:
        ordered = sorted(missing, key=len)
        for start in range(0, len(ordered), self.batch_size):
            batch = ordered[start:start + self.batch_size]
            probs = np.asarray(self.victim.predict_proba(batch), dtype=np.float64)
            if probs.shape != (len(batch), 2):
                raise ValueError(f"{self.name}: predict_proba returned shape {probs.shape} "
                                 f"for {len(batch)} texts, expected ({len(batch)}, 2)")
            self.forwards += len(batch)
            self.total_forwards += len(batch)
            if self.cache is not None:
                self.cache.put(victim_key(self.victim), batch, probs)
            for text, row in zip(batch, probs):
                self._remember(text, row)
                for i in missing[text]:
                    result[i] = row

    def _remember(self, text: str, probs: np.ndarray) -> None:
        self._memory[text] = probs
        if len(self._memory) > MEMORY_ENTRIES:
            self._memory.popitem(last=False)
