"""Small deterministic victims and models for the attack tests (not a test module itself)."""
from __future__ import annotations

import re

import numpy as np

WEIGHTS = {"evil": 2.0, "enemy": 1.5, "attack": 1.5, "destroy": 2.0, "terrible": 1.5, "traitors": 2.0,
           "lie": 1.5, "corrupt": 2.0, "great": 0.5, "nation": 0.3}


class OnesSemantic:
    """Stands in for the semantic model: every pair is fully similar."""

    name = "ones"

    def score(self, pairs):
        return np.ones(len(pairs))


class KeywordVictim:
    """P(non-credible) = sigmoid(sum of keyword weights - 1.5), case-insensitive, word by word."""

    name = "keyword"
    task = "PR2"
    weights_hash = "keyword-v1"

    def __init__(self, weights: dict[str, float] | None = None, bias: float = 1.5):
        self.weights = weights or WEIGHTS
        self.bias = bias
        self.calls = 0

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        scores = np.array([sum(self.weights.get(w, 0.0) for w in re.findall(r"\w+", t.lower())) - self.bias
                           for t in texts])
        p1 = 1.0 / (1.0 + np.exp(-scores))
        return np.stack([1 - p1, p1], axis=1)

    def predict(self, texts: list[str]) -> np.ndarray:
        return self.predict_proba(texts).argmax(axis=1)


class FlakyVictim(KeywordVictim):
    """Raises on every tenth call."""

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        if (self.calls + 1) % 10 == 0:
            self.calls += 1
            raise RuntimeError(f"flaky victim: call {self.calls} fails on purpose")
        return super().predict_proba(texts)


SENTENCES = [
    "The evil enemy will attack our great nation.",
    "Corrupt traitors lie to destroy us!",
    "Terrible  lies from the corrupt press,\nagain.",
    "The weather was mild and the market opened calmly.",
    "They say the evil plan would destroy the village.",
    "A terrible, corrupt deal.",
]


class FirstWordDropper:
    """An attacker object of the user's own: drops the first word whose removal reaches the goal."""

    name = "first-word-dropper"

    def attack(self, victim, text, goal, rng=None, **options):
        from bodega.attacks.result import AttackResult

        words = text.split()
        for i in range(len(words)):
            candidate = " ".join(words[:i] + words[i + 1:])
            if goal.reached(victim.predict_proba([candidate]))[0]:
                return AttackResult(candidate, True)
        return AttackResult(None, False)
