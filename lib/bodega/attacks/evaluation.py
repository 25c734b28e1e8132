"""Ask the victim about candidate texts: one batched call per step, never the same text twice.

OpenAttack re-sends texts it has already scored (Genetic about three times over)
and sends DeepWordBug and PSO candidates one text per call. An :class:`Evaluator`
remembers every probability it has seen during one attack and sends only new texts,
all of a step's candidates in a single ``predict_proba`` call.
"""
from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np

from bodega.attacks.goal import Goal


class ProbabilityModel(Protocol):
    """Anything with ``predict_proba(texts) -> (n, 2)`` probabilities: a victim or its query accountant."""

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """One row of class probabilities per text, in the order given."""
        ...


class Evaluator:
    """Memoised, batched access to a victim for one attack.

    ``reask=True`` is OpenAttack's behaviour (the ``reask`` option of the recipes): every
    text is sent again each time the search asks, so query counts match the reference's.
    """

    def __init__(self, victim: ProbabilityModel, goal: Goal, reask: bool = False):
        self.victim = victim
        self.goal = goal
        self.reask = reask
        self._seen: dict[str, np.ndarray] = {}

    def probs(self, texts: Sequence[str]) -> np.ndarray:
        """The victim's probabilities for ``texts``; only texts new to this attack are sent (all with ``reask``)."""
        if self.reask:
            answers = np.asarray(self.victim.predict_proba(list(texts)), dtype=float) if texts else np.zeros((0, 2))
            if answers.shape != (len(texts), 2):
                raise ValueError(f"victim returned shape {answers.shape} for {len(texts)} texts; expected (n, 2)")
            return answers
        missing = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if missing:
            answers = np.asarray(self.victim.predict_proba(missing), dtype=float)
            if answers.shape != (len(missing), 2):
                raise ValueError(f"victim returned shape {answers.shape} for {len(missing)} texts; expected (n, 2)")
            self._seen.update(zip(missing, answers))
        if not texts:
            return np.zeros((0, 2))
        return np.stack([self._seen[t] for t in texts])

    def gain(self, texts: Sequence[str]) -> np.ndarray:
        """How far each text moves the victim the attacker's way (see :meth:`Goal.gain`)."""
        return self.goal.gain(self.probs(texts))

    def reached(self, texts: Sequence[str]) -> np.ndarray:
        """Whether each text already meets the goal."""
        return self.goal.reached(self.probs(texts))
