"""SememePSO's search: a discrete particle swarm over word substitutions."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from bodega.attacks.searches.common import SearchState, admitted_words, chooser, legacy_rng, substitute_lists
from bodega.attacks.transformations import WordTransformation


class SwarmDraws:
    """The PSO's random draws, from the example's generator or, ``legacy``, as OpenAttack 2.1.1 draws them.

    OpenAttack draws from numpy's legacy global generator (seeded as :func:`legacy_rng` seeds
    it) with ``choice(n, 1, p)``, ``randint(0, n, size=1)`` and one ``uniform()`` per number;
    the fixed search draws vectors from the example's ``numpy.random.Generator``.
    """

    def __init__(self, rng: np.random.Generator, legacy: bool):
        self.legacy = legacy
        self.rng = legacy_rng(rng) if legacy else rng

    def position(self, select: np.ndarray) -> int:
        """A position drawn with probabilities ``select``."""
        if self.legacy:
            return int(self.rng.choice(len(select), 1, p=select)[0])
        return int(self.rng.choice(len(select), p=select))

    def index(self, size: int) -> int:
        """A whole number in ``[0, size)``."""
        return int(self.rng.randint(0, size, size=1)[0]) if self.legacy else int(self.rng.integers(size))

    def coin(self) -> float:
        """One uniform number in ``[0, 1)``."""
        return float(self.rng.uniform())

    def coins(self, size: int, low: float = 0.0, high: float = 1.0) -> np.ndarray:
        """``size`` uniform numbers in ``[low, high)`` (one draw each when ``legacy``, as OpenAttack)."""
        if self.legacy:
            return np.array([self.rng.uniform(low, high) for _ in range(size)])
        return self.rng.uniform(low, high, size=size)


@dataclass
class Swarm:
    """Particles (word tuples), their velocities and bests, scored in one victim call per state.

    ``frozen_bests`` is OpenAttack 2.1.1's behaviour (the ``openattack_bests`` option): its
    bests start at -1 (untargeted, minimising a probability) or 100 (targeted, maximising
    one), so no score beats them; the global best stays the first particle, and the personal
    bests are the particle list itself until the first mutation replaces that list (then
    they stay as it was). Otherwise bests start at -infinity of the goal gain and are copies.
    """

    state: SearchState
    particles: list[tuple[str, ...]]
    velocity: np.ndarray
    frozen_bests: bool
    personal: list[tuple[str, ...]] = field(init=False)
    personal_gain: np.ndarray = field(init=False)
    best: tuple[str, ...] = field(init=False)
    best_gain: float = field(init=False, default=-np.inf)

    def __post_init__(self):
        self.personal = self.particles if self.frozen_bests else list(self.particles)
        self.personal_gain = np.full(len(self.particles), -np.inf)
        self.best = self.particles[0]

    def assess(self) -> str | None:
        """Score every particle in one call; update the bests; the best text when it reaches the goal."""
        goal = self.state.evaluator.goal
        texts = [self.state.text.with_words(list(m)) for m in self.particles]
        probs = self.state.evaluator.probs(texts)
        if self.frozen_bests:
            ranks = np.argsort(probs[:, goal.target])
            top = int(ranks[::-1][0] if goal.targeted else ranks[0])
        else:
            gains = goal.gain(probs)
            top = int(np.argmax(gains))
            if gains[top] > self.best_gain:
                self.best, self.best_gain = self.particles[top], float(gains[top])
            for k, gain in enumerate(gains):
                if gain > self.personal_gain[k]:
                    self.personal[k], self.personal_gain[k] = self.particles[k], gain
        return texts[top] if goal.reached(probs[top:top + 1])[0] else None

    def move(self, draws: SwarmDraws, omega: float, c1: float, c2: float) -> None:
        """Each particle's velocity, then a turn towards its personal best (``c1``) and the global one (``c2``)."""
        for k, particle in enumerate(self.particles):
            differs_personal = np.array([a != b for a, b in zip(particle, self.personal[k])])
            differs_best = np.array([a != b for a, b in zip(particle, self.best)])
            self.velocity[k] = omega * self.velocity[k] + (1 - omega) * (
                np.where(differs_personal, 3.0, -3.0) + np.where(differs_best, 3.0, -3.0))
            prob = 1.0 / (1.0 + np.exp(-self.velocity[k]))
            if draws.coin() < c1:
                self.particles[k] = _turn(draws, self.personal[k], self.particles[k], prob)
            if draws.coin() < c2:
                self.particles[k] = _turn(draws, self.best, self.particles[k], prob)


