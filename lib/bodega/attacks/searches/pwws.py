"""PWWS's search: probability-weighted word saliency, then substitutions applied greedily."""
from __future__ import annotations

from functools import partial

import numpy as np

from bodega.attacks.evaluation import Lookahead
from bodega.attacks.searches.common import UNK, SearchState, preference, substitute_lists
from bodega.attacks.transformations import WordTransformation


def _pwws_options(state: SearchState, transformation: WordTransformation, openattack_order: bool) -> list[list[str]]:
    """Each token's candidates: OpenAttack's for every token (unmodifiable ones too), else :func:`substitute_lists`."""
    if not openattack_order:
        return substitute_lists(state, transformation)
    return [state.constraints.passing(state, i, [c for c in transformation(state.text, i, state.pos[i])
                                                 if c != word.text])
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


def pwws_search(state: SearchState, transformation: WordTransformation, unk: str = UNK,
                openattack_order: bool = False) -> str | None:
    """Probability-weighted word saliency: order words by softmax(saliency) x best gain, apply greedily.

    As OpenAttack, except: words that the state's rules leave unmodifiable (filter words) are neither scored nor
    offered candidates
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
    value = partial(preference, goal) if openattack_order else goal.gain
    options = _pwws_options(state, transformation, openattack_order)
    allowed = set(state.constraints.modifiable(state))
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
        if i not in allowed or not state.constraints.admitted(state, i, changes, [{**changes, i: word}])[0]:
            continue
        changes[i] = word
        candidates.append(state.text.replace(changes))
    lookahead = Lookahead(state.evaluator.prefetch, candidates)
    for k, candidate in enumerate(candidates):
        lookahead(k)
        if state.evaluator.reached([candidate])[0]:
            return candidate
    return None
