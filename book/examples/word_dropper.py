"""A ten-line attacker: delete, one at a time, the word whose removal moves the victim most."""
import numpy as np

from bodega.attacks import AttackResult


class WordDropper:
    name = "WordDropper"

    def __init__(self, max_words: int = 3):
        self.max_words = max_words

    def attack(self, victim, text, goal, rng):
        words = text.split()
        for _ in range(min(self.max_words, len(words) - 1)):
            trials = [" ".join(words[:i] + words[i + 1:]) for i in range(len(words))]
            probs = victim.predict_proba(trials)  # one batched call, every text counted
            best = int(np.argmax(goal.gain(probs)))
            if goal.reached(probs[best:best + 1])[0]:
                return AttackResult(trials[best], True)
            words = trials[best].split()
        return AttackResult(None, False)


def build(max_words: int = 3) -> WordDropper:
    return WordDropper(max_words)
