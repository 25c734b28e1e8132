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
original text). The as-run forms are :mod:`bodega.attacks.bert_attack_as_run` and
:mod:`bodega.attacks.bae_as_run`; all four walk the words with :func:`walk_words`, the
as-run ones with OpenAttack's one-at-a-time step (:mod:`bodega.attacks.mlm_as_run`).
"""
from __future__ import annotations

from typing import Callable, Protocol, Sequence

import numpy as np

from bodega.attacks.constraints import Constraint, SentenceEncoder, admitted, modifiable
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


def walk_words(order: Sequence[int], n_words: int, max_change_rate: float, step: WordStep) -> str | None:
    """The loop of BERT-ATTACK and BAE, fixed and as-run: words by importance, a step each.

    Gives up when more than ``int(max_change_rate * n_words)`` words have changed
    (OpenAttack 2.1.1's rule, 0.2). The step is the fixed search's :class:`BatchedStep`
    or the as-run :class:`~bodega.attacks.mlm_as_run.OpenAttackStep`.
    """
    for position in order:
        if step.changed > int(max_change_rate * n_words):
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


def admitted_substitutes(state: SearchState, position: int, changes: dict[int, str], substitutes: list[str],
                         constraints: Sequence[Constraint]) -> list[str]:
    """The substitutes of the word at ``position`` whose change-sets ``constraints`` admit."""
    if not substitutes:
        return substitutes
    passed = admitted(state, position, changes, [{**changes, position: s} for s in substitutes], constraints)
    return [s for s, ok in zip(substitutes, passed) if ok]


def bert_attack_search(state: SearchState, mlm: MaskedLM, constraints: Sequence[Constraint] = (), k: int = 36,
                       max_change_rate: float = 0.2, threshold: float | None = None,
                       unk: str = MLM_UNK) -> str | None:
    """BERT-ATTACK (Li et al. 2020): masked-LM predictions on the unmasked text as candidates.

    Words by importance (masking with ``unk``); for each, the ``k`` best single-token
    predictions at its position (no sub-word combinations); the first candidate in the
    masked LM's order that flips the victim wins, else the one that moves it most is kept.
    Gives up when more than ``max_change_rate`` of the words would change (OpenAttack 2.1.1's 0.2).
    ``constraints`` decide which words are ranked and which substitutes are tried.
    """
    if len(state.text) == 0:
        return None
    predictions = mlm.word_predictions(state.text, k)
    positions = [i for i in modifiable(state, constraints) if predictions[i]]
    order = importance_order(state, positions, unk)

    def screen(position: int, changes: dict[int, str]):
        word = state.text.words[position].text
        substitutes = word_substitutes(predictions[position], word, threshold)
        return admitted_substitutes(state, position, changes, substitutes, constraints), None
    return walk_words(order, len(state.text), max_change_rate, BatchedStep(state, screen))


def bae_search(state: SearchState, mlm: MaskedLM, encoder: SentenceEncoder, constraints: Sequence[Constraint] = (),
               k: int = 50, max_change_rate: float = 0.2,
               similarity_threshold: float = 0.936, threshold: float | None = None,
               unk: str = MLM_UNK) -> str | None:
    """BAE-R (Garg and Ramakrishnan 2020), OpenAttack's default replace-only variant.

    Each important word is masked and the masked LM's ``k`` best fillers are filtered by
    part of speech and by sentence similarity to the original text (cosine of the
    profile's sentence encoder at least ``similarity_threshold``, OpenAttack's 0.936 for
    the Universal Sentence Encoder); of the fillers that flip the victim, the most similar
    text wins, else the filler that moves it most is kept. Gives up when more than
    ``max_change_rate`` of the words would change (OpenAttack's 0.2). ``constraints`` (the recipe's: filter
    words, part-of-speech agreement) decide which words are ranked and which fillers are kept.
    """
    if len(state.text) == 0:
        return None
    positions = modifiable(state, constraints)
    order = importance_order(state, positions, unk)
    fillers = mlm.masked_predictions(state.text, order, k)
    reference = encoder.encode([state.text.text])[0]

    def screen(position: int, changes: dict[int, str]):
        substitutes = word_substitutes(fillers.get(position, []), state.text.words[position].text, threshold)
        substitutes = admitted_substitutes(state, position, changes, substitutes, constraints)
        if not substitutes:
            return [], None
        similarity = encoder.encode([state.text.replace({**changes, position: s}) for s in substitutes]) @ reference
        keep = similarity >= similarity_threshold
        similarity = similarity[keep]
        return [s for s, ok in zip(substitutes, keep) if ok], \
            (lambda reached: int(np.argmax(np.where(reached, similarity, -2))))
    return walk_words(order, len(state.text), max_change_rate, BatchedStep(state, screen))
