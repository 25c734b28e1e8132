"""BODEGA's attack/dev selection from a test pool, with a documented rule for small pools."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from bodega.data.tsv import Example

ATTACK_TARGET = 400
SMALL_POOL = 800


@dataclass
class Splits:
    """The three files of a task, plus notes on how they were made (shown in the book)."""

    train: list[Example]
    attack: list[Example]
    dev: list[Example]
    notes: list[str] = field(default_factory=list)

    def items(self):
        """(file name, rows) of the three splits, in the order they are written."""
        return (("train", self.train), ("attack", self.attack), ("dev", self.dev))


def split_attack_dev(pool: list[Example], seed: int = 0) -> tuple[list[Example], list[Example], str]:
    """Every ``len(pool)//400``-th row goes to attack (BODEGA); pools under 800 rows use a seeded sample.

    BODEGA's stride rule would put a pool of under 800 rows entirely into the attack set,
    leaving no dev set, so for such pools 400 rows (never more than two thirds of the pool)
    are drawn with a fixed seed, keeping pool order, and the rest form dev.
    """
    if len(pool) >= SMALL_POOL:
        div = len(pool) // ATTACK_TARGET
        attack = [row for i, row in enumerate(pool) if i % div == 0]
        dev = [row for i, row in enumerate(pool) if i % div != 0]
        return attack, dev, f"attack = every {div}-th row of the {len(pool)}-row test pool (BODEGA's rule)"
    n_attack = min(ATTACK_TARGET, len(pool) - len(pool) // 3)
    chosen = set(np.random.default_rng(seed).permutation(len(pool))[:n_attack].tolist())
    attack = [row for i, row in enumerate(pool) if i in chosen]
    dev = [row for i, row in enumerate(pool) if i not in chosen]
    return attack, dev, (f"the test pool has only {len(pool)} rows (< {SMALL_POOL}): {n_attack} rows drawn "
                         f"with seed {seed} form attack, the other {len(dev)} form dev")
