"""What counts as success: leave the original decision (untargeted) or reach a class (targeted)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Goal:
    """``target`` is the class to move away from (untargeted) or to reach (targeted)."""

    target: int
    targeted: bool

    @classmethod
    def untargeted(cls, original_decision: int) -> "Goal":
        """Success is any decision other than ``original_decision``."""
        return cls(int(original_decision), False)

    @classmethod
    def towards(cls, label: int) -> "Goal":
        """Success is the decision ``label`` (BODEGA's targeted scenario asks for 0)."""
        return cls(int(label), True)

    def reached(self, probs: np.ndarray) -> np.ndarray:
        """One bool per row of an (n, 2) probability matrix."""
        decisions = np.argmax(np.asarray(probs), axis=1)
        return decisions == self.target if self.targeted else decisions != self.target

    def gain(self, probs: np.ndarray) -> np.ndarray:
        """How far each row has moved the attacker's way (higher is better), in [0, 1]."""
        p = np.asarray(probs)[:, self.target]
        return p if self.targeted else 1.0 - p
