"""The search OpenAttack 2.1.1's BERT-ATTACK and BAE share, as BODEGA ran them (the ``fidelity="as-run"`` forms).

Both lower-case the text and split it on single spaces (newlines deleted; the original
is asked lower-cased, newlines kept), soft-max the victim's probabilities again, rank
all words but the last by importance with ``[UNK]`` (:class:`OpenAttackMaskedLM`'s
``unknown_after``: BERT-ATTACK puts it in place of the word, BAE after it), and then walk
the words by importance: the candidates of a word are asked one at a time, the first
success ends the attack, and a word whose candidates all fail keeps the one that moved
the victim most, or else the last candidate written into the current words (the trial
list aliases them: "candidate aliasing"); the attack gives up after more than
``int(0.2 * words)`` changes. A user's constraints (``bodega.attack(..., constraints=...)``) are asked
on top of OpenAttack's own rules, on the lower-cased words: which words may change, which candidates pass
(with the words already written). What differs between the two (where candidates come from,
which ones are asked) is the subclasses' :meth:`~OpenAttackMaskedLM._word_candidates`
and :meth:`~OpenAttackMaskedLM._screen`. The candidates of a word are asked one at a
time because the first success stops the attack: a batch would ask, and count, texts
that OpenAttack never asked; a batch-invariant victim computes them ahead instead
(:class:`~bodega.attacks.evaluation.Lookahead`), without their being asked.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from bodega.attacks.constraints import ConstraintSet
from bodega.attacks.evaluation import Evaluator, Lookahead
from bodega.attacks.goal import Goal
from bodega.attacks.mlm_search import walk_words
from bodega.attacks.result import AttackResult
from bodega.attacks.searches.common import SearchState, admitted_words
from bodega.text import TokenizedText, Word

UNKNOWN = "[UNK]"


@dataclass
class OpenAttackMaskedLM:
    """The shared part of :class:`~bodega.attacks.bert_attack_as_run.BertAttackAsRun` and
    :class:`~bodega.attacks.bae_as_run.BaeAsRun`: the masked LM, the victim's re-softmaxed
    probabilities and the importance ranking; the walk over the words is the fixed
    searches' :func:`~bodega.attacks.mlm_search.walk_words` with :class:`OpenAttackStep`."""

    mlm_path: str
    filter_words: frozenset[str]
    max_length: int = field(default=512, kw_only=True)
    max_change_rate: float = field(default=0.2, kw_only=True)
    constraints: ConstraintSet = field(default_factory=ConstraintSet, kw_only=True)
    """Rules on top of OpenAttack's (none of its own: its filter words, part of speech and similarity are
    OpenAttack's code here)."""
    _model: Any = field(default=None, init=False, repr=False)
    unknown_after = False  # BAE inserts [UNK] after the word instead of replacing it

    def warm_up(self) -> None:
        """Load the masked LM now, so that the first example is not charged for it."""
        self._load()

    def _load(self):
        if self._model is None:
            from bodega.mlm.model import load_masked_lm

            self._model = load_masked_lm(self.mlm_path, openattack_classes=True)
        return self._model

    def _word_candidates(self, words: list[str]) -> Callable[[int], list[str]]:
        """The masked LM's candidate tokens for the word at an index (before any filter)."""
        raise NotImplementedError

    def _screen(self, final: list[str], index: int, fillers: list[str], texts: list[str],
                original: str) -> tuple[list[str], list[str], np.ndarray]:
        """Which candidates are written into the current words, and which of those are asked (all here)."""
        return fillers, texts, np.ones(len(fillers), dtype=bool)

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        """OpenAttack's walk: lower-case and split on spaces, rank words by leave-one-out, try them in order."""
        torch, tokenizer, _ = self._load()

        def probs(texts: list[str]):
            return torch.softmax(torch.Tensor(np.asarray(victim.predict_proba(texts))), -1)

        seq = text.lower()
        words = seq.replace("\n", "").split(" ")
        after = int(self.unknown_after)
        probes = [" ".join(words[:i + after] + [UNKNOWN] + words[i + 1:]) for i in range(len(words) - 1)]
        answers = probs([seq] + probes)  # OpenAttack asks the original, then the probes: the same texts
        orig_probs, leave = answers[0], answers[1:]
        current_prob = orig_probs.max()
        moved = torch.argmax(leave, dim=-1)
        importance = (current_prob - leave[:, goal.target] + (moved != goal.target).float()
                      * (leave.max(dim=-1)[0] - torch.index_select(orig_probs, 0, moved))).numpy()
        order = [index for index, _ in sorted(enumerate(importance), key=lambda item: item[1], reverse=True)]
        candidates = self._word_candidates(words)
        state = SearchState(_spaced(words), ["other"] * len(words), Evaluator(victim, goal, reask=True), rng,
                            self.constraints)
        self.constraints.prepare(state)
        step = OpenAttackStep(words, candidates, self.filter_words, self._screen, seq, current_prob, goal, probs,
                              tokenizer, torch, state, prefetch=getattr(victim, "prefetch", None))
        cap = int(self.max_change_rate * len(words))
        adversarial = walk_words(order, step, give_up=lambda changed: changed > cap)
        return AttackResult(adversarial, adversarial is not None)


