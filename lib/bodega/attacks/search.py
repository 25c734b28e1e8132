"""Search methods: how an attack walks through the candidates a transformation offers.

Each search follows OpenAttack 2.1.1's algorithm as BODEGA ran it, with its defaults,
except where that code has a bug or wastes queries (every such place is named in the
docstring). All candidates of one step go to the victim in one batched call through an
:class:`~bodega.attacks.evaluation.Evaluator`, and every random draw comes from the
attack's own ``numpy.random.Generator``.

Where batching stops: a step whose texts depend on the answers to the previous one
(a PSO swarm state, a Genetic generation, the next word of TextFooler and of the greedy
searches) is its own call; and a loop that stops at the first text reaching the goal
(PWWS's greedy phase, DeepWordBug's single check) asks one text at a time, since a batch
would ask, and count, texts that the algorithm never asks; PWWS's greedy texts are known
in advance, so a batch-invariant victim computes them ahead (:class:`~bodega.attacks.evaluation.Lookahead`)
without their being asked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Sequence

import numpy as np

from bodega.attacks.constraints import MaxModificationRate, PosAgreement, SentenceSimilarity, Stopwords
from bodega.attacks.evaluation import Evaluator, Lookahead
from bodega.attacks.transformations import WordTransformation
from bodega.text import TokenizedText

UNK = "<UNK>"
("""OpenAttack's default ``token_unk``; the recipes default to BODEGA's ``UNK_TEXT`` """
 """(:mod:`bodega.attacks.filter_words`).""")


@dataclass
class SearchState:
    """Everything a search needs about one attack."""

    text: TokenizedText
    pos: list[str]
    evaluator: Evaluator
    rng: np.random.Generator


def leave_one_out_gain(state: SearchState, positions: Sequence[int], unk: str = UNK) -> tuple[float, np.ndarray]:
    """Goal gain of the original and of the text with each position replaced by ``unk`` (one call)."""
    texts = [state.text.replace({i: unk}) for i in positions] + [state.text.text]
    gains = state.evaluator.gain(texts)
    return float(gains[-1]), gains[:-1]


def substitute_lists(state: SearchState, transformation: WordTransformation,
                     stopwords: Stopwords | None, keep_self: bool = False) -> list[list[str]]:
    """Candidates for every word (empty for stopwords), without the word itself unless ``keep_self``."""
    out = []
    for i, word in enumerate(state.text.words):
        if stopwords is not None and not stopwords.allows(word.text):
            out.append([])
            continue
        original = word.text.lower()
        out.append([c for c in transformation(state.text, i, state.pos[i]) if keep_self or c.lower() != original])
    return out


# --- DeepWordBug ---------------------------------------------------------------------------------

def char_edit_search(state: SearchState, edit: Callable[[str, np.random.Generator], str], power: int = 5,
                     unk: str = UNK, openattack_order: bool = False) -> str | None:
    """Rank words by the gain of replacing each with ``unk`` ("replaceone"), edit the top ``power``.

    As OpenAttack: one edit in each of the ``power`` most important words, then a
    single check. Differences: the leave-one-out texts go in one batch (OpenAttack
    sends one text per call); only words are ranked (OpenAttack also ranks
    punctuation tokens, on which an edit is a no-op that uses up one of the ``power``
    slots; the recipe's ``respace`` option restores that); ties keep text order.
    ``openattack_order`` is OpenAttack's order: the original is not asked, the loss
    (probability of the class to leave) is sorted by numpy's default sort, and edits draw
    from :class:`~bodega.attacks.transformations.LegacyDraws`, most important word first.
    """
    n = len(state.text)
    if n == 0:
        return None
    if openattack_order:
        from bodega.attacks.transformations import LegacyDraws

        probs = state.evaluator.probs([state.text.replace({i: unk}) for i in range(n)])[:, state.evaluator.goal.target]
        losses = 1 - probs if state.evaluator.goal.targeted else probs
        draws = LegacyDraws(state.rng)
        changes = {int(i): edit(state.text.words[i].text, draws) for i in np.argsort(losses)[:power]}
        candidate = state.text.replace(changes)
        return candidate if state.evaluator.reached([candidate])[0] else None
    _, gains = leave_one_out_gain(state, range(n), unk)
    order = np.argsort(-gains, kind="stable")[:power]
    changes = {int(i): edit(state.text.words[i].text, state.rng) for i in sorted(order)}
    candidate = state.text.replace(changes)
    return candidate if state.evaluator.reached([candidate])[0] else None


# --- PWWS ----------------------------------------------------------------------------------------

def _pwws_options(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
                  openattack_order: bool) -> list[list[str]]:
    """Each token's candidates: OpenAttack's for every token (filter words too), else :func:`substitute_lists`."""
    if not openattack_order:
        return substitute_lists(state, transformation, stopwords)
    return [[c for c in transformation(state.text, i, state.pos[i]) if c != word.text]
            for i, word in enumerate(state.text.words)]


def _pwws_swap_calls(state: SearchState, options: list[list[str]], ranked: list[int],
                     reask_original: bool) -> list[list[str]]:
    """Each ranked token's candidate texts (one call per token with candidates, as OpenAttack asks them),
    in token order, each followed by the original if ``reask_original``."""
    return [[state.text.replace({i: c}) for c in options[i]] + ([state.text.text] if reask_original else [])
            for i in ranked if options[i]]


def _pwws_best_swaps(state: SearchState, options: list[list[str]], ranked: list[int], weights: np.ndarray,
                     base: float, values: np.ndarray, reask_original: bool) -> list[tuple[int, str, float]]:
    """Per ranked token, its best candidate and weight x drop, from the values of :func:`_pwws_swap_calls`.

    ``reask_original``: the original follows each token's candidates and that token's drop
    is measured from it, as OpenAttack asks it once per token; a token without candidates
    keeps its word with score 0 (OpenAttack "replaces" it by itself later).
    """
    best, cursor = [], 0
    for k, i in enumerate(ranked):
        if not options[i]:
            best.append((i, state.text.words[i].text, 0.0))
            continue
        block = values[cursor:cursor + len(options[i])]
        cursor += len(options[i])
        reference = base
        if reask_original:
            reference, cursor = float(values[cursor]), cursor + 1
        j = int(np.argmax(block))
        best.append((i, options[i][j], float(weights[k] * (block[j] - reference))))
    return best


def pwws_search(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
                unk: str = UNK, openattack_order: bool = False) -> str | None:
    """Probability-weighted word saliency: order words by softmax(saliency) x best gain, apply greedily.

    As OpenAttack, except: stopwords are neither scored nor offered candidates
    (OpenAttack queries them and then skips them; the softmax denominator is shared,
    so the order of the other words is the same); words without candidates are not
    re-sent; candidates keep the case of the word they replace. ``openattack_order``
    restores OpenAttack 2.1.1's order of work and queries: every token (filter words and
    punctuation too) is scored with ``unk``, every token with candidates has them asked
    with the original again, scores are in its arithmetic (the probability of the target
    class, signed), and tokens are then applied in order, a filter word skipped and a
    token without candidates "replaced" by itself. In both, the saliency probes and the
    candidates of all tokens go to the victim in one call where the query budget holds them all
    (OpenAttack asks one call for the probes and one per token; the texts and their count are the
    same), else in OpenAttack's calls, so a budget runs out where and when it did; the greedy phase
    asks one text at a time, because it stops at the first text that reaches the goal and
    a batch would ask (and count) texts after it; those texts are prefetched (computed
    ahead, not asked) where the victim allows it.
    """
    goal = state.evaluator.goal
    value = partial(_preference, goal) if openattack_order else goal.gain
    options = _pwws_options(state, transformation, stopwords, openattack_order)
    ranked = list(range(len(options))) if openattack_order else [i for i, c in enumerate(options) if c]
    if not ranked and not openattack_order:
        return None
    probes = [state.text.replace({i: unk}) for i in ranked] + [state.text.text]
    values = value(state.evaluator.probs_in_calls([probes, *_pwws_swap_calls(state, options, ranked,
                                                                               openattack_order)]))
    base = float(values[len(ranked)])
    saliency = values[:len(ranked)] - base
    weights = np.exp(saliency - saliency.max())
    weights /= weights.sum()
    best = _pwws_best_swaps(state, options, ranked, weights, base, values[len(probes):], openattack_order)
    changes: dict[int, str] = {}
    candidates = []
    for i, word, _ in sorted(best, key=lambda item: -item[2]):
        if stopwords is not None and not stopwords.allows(state.text.words[i].text):
            continue
        changes[i] = word
        candidates.append(state.text.replace(changes))
    lookahead = Lookahead(state.evaluator.prefetch, candidates)
    for k, candidate in enumerate(candidates):
        lookahead(k)
        if state.evaluator.reached([candidate])[0]:
            return candidate
    return None


# --- Greedy substitution by word importance (for masked-LM and other recipes) --------------------

def greedy_search(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None = None,
                  max_rate: MaxModificationRate | None = None,
                  candidate_filter: Callable[[SearchState, int, list[dict[int, str]]], np.ndarray] | None = None,
                  unk: str = UNK) -> str | None:
    """Words by leave-one-out importance; at each, the candidate that reaches the goal or gains most.

    The generic loop of BERT-ATTACK-style recipes: a word's candidates (computed on the
    original text) are all scored in one call; a candidate that reaches the goal ends
    the attack, otherwise the best one is kept if it improves on the current text.
    ``candidate_filter(state, index, trials)`` returns a boolean mask over the trial
    change-sets (similarity, part of speech...); ``max_rate`` caps the changed words.
    """
    n = len(state.text)
    allowed = [i for i, w in enumerate(state.text.words) if stopwords is None or stopwords.allows(w.text)]
    if not allowed:
        return None
    base, gains = leave_one_out_gain(state, allowed, unk)
    changes: dict[int, str] = {}
    current = base
    for k in np.argsort(-gains, kind="stable"):
        if max_rate is not None and not max_rate.allows(len(changes) + 1, n):
            break
        i = allowed[int(k)]
        original = state.text.words[i].text.lower()
        options = [c for c in transformation(state.text, i, state.pos[i]) if c.lower() != original]
        trials = [{**changes, i: c} for c in options]
        if candidate_filter is not None and trials:
            trials = [t for t, keep in zip(trials, candidate_filter(state, i, trials)) if keep]
        if not trials:
            continue
        found, changes, current = best_trial(state, changes, trials, current)
        if found is not None:
            return found
    return None


def best_trial(state: SearchState, changes: dict[int, str], trials: list[dict[int, str]], current_gain: float,
               choose: Callable[[np.ndarray], int] | None = None) -> tuple[str | None, dict[int, str], float]:
    """One greedy step: all trial change-sets in one victim call.

    Returns a text that reaches the goal (``choose`` picks it from the mask of those that
    do; default the first), else the trial that gains most if it beats ``current_gain``,
    else the current ``changes``; with the gain of what it returns.
    """
    texts = [state.text.replace(t) for t in trials]
    probs = state.evaluator.probs(texts)
    reached = state.evaluator.goal.reached(probs)
    if reached.any():
        j = choose(reached) if choose is not None else int(np.argmax(reached))
        return texts[j], trials[j], current_gain
    gains = state.evaluator.goal.gain(probs)
    best = int(np.argmax(gains))
    if gains[best] > current_gain:
        return None, trials[best], float(gains[best])
    return None, changes, current_gain


# --- TextFooler ----------------------------------------------------------------------------------

def textfooler_search(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
                      similarity: SentenceSimilarity, pos_agreement: PosAgreement | None,
                      importance_threshold: float = -1.0, unk: str = UNK) -> str | None:
    """Importance by deletion (``unk``), then per word the most similar successful substitute.

    As OpenAttack's TextFooler (its default WordNet candidates, its importance score,
    window and thresholds), except: the sentence encoder is the profile's (MiniLM in
    place of the Universal Sentence Encoder); the short-text threshold applies to that
    text only (OpenAttack overwrites the attacker's threshold for every later text);
    part-of-speech agreement uses spaCy tags of a window around the word; the text
    keeps its case and spacing.
    """
    n = len(state.text)
    allowed = [i for i, w in enumerate(state.text.words) if stopwords is None or stopwords.allows(w.text)]
    if not allowed:
        return None
    texts = [state.text.replace({i: unk}) for i in allowed] + [state.text.text]
    probs = state.evaluator.probs(texts)
    original, leave = probs[-1], probs[:-1]
    label = int(np.argmax(original))
    top = original[label]
    moved = np.argmax(leave, axis=1)
    importance = top - leave[:, label] + (moved != label) * (leave.max(axis=1) - original[moved])
    order = sorted(range(len(allowed)), key=lambda k: -importance[k])
    threshold = similarity.threshold_for(n)
    changes: dict[int, str] = {}
    for k in order:
        if importance[k] <= importance_threshold:
            continue
        i = allowed[k]
        synonyms = [c for c in transformation(state.text, i, state.pos[i])
                    if c.lower() != state.text.words[i].text.lower()]
        if not synonyms:
            continue
        trials = [{**changes, i: s} for s in synonyms]
        new_probs = state.evaluator.probs([state.text.replace(t) for t in trials])
        low, high = similarity.window_bounds(i, n)
        reference, _ = state.text.window(changes, low, high)
        sims = similarity.scores(reference, [state.text.window(t, low, high)[0] for t in trials])
        if pos_agreement is not None:
            lo, hi = max(i - 4, 0), min(i + 5, n)
            windows = [state.text.window(t, lo, hi, mark=i) for t in trials]
            pos_ok = pos_agreement.mask(state.pos[i], [w for w, _ in windows], windows[0][1])
        else:
            pos_ok = np.ones(len(trials), dtype=bool)
        success = state.evaluator.goal.reached(new_probs) & (sims >= threshold) & pos_ok
        if success.any():
            changes = trials[int(np.argmax(success * sims))]
            return state.text.replace(changes)
        penalised = new_probs[:, label] + (sims < threshold) + (~pos_ok)
        j = int(np.argmin(penalised))
        if penalised[j] < top:
            changes = trials[j]
    return None


# --- Genetic (Alzantot et al.) -------------------------------------------------------------------

def _chooser(candidates: list[list[str]], cap: int | None = None) -> np.ndarray | None:
    counts = np.array([min(len(c), cap) if cap else len(c) for c in candidates], dtype=float)
    return counts / counts.sum() if counts.sum() > 0 else None


def _pick_position(rng: np.random.Generator, current: Sequence[str], original: Sequence[str],
                   select: np.ndarray) -> int:
    """A position by ``select``; an unmodified one while some modifiable position is still unmodified."""
    modified = sum(a != b for a, b in zip(current, original))
    position = int(rng.choice(len(select), p=select))
    if modified < np.count_nonzero(select):
        while current[position] != original[position]:
            position = int(rng.choice(len(select), p=select))
    return position


def _preference(goal, probs: np.ndarray) -> np.ndarray:
    """Higher is better for the attacker, in OpenAttack's arithmetic (the target class's probability, or minus it)."""
    p = np.asarray(probs)[:, goal.target]
    return p if goal.targeted else -p


def legacy_rng(rng: np.random.Generator) -> np.random.RandomState:
    """numpy's legacy generator seeded from the example's one, as the OpenAttack backend seeds numpy's global state."""
    return np.random.RandomState(int(rng.integers(2**32)))


