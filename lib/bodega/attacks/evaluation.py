"""Ask the victim about candidate texts: one batched call per step, never the same text twice.

OpenAttack re-sends texts it has already scored (Genetic about three times over)
and sends DeepWordBug and PSO candidates one text per call. An :class:`Evaluator`
remembers every probability it has seen during one attack and sends only new texts,
all of a step's candidates in a single ``predict_proba`` call.

A loop that stops at the first success asks its texts one at a time; :class:`Lookahead`
has the victim compute the next ones ahead in growing batches (4, 8, 16, then 32 texts)
through :meth:`~bodega.victims.accounting.QueryAccountant.prefetch`, which asks nothing:
the texts asked, their order and the query counts stay the algorithm's.
"""
from __future__ import annotations

from typing import Callable, Protocol, Sequence

import numpy as np

from bodega.errors import BodegaError
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
                raise BodegaError(f"victim returned shape {answers.shape} for {len(texts)} texts; expected (n, 2)")
            return answers
        missing = list(dict.fromkeys(t for t in texts if t not in self._seen))
        if missing:
            answers = np.asarray(self.victim.predict_proba(missing), dtype=float)
            if answers.shape != (len(missing), 2):
                raise BodegaError(f"victim returned shape {answers.shape} for {len(missing)} texts; expected (n, 2)")
            self._seen.update(zip(missing, answers))
        if not texts:
            return np.zeros((0, 2))
        return np.stack([self._seen[t] for t in texts])

    def probs_in_calls(self, calls: Sequence[Sequence[str]]) -> np.ndarray:
        """The probabilities of the texts of several calls, in order: sent as one call when the victim's query
        budget (if any) can hold them all, else call by call, so that a budget runs out at the very call, and
        with the very count, at which asking them one call after another would have stopped."""
        texts = [text for call in calls for text in call]
        budget = getattr(self.victim, "budget", None)  # a QueryAccountant's per-example budget and count
        if budget is None or len(texts) <= budget - self.victim.queries or not calls:
            return self.probs(texts)
        return np.concatenate([self.probs(call) for call in calls])

    def prefetch(self, texts: Sequence[str]) -> int:
        """Let the victim compute ``texts`` ahead without asking them; how many it did (0: it cannot, or
        the first, the next ask, is answered here without the victim)."""
        ahead = getattr(self.victim, "prefetch", None)
        if ahead is None or not texts or (not self.reask and texts[0] in self._seen):
            return 0
        return ahead([t for t in texts if self.reask or t not in self._seen])

    def gain(self, texts: Sequence[str]) -> np.ndarray:
        """How far each text moves the victim the attacker's way (see :meth:`Goal.gain`)."""
        return self.goal.gain(self.probs(texts))

    def reached(self, texts: Sequence[str]) -> np.ndarray:
        """Whether each text already meets the goal."""
        return self.goal.reached(self.probs(texts))


FIRST_WINDOW, LAST_WINDOW = 4, 32


class Lookahead:
    """Prefetch the texts a first-success loop asks in order, a window at a time.

    ``lookahead(k)`` before asking ``texts[k]``: when ``k`` leaves the window computed so
    far, the next one (twice as wide, at most ``LAST_WINDOW`` texts) is offered to the
    victim, which computes it only with an ask that must reach the model anyway. A growing
    window bounds the texts computed and never asked: at batch 8 a transformer's forward
    costs about two single ones (the Performance chapter's table), at 32 about eight.
    """

    def __init__(self, prefetch: Callable[[list[str]], int] | None, texts: Sequence[str]):
        self.prefetch, self.texts = prefetch, texts
        self.end, self.window = 0, FIRST_WINDOW

    def __call__(self, k: int) -> None:
        if self.prefetch is None or k < self.end:
            return
        if self.prefetch(list(self.texts[k:k + self.window])):
            self.end, self.window = k + self.window, min(2 * self.window, LAST_WINDOW)