class OpenAttackStep:
    """A word as OpenAttack 2.1.1's BERT-ATTACK and BAE try it: candidates asked one at a time, first success wins
    (``prefetch``, the accountant's, computes the next ones ahead without asking them); ``state`` holds the
    words as a text and the user's rules, which may refuse a word or a candidate before OpenAttack's own.

    Every screened candidate is written into the current words (candidate aliasing), asked
    or not; a word whose candidates all fail keeps the one with the largest drop of the
    target class's probability from ``current_prob`` (which then falls by that drop),
    else the last candidate written.
    """

    def __init__(self, words: list[str], candidates: Callable[[int], list[str]], filter_words: frozenset[str],
                 screen: Callable, original: str, current_prob, goal: Goal, probs, tokenizer, torch,
                 state: SearchState, prefetch: Callable[[list[str]], int] | None = None):
        self.words, self.candidates, self.filter_words, self.screen = words, candidates, filter_words, screen
        self.state, self.allowed = state, set(state.constraints.modifiable(state))
        self.prefetch = prefetch
        self.original = original
        self.current_prob, self.goal, self.probs, self.tokenizer, self.torch = (current_prob, goal, probs,
                                                                               tokenizer, torch)
        self.final = list(words)
        self.changed = 0

    def __call__(self, index: int) -> str | None:
        words, final, filter_words = self.words, self.final, self.filter_words
        if words[index] in filter_words or index not in self.allowed:
            return None
        fillers = [s for s in self.candidates(index) if s != words[index] and "##" not in s and s not in filter_words]
        fillers = admitted_words(self.state, final, index, fillers)
        texts = [self.tokenizer.convert_tokens_to_string(final[:index] + [s] + final[index + 1:]) for s in fillers]
        fillers, texts, asked = self.screen(final, index, fillers, texts, self.original)
        most_gap, candidate = 0.0, None
        lookahead, k = Lookahead(self.prefetch, [t for t, ask in zip(texts, asked) if ask]), 0
        for substitute, trial, ask in zip(fillers, texts, asked):
            final[index] = substitute  # OpenAttack writes each trial into the current words
            if not ask:
                continue
            lookahead(k)
            k += 1
            trial_probs = self.probs([trial])[0]
            if (int(self.torch.argmax(trial_probs)) == self.goal.target) == self.goal.targeted:
                return trial
            gap = self.current_prob - trial_probs[self.goal.target]
            if gap > most_gap:
                most_gap, candidate = gap, substitute
        if most_gap > 0:
            self.changed += 1
            self.current_prob = self.current_prob - most_gap
            final[index] = candidate
        return None


def _spaced(words: list[str]) -> TokenizedText:
    """OpenAttack's word list as a text of single-spaced words, for the constraints to read."""
    spans, cursor = [], 0
    for word in words:
        spans.append(Word(word, cursor, cursor + len(word)))
        cursor += len(word) + 1
    return TokenizedText(" ".join(words), tuple(spans))