def genetic_search(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
                   population: int = 20, generations: int = 20, openattack_order: bool = False) -> str | None:
    """Alzantot et al.'s genetic search with OpenAttack's defaults (20 x 20, WordNet candidates).

    As OpenAttack, except: the perturbations of a whole generation are scored in one
    batch, and no text is sent twice (OpenAttack re-sends each parent and each member
    of the population, about three times the unique texts; the ``reask`` option restores
    that). ``openattack_order`` draws from numpy's legacy generator (:func:`legacy_rng`)
    in OpenAttack's order, so both backends give the same text and queries.
    """
    original = tuple(state.text.tokens)
    candidates = substitute_lists(state, transformation, stopwords, keep_self=openattack_order)
    select = _chooser(candidates)
    if select is None:
        return None
    rng, evaluator = (legacy_rng(state.rng) if openattack_order else state.rng), state.evaluator
    goal = evaluator.goal

    def text_of(words: Sequence[str]) -> str:
        return state.text.with_words(list(words))

    def perturb(members: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        trials: list[list[tuple[str, ...]]] = []
        for member in members:
            position = _pick_position(rng, member, original, select)
            options = [member[:position] + (w,) + member[position + 1:] for w in candidates[position]
                       if w != original[position]]
            trials.append(options)
        flat: list[str] = []
        for member, options in zip(members, trials):
            flat += [text_of(t) for t in options] + [text_of(member)] if options else []
        preference = _preference(goal, evaluator.probs(flat))
        out, cursor = [], 0
        for member, options in zip(members, trials):
            if not options:
                out.append(member)
                continue
            block = preference[cursor:cursor + len(options)] - preference[cursor + len(options)]
            cursor += len(options) + 1
            out.append(options[int(np.argmax(block))] if block.max() > 0 else member)
        return out

    pop = perturb([original] * population)
    for _ in range(generations):
        texts = [text_of(m) for m in pop]
        probs = evaluator.probs(texts)
        top = int(np.argmax(_preference(goal, probs)))
        if goal.reached(probs[top:top + 1])[0]:
            return texts[top]
        gains = goal.gain(probs)
        if gains.sum() == 0:
            return None
        weights = gains / gains.sum()
        first = rng.choice(population, size=population - 1, p=weights)
        second = rng.choice(population, size=population - 1, p=weights)
        children = []
        for a, b in zip(first, second):
            coins = rng.uniform(size=len(original))
            children.append(tuple(x if c < 0.5 else y for x, y, c in zip(pop[a], pop[b], coins)))
        pop = [pop[top]] + perturb(children)
    return None


# --- Particle swarm (Zang et al., SememePSO) -----------------------------------------------------

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


def _pso_mutate(draws: SwarmDraws, particle: tuple[str, ...], original: tuple[str, ...],
                candidates: list[list[str]], select: np.ndarray) -> tuple[str, ...]:
    """With probability 1 - 2 x (changed share), one more word changed, at an unchanged position if any is left."""
    changed = sum(a != b for a, b in zip(particle, original))
    if draws.coin() >= 1 - 2 * (changed / len(original)):
        return particle
    position = draws.position(select)
    while particle[position] != original[position] and changed < np.count_nonzero(select):
        position = draws.position(select)
    word = candidates[position][draws.index(len(candidates[position]))]
    return particle[:position] + (word,) + particle[position + 1:]


def pso_search(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
               population: int = 20, iterations: int = 20, openattack_bests: bool = False) -> str | None:
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
    candidates = substitute_lists(state, transformation, stopwords, keep_self=openattack_bests)
    select = _chooser(candidates, cap=10)
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
        swarm.particles = [_pso_mutate(draws, p, original, candidates, select) for p in swarm.particles]
    return None
