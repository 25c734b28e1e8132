"""DeepWordBug's search: edit the most important words, one character each."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from bodega.attacks.searches.common import UNK, SearchState, leave_one_out_gain


def _admitted_edits(state: SearchState, edits: Sequence[tuple[int, str]]) -> dict[int, str]:
    """The edits, in the order drawn, each kept when the state's rules admit it on top of those kept before."""
    changes: dict[int, str] = {}
    for i, word in edits:
        if state.constraints.admitted(state, i, changes, [{**changes, i: word}])[0]:
            changes[i] = word
    return changes


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
    Only words that the state's rules leave modifiable are ranked, and an edit they refuse is not made.
    """
    positions = state.constraints.modifiable(state)
    if not positions:
        return None
    if openattack_order:
        from bodega.attacks.transformations import LegacyDraws

        probs = state.evaluator.probs([state.text.replace({i: unk}) for i in positions])[:, state.evaluator.goal.target]
        losses = 1 - probs if state.evaluator.goal.targeted else probs
        draws = LegacyDraws(state.rng)
        edits = [(positions[k], edit(state.text.words[positions[k]].text, draws)) for k in np.argsort(losses)[:power]]
    else:
        _, gains = leave_one_out_gain(state, positions, unk)
        order = np.argsort(-gains, kind="stable")[:power]
        edits = [(positions[k], edit(state.text.words[positions[k]].text, state.rng)) for k in sorted(order)]
    changes = _admitted_edits(state, edits)
    if not changes:
        return None
    candidate = state.text.replace(changes)
    return candidate if state.evaluator.reached([candidate])[0] else None
