"""Alzantot et al.'s genetic search."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from bodega.attacks.searches.common import (SearchState, admitted_words, chooser, legacy_rng, pick_position, preference,
                                            substitute_lists)
from bodega.attacks.transformations import WordTransformation


def genetic_search(state: SearchState, transformation: WordTransformation, population: int = 20,
                   generations: int = 20, openattack_order: bool = False) -> str | None:
    """Alzantot et al.'s genetic search with OpenAttack's defaults (20 x 20, WordNet candidates).

    As OpenAttack, except: the perturbations of a whole generation are scored in one
    batch, and no text is sent twice (OpenAttack re-sends each parent and each member
    of the population, about three times the unique texts; the ``reask`` option restores
    that). Each perturbation's candidates pass the state's rules on top of the member's changes.
    ``openattack_order`` draws from numpy's legacy generator (:func:`legacy_rng`)
    in OpenAttack's order, so both backends give the same text and queries.
    """
    original = tuple(state.text.tokens)
    candidates = substitute_lists(state, transformation, keep_self=openattack_order)
    select = chooser(candidates)
    if select is None:
        return None
    rng, evaluator = (legacy_rng(state.rng) if openattack_order else state.rng), state.evaluator
    goal = evaluator.goal

    def text_of(words: Sequence[str]) -> str:
        return state.text.with_words(list(words))

    def perturb(members: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
        trials: list[list[tuple[str, ...]]] = []
        for member in members:
            position = pick_position(rng, member, original, select)
            words = admitted_words(state, member, position,
                                   [w for w in candidates[position] if w != original[position]])
            options = [member[:position] + (w,) + member[position + 1:] for w in words]
            trials.append(options)
        flat: list[str] = []
        for member, options in zip(members, trials):
            flat += [text_of(t) for t in options] + [text_of(member)] if options else []
        scores = preference(goal, evaluator.probs(flat))
        out, cursor = [], 0
        for member, options in zip(members, trials):
            if not options:
                out.append(member)
                continue
            block = scores[cursor:cursor + len(options)] - scores[cursor + len(options)]
            cursor += len(options) + 1
            out.append(options[int(np.argmax(block))] if block.max() > 0 else member)
        return out

    pop = perturb([original] * population)
    for _ in range(generations):
        texts = [text_of(m) for m in pop]
        probs = evaluator.probs(texts)
        top = int(np.argmax(preference(goal, probs)))
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
