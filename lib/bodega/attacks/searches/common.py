"""What the searches share: the search state, leave-one-out importance, candidate lists and draws."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from bodega.attacks.constraints import ConstraintSet
from bodega.attacks.evaluation import Evaluator
from bodega.attacks.transformations import WordTransformation
from bodega.text import TokenizedText

UNK = "<UNK>"
("""OpenAttack's default ``token_unk``; the recipes default to BODEGA's ``UNK_TEXT`` """
 """(:mod:`bodega.attacks.filter_words`).""")


@dataclass
class SearchState:
    """Everything a search needs about one attack: the text, its tags, the victim, the draws and the attacker's
    rules (prepared for this text by the framework; a search asks them, never a rule of its own)."""

    text: TokenizedText
    pos: list[str]
    evaluator: Evaluator
    rng: np.random.Generator
    constraints: ConstraintSet = field(default_factory=ConstraintSet)


def leave_one_out_gain(state: SearchState, positions: Sequence[int], unk: str = UNK) -> tuple[float, np.ndarray]:
    """Goal gain of the original and of the text with each position replaced by ``unk`` (one call)."""
    texts = [state.text.replace({i: unk}) for i in positions] + [state.text.text]
    gains = state.evaluator.gain(texts)
    return float(gains[-1]), gains[:-1]


def substitute_lists(state: SearchState, transformation: WordTransformation,
                     keep_self: bool = False) -> list[list[str]]:
    """Candidates for every word, each admitted by the state's rules as a single change of the original text (none
    for a word they leave unmodifiable), without the word itself unless ``keep_self``."""
    allowed = set(state.constraints.modifiable(state))
    out = []
    for i, word in enumerate(state.text.words):
        if i not in allowed:
            out.append([])
            continue
        original = word.text.lower()
        options = [c for c in transformation(state.text, i, state.pos[i]) if keep_self or c.lower() != original]
        out.append(state.constraints.passing(state, i, options))
    return out


def admitted_words(state: SearchState, current: Sequence[str], position: int, words: Sequence[str]) -> list[str]:
    """The ``words`` that may replace word ``position`` of the word list ``current`` (the original's words, some
    changed): those whose change-sets the state's rules admit."""
    changes = {i: w for i, (w, o) in enumerate(zip(current, state.text.tokens)) if w != o and i != position}
    return state.constraints.passing(state, position, words, changes)


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


def chooser(candidates: list[list[str]], cap: int | None = None) -> np.ndarray | None:
    """Position probabilities in proportion to each word's candidates (at most ``cap`` counted); None: none."""
    counts = np.array([min(len(c), cap) if cap else len(c) for c in candidates], dtype=float)
    return counts / counts.sum() if counts.sum() > 0 else None


def pick_position(rng: np.random.Generator, current: Sequence[str], original: Sequence[str],
                   select: np.ndarray) -> int:
    """A position by ``select``; an unmodified one while some modifiable position is still unmodified."""
    modified = sum(a != b for a, b in zip(current, original))
    position = int(rng.choice(len(select), p=select))
    if modified < np.count_nonzero(select):
        while current[position] != original[position]:
            position = int(rng.choice(len(select), p=select))
    return position


def preference(goal, probs: np.ndarray) -> np.ndarray:
    """Higher is better for the attacker, in OpenAttack's arithmetic (the target class's probability, or minus it)."""
    p = np.asarray(probs)[:, goal.target]
    return p if goal.targeted else -p


def legacy_rng(rng: np.random.Generator) -> np.random.RandomState:
    """numpy's legacy generator seeded from the example's one, as the OpenAttack backend seeds numpy's global state."""
    return np.random.RandomState(int(rng.integers(2**32)))
