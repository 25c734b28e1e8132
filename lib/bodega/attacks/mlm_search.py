"""BERT-ATTACK and BAE-R searches over the attack framework's parts (evaluator, stopwords, similarity).

Both follow OpenAttack 2.1.1 as BODEGA ran it, with these differences, named here once:
the text keeps its case and spacing (OpenAttack lower-cases it and re-joins words with
single spaces) and substitutes take the case of the word they replace; every word is
ranked for importance (OpenAttack's BERT-ATTACK never masks the last word and its BAE
inserts the unknown token *after* each word instead of replacing it); all candidates of
one word go to the victim in one batch (OpenAttack sends them one by one and stops at
the first success, so its query counts can be lower); the masked LM is called once for
all positions (BAE masks each word of the original text in one batch, where OpenAttack
re-runs the masked LM for each word, masking sub-word position word index + 1 of the
original text). Their rules (filter words, the change-rate cap, BAE's part of speech and
sentence similarity) are the recipe's constraints, asked through the search state. The as-run
forms are :mod:`bodega.attacks.bert_attack_as_run` and :mod:`bodega.attacks.bae_as_run`;
all four walk the words with :func:`walk_words`, the as-run ones with OpenAttack's
one-at-a-time step (:mod:`bodega.attacks.mlm_as_run`).
"""
from __future__ import annotations

from typing import Callable, Protocol, Sequence

import numpy as np

from bodega.attacks.constraints import TextSimilarity
from bodega.attacks.searches.common import SearchState, best_trial
from bodega.mlm.model import Candidate, MaskedLM
from bodega.text import match_case

MLM_UNK = "[UNK]"
"""BERT's unknown token: what OpenAttack's BERT-ATTACK and BAE put in place of a word to rank it."""


def importance_order(state: SearchState, positions: Sequence[int], unk: str = MLM_UNK) -> list[int]:
    """Positions by BERT-ATTACK's importance: drop of the original class, plus the gain of a flip."""
    if not positions:
        return []
    probs = state.evaluator.probs([state.text.replace({i: unk}) for i in positions] + [state.text.text])
    original, leave = probs[-1], probs[:-1]
    label = int(np.argmax(original))
    moved = np.argmax(leave, axis=1)
    score = original[label] - leave[:, label] + (moved != label) * (leave.max(axis=1) - original[moved])
    return [positions[k] for k in sorted(range(len(positions)), key=lambda k: -score[k])]


def word_substitutes(candidates: list[Candidate], original: str, threshold: float | None) -> list[str]:
    """Whole-word candidates other than the word, best first, in the word's case.

    ``threshold`` drops candidates whose logit is below it (the reference stops at the
    first such candidate; the list is sorted, so it is the same).
    """
    out: list[str] = []
    seen = {original.lower()}
    for candidate in candidates:
        if threshold is not None and candidate.score < threshold:
            break
        token = candidate.token
        if token.startswith("##") or not token.isalpha() or token.lower() in seen:
            continue
        seen.add(token.lower())
        out.append(match_case(original, token))
    return out


class WordStep(Protocol):
    """One word of the greedy walk: try its substitutes, keep a move, return a success."""

    changed: int  # words changed so far

    def __call__(self, position: int) -> str | None: ...


def walk_words(order: Sequence[int], step: WordStep, give_up: Callable[[int], bool] | None = None) -> str | None:
    """The loop of BERT-ATTACK and BAE, fixed and as-run: words by importance, a step each, until one succeeds.

    The fixed searches' :class:`BatchedStep` leaves the change-rate cap to the recipe's
    constraint; the as-run :class:`~bodega.attacks.mlm_as_run.OpenAttackStep` passes ``give_up``
    (asked with the words changed so far before each word), since OpenAttack counts only kept moves.
    """
    for position in order:
        if give_up is not None and give_up(step.changed):
            return None
        found = step(position)
        if found is not None:
            return found
    return None


Screen = Callable[[int, dict[int, str]], tuple[list[str], Callable[[np.ndarray], int] | None]]


class BatchedStep:
    """A word's screened substitutes in one victim call (:func:`~bodega.attacks.searches.common.best_trial`).

    ``screen(position, changes)`` gives the substitutes to try and how to choose among
    those that reach the goal (None: the first). A success ends the attack, otherwise the
    substitute that moves the victim most is kept if it improves on the current text.
    """

    def __init__(self, state: SearchState, screen: Screen):
        self.state, self.screen = state, screen
        self.changes: dict[int, str] = {}
        self.current = float(state.evaluator.gain([state.text.text])[0])

    @property
    def changed(self) -> int:
        """How many words the kept text has changed."""
        return len(self.changes)

    def __call__(self, position: int) -> str | None:
        substitutes, choose = self.screen(position, self.changes)
        if not substitutes:
            return None
        trials = [{**self.changes, position: s} for s in substitutes]
        found, self.changes, self.current = best_trial(self.state, self.changes, trials, self.current, choose)
        return found


def bert_attack_search(state: SearchState, mlm: MaskedLM, k: int = 36, threshold: float | None = None,
                       unk: str = MLM_UNK) -> str | None:
    """BERT-ATTACK (Li et al. 2020): masked-LM predictions on the unmasked text as candidates.

    Words by importance (masking with ``unk``); for each, the ``k`` best single-token
    predictions at its position (no sub-word combinations); the first candidate in the
    masked LM's order that flips the victim wins, else the one that moves it most is kept.
    The state's rules (the recipe's: filter words, at most ``int(0.2 * words) + 1`` changes as
    OpenAttack 2.1.1 counts them) decide which words are ranked and which substitutes are tried.
    """
    if len(state.text) == 0:
        return None
    predictions = mlm.word_predictions(state.text, k)
    positions = [i for i in state.constraints.modifiable(state) if predictions[i]]
    order = importance_order(state, positions, unk)

    def screen(position: int, changes: dict[int, str]):
        word = state.text.words[position].text
        substitutes = word_substitutes(predictions[position], word, threshold)
        return state.constraints.passing(state, position, substitutes, changes), None
    return walk_words(order, BatchedStep(state, screen))


def bae_search(state: SearchState, mlm: MaskedLM, similarity: TextSimilarity, k: int = 50,
               threshold: float | None = None, unk: str = MLM_UNK) -> str | None:
    """BAE-R (Garg and Ramakrishnan 2020), OpenAttack's default replace-only variant.

    Each important word is masked and the masked LM's ``k`` best fillers are kept when the
    state's rules admit them (the recipe's: filter words, the change-rate cap, part of speech,
    and ``similarity``, the whole text's similarity to the original, OpenAttack's 0.936 for the
    Universal Sentence Encoder); of the fillers that flip the victim, the most similar text by
    ``similarity`` wins, else the filler that moves it most is kept.
    """
    if len(state.text) == 0:
        return None
    order = importance_order(state, state.constraints.modifiable(state), unk)
    fillers = mlm.masked_predictions(state.text, order, k)

    def screen(position: int, changes: dict[int, str]):
        substitutes = word_substitutes(fillers.get(position, []), state.text.words[position].text, threshold)
        substitutes = state.constraints.passing(state, position, substitutes, changes)
        if not substitutes:
            return [], None
        scores = similarity.scores(state, [{**changes, position: s} for s in substitutes])
        return substitutes, (lambda reached: int(np.argmax(np.where(reached, scores, -2))))
    return walk_words(order, BatchedStep(state, screen))
