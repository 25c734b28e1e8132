"""Search methods: how an attack walks through the candidates a transformation offers.

Each search follows OpenAttack 2.1.1's algorithm as BODEGA ran it, with its defaults,
except where that code has a bug or wastes queries (every such place is named in the
docstring). All candidates of one step go to the victim in one batched call through an
:class:`~bodega.attacks.evaluation.Evaluator`, and every random draw comes from the
attack's own ``numpy.random.Generator``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from bodega.attacks.constraints import MaxModificationRate, PosAgreement, SentenceSimilarity, Stopwords
from bodega.attacks.evaluation import Evaluator
from bodega.attacks.transformations import WordTransformation
from bodega.text import TokenizedText

UNK = "<UNK>"
"""OpenAttack's default ``token_unk``; the recipes default to BODEGA's ``UNK_TEXT`` (:mod:`bodega.attacks.filter_words`)."""


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

def _pwws_openattack_order(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
                           unk: str) -> str | None:
    """PWWS in OpenAttack 2.1.1's order of work, queries included (the ``openattack_order`` option).

    Every token (filter words and punctuation too) is scored with ``unk`` in one call with
    the original; every token with candidates has them asked with the original again; then
    tokens by softmax(saliency) x best drop, each applied (a filter word skipped, a token
    without candidates "replaced" by itself) and the text asked, until the goal is reached.
    """
    goal, text, n = state.evaluator.goal, state.text, len(state.text)
    sign = -1.0 if goal.targeted else 1.0
    probs = state.evaluator.probs([text.replace({i: unk}) for i in range(n)] + [text.text])[:, goal.target]
    saliency = sign * (probs[-1] - probs[:-1])
    weights = np.exp(saliency - saliency.max())
    weights = weights / weights.sum()
    best: list[tuple[int, str, float]] = []
    for i, word in enumerate(text.words):
        options = [c for c in transformation(text, i, state.pos[i]) if c != word.text]
        if not options:
            best.append((i, word.text, 0.0))
            continue
        p = state.evaluator.probs([text.replace({i: c}) for c in options] + [text.text])[:, goal.target]
        j = int(np.argmax(p[:-1])) if goal.targeted else int(np.argmin(p[:-1]))
        best.append((i, options[j], float(weights[i] * sign * (p[-1] - p[j]))))
    changes: dict[int, str] = {}
    for i, word, _ in sorted(best, key=lambda item: -item[2]):
        if stopwords is not None and not stopwords.allows(text.words[i].text):
            continue
        changes[i] = word
        candidate = text.replace(changes)
        if state.evaluator.reached([candidate])[0]:
            return candidate
    return None


def pwws_search(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
                unk: str = UNK, openattack_order: bool = False) -> str | None:
    """Probability-weighted word saliency: order words by softmax(saliency) x best gain, apply greedily.

    As OpenAttack, except: stopwords are neither scored nor offered candidates
    (OpenAttack queries them and then skips them; the softmax denominator is shared,
    so the order of the other words is the same); words without candidates are not
    re-sent; all candidates of all words are scored in one batch. ``openattack_order``
    restores OpenAttack's order of work and queries (:func:`_pwws_openattack_order`).
    """
    if openattack_order:
        return _pwws_openattack_order(state, transformation, stopwords, unk)
    candidates = substitute_lists(state, transformation, stopwords)
    positions = [i for i, cands in enumerate(candidates) if cands]
    if not positions:
        return None
    base, unk_gains = leave_one_out_gain(state, positions, unk)
    saliency = unk_gains - base
    weights = np.exp(saliency - saliency.max())
    weights /= weights.sum()
    texts = [state.text.replace({i: c}) for i in positions for c in candidates[i]]
    gains = state.evaluator.gain(texts)
    best: list[tuple[int, str, float]] = []
    cursor = 0
    for k, i in enumerate(positions):
        block = gains[cursor:cursor + len(candidates[i])]
        cursor += len(candidates[i])
        j = int(np.argmax(block))
        best.append((i, candidates[i][j], float(weights[k] * (block[j] - base))))
    best.sort(key=lambda item: -item[2])
    changes: dict[int, str] = {}
    for i, word, _ in best:
        changes[i] = word
        candidate = state.text.replace(changes)
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
        texts = [state.text.replace(t) for t in trials]
        probs = state.evaluator.probs(texts)
        reached = state.evaluator.goal.reached(probs)
        if reached.any():
            return texts[int(np.argmax(reached))]
        trial_gains = state.evaluator.goal.gain(probs)
        j = int(np.argmax(trial_gains))
        if trial_gains[j] > current:
            changes, current = trials[j], float(trial_gains[j])
    return None


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

def _pso_openattack_order(state: SearchState, candidates: list[list[str]], select: np.ndarray,
                          population: int, iterations: int) -> str | None:
    """PSO as OpenAttack 2.1.1 runs it (the ``openattack_bests`` option), bugs and random draws included.

    Its bests start at -1 (untargeted, minimising a probability) or 100 (targeted,
    maximising one), so no score ever beats them: the global best stays the first
    particle, and the personal bests are the population list itself until the first
    mutation replaces that list (then they stay as it was). Draws come from numpy's
    legacy generator in OpenAttack's order; each swarm state is one batch.
    """
    original = list(state.text.tokens)
    n = len(original)
    rng, evaluator, goal = legacy_rng(state.rng), state.evaluator, state.evaluator.goal
    pop: list[list[str]] = []
    for _ in range(population):
        position = int(rng.choice(n, 1, p=select)[0])
        word = candidates[position][int(rng.randint(0, len(candidates[position]), size=1)[0])]
        pop.append(original[:position] + [word] + original[position + 1:])
    personal, best = pop, pop[0]
    velocity = [[v] * n for v in (rng.uniform(-3, 3) for _ in range(population))]

    def assess() -> str | None:
        texts = [state.text.with_words(m) for m in pop]
        probs = evaluator.probs(texts)
        ranks = np.argsort(probs[:, goal.target])
        top = int(ranks[::-1][0] if goal.targeted else ranks[0])
        return texts[top] if goal.reached(probs[top:top + 1])[0] else None

    def turn(source: list[str], target: list[str], prob: list[float]) -> list[str]:
        return [s if rng.uniform() < p else t for s, t, p in zip(source, target, prob)]

    for step in range(iterations):
        found = assess()
        if found is not None:
            return found
        omega = (0.8 - 0.2) * (iterations - step) / iterations + 0.2
        c1 = 0.8 - step / iterations * (0.8 - 0.2)
        c2 = 0.2 + step / iterations * (0.8 - 0.2)
        for k in range(population):
            for d in range(n):
                velocity[k][d] = omega * velocity[k][d] + (1 - omega) * (
                    (-3 if pop[k][d] == personal[k][d] else 3) + (-3 if pop[k][d] == best[d] else 3))
            prob = [1 / (1 + np.exp(-v)) for v in velocity[k]]
            if rng.uniform() < c1:
                pop[k] = turn(personal[k], pop[k], prob)
            if rng.uniform() < c2:
                pop[k] = turn(best, pop[k], prob)
        found = assess()
        if found is not None:
            return found
        mutated = []
        for member in pop:
            changed = float(np.sum(np.array(member) != np.array(original))) / float(n)
            if rng.uniform() < 1 - 2 * changed:
                position = int(rng.choice(n, 1, p=select)[0])
                while member[position] != original[position] and \
                        sum(a != b for a, b in zip(original, member)) < np.sum(np.sign(select)):
                    position = int(rng.choice(n, 1, p=select)[0])
                replace = candidates[position]
                member = member[:position] + [replace[int(rng.randint(0, len(replace), size=1)[0])]] + member[position + 1:]
            mutated.append(member)
        pop = mutated
    return None


def pso_search(state: SearchState, transformation: WordTransformation, stopwords: Stopwords | None,
               population: int = 20, iterations: int = 20, openattack_bests: bool = False) -> str | None:
    """Discrete particle swarm over word substitutions with OpenAttack's defaults (20 x 20).

    As OpenAttack's PSOAttacker (WordNet candidates by default, at most 10 counted per
    word for position sampling, inertia 0.8 -> 0.2, C1 0.8 -> 0.2, C2 0.2 -> 0.8),
    fixing two bugs: OpenAttack starts the best score of an untargeted attack at -1
    while minimising a probability, so the global and personal bests never update,
    and its personal bests alias the population list, so they are overwritten by
    every move. Here bests start at -infinity of the goal gain and are copies. Each
    swarm state is scored in one batch; no text is sent twice (OpenAttack's PSO does
    not re-send either). ``openattack_bests`` runs :func:`_pso_openattack_order` instead.
    """
    original = tuple(state.text.tokens)
    n = len(original)
    candidates = substitute_lists(state, transformation, stopwords, keep_self=openattack_bests)
    select = _chooser(candidates, cap=10)
    if select is None:
        return None
    if openattack_bests:
        return _pso_openattack_order(state, candidates, select, population, iterations)
    rng, evaluator, goal = state.rng, state.evaluator, state.evaluator.goal

    def text_of(words: Sequence[str]) -> str:
        return state.text.with_words(list(words))

    pop: list[tuple[str, ...]] = []
    for _ in range(population):
        position = int(rng.choice(n, p=select))
        word = candidates[position][int(rng.integers(len(candidates[position])))]
        pop.append(original[:position] + (word,) + original[position + 1:])
    personal = list(pop)
    personal_gain = np.full(population, -np.inf)
    best, best_gain = pop[0], -np.inf
    velocity = np.repeat(rng.uniform(-3, 3, size=population)[:, None], n, axis=1)

    def assess() -> str | None:
        nonlocal best, best_gain
        texts = [text_of(m) for m in pop]
        probs = evaluator.probs(texts)
        gains = goal.gain(probs)
        top = int(np.argmax(gains))
        if gains[top] > best_gain:
            best, best_gain = pop[top], float(gains[top])
        for k in range(population):
            if gains[k] > personal_gain[k]:
                personal[k], personal_gain[k] = pop[k], gains[k]
        return texts[top] if goal.reached(probs[top:top + 1])[0] else None

    def turn(source: tuple[str, ...], target: tuple[str, ...], prob: np.ndarray) -> tuple[str, ...]:
        coins = rng.uniform(size=n)
        return tuple(s if c < p else t for s, t, c, p in zip(source, target, coins, prob))

    for step in range(iterations):
        found = assess()
        if found is not None:
            return found
        omega = (0.8 - 0.2) * (iterations - step) / iterations + 0.2
        c1 = 0.8 - step / iterations * (0.8 - 0.2)
        c2 = 0.2 + step / iterations * (0.8 - 0.2)
        for k in range(population):
            differs_personal = np.array([a != b for a, b in zip(pop[k], personal[k])])
            differs_best = np.array([a != b for a, b in zip(pop[k], best)])
            velocity[k] = omega * velocity[k] + (1 - omega) * (
                np.where(differs_personal, 3.0, -3.0) + np.where(differs_best, 3.0, -3.0))
            prob = 1.0 / (1.0 + np.exp(-velocity[k]))
            if rng.uniform() < c1:
                pop[k] = turn(personal[k], pop[k], prob)
            if rng.uniform() < c2:
                pop[k] = turn(best, pop[k], prob)
        found = assess()
        if found is not None:
            return found
        for k in range(population):
            changed = sum(a != b for a, b in zip(pop[k], original)) / n
            if rng.uniform() < 1 - 2 * changed:
                position = int(rng.choice(n, p=select))
                while pop[k][position] != original[position] and \
                        sum(a != b for a, b in zip(pop[k], original)) < np.count_nonzero(select):
                    position = int(rng.choice(n, p=select))
                word = candidates[position][int(rng.integers(len(candidates[position])))]
                pop[k] = pop[k][:position] + (word,) + pop[k][position + 1:]
    return None