def _turn(draws: SwarmDraws, source: Sequence[str], target: Sequence[str], prob: np.ndarray) -> tuple[str, ...]:
    coins = draws.coins(len(prob))
    return tuple(s if c < p else t for s, t, c, p in zip(source, target, coins, prob))


def _pso_mutate(state: SearchState, draws: SwarmDraws, particle: tuple[str, ...], original: tuple[str, ...],
                candidates: list[list[str]], select: np.ndarray) -> tuple[str, ...]:
    """With probability 1 - 2 x (changed share), one more word changed, at an unchanged position if any is left
    (the particle stays as it is when the state's rules refuse that change on top of its others)."""
    changed = sum(a != b for a, b in zip(particle, original))
    if draws.coin() >= 1 - 2 * (changed / len(original)):
        return particle
    position = draws.position(select)
    while particle[position] != original[position] and changed < np.count_nonzero(select):
        position = draws.position(select)
    word = candidates[position][draws.index(len(candidates[position]))]
    if word != original[position] and not admitted_words(state, particle, position, [word]):
        return particle
    return particle[:position] + (word,) + particle[position + 1:]


def pso_search(state: SearchState, transformation: WordTransformation, population: int = 20, iterations: int = 20,
               openattack_bests: bool = False) -> str | None:
    """Discrete particle swarm over word substitutions with OpenAttack's defaults (20 x 20).

    As OpenAttack's PSOAttacker (WordNet candidates by default, at most 10 counted per
    word for position sampling, inertia 0.8 -> 0.2, C1 0.8 -> 0.2, C2 0.2 -> 0.8),
    fixing two bugs: OpenAttack starts the best score of an untargeted attack at -1
    while minimising a probability, so the global and personal bests never update,
    and its personal bests alias the population list, so they are overwritten by
    every move (see :class:`Swarm`). Each swarm state is scored in one batch; no text is
    sent twice (OpenAttack's PSO does not re-send either). ``openattack_bests`` keeps
    those bests, the word itself among the candidates and OpenAttack's random draws
    (:class:`SwarmDraws`), so both backends give the same text and queries.
    """
    original = tuple(state.text.tokens)
    candidates = substitute_lists(state, transformation, keep_self=openattack_bests)
    select = chooser(candidates, cap=10)
    if select is None:
        return None
    draws = SwarmDraws(state.rng, legacy=openattack_bests)
    particles = []
    for _ in range(population):
        position = draws.position(select)
        word = candidates[position][draws.index(len(candidates[position]))]
        particles.append(original[:position] + (word,) + original[position + 1:])
    velocity = np.repeat(draws.coins(population, -3, 3)[:, None], len(original), axis=1)
    swarm = Swarm(state, particles, velocity, frozen_bests=openattack_bests)
    for step in range(iterations):
        found = swarm.assess()
        if found is not None:
            return found
        omega = (0.8 - 0.2) * (iterations - step) / iterations + 0.2
        c1 = 0.8 - step / iterations * (0.8 - 0.2)
        c2 = 0.2 + step / iterations * (0.8 - 0.2)
        swarm.move(draws, omega, c1, c2)
        found = swarm.assess()
        if found is not None:
            return found
        swarm.particles = [_pso_mutate(state, draws, p, original, candidates, select) for p in swarm.particles]
    return None
