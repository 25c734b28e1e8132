"""Segmentation, normalisation, sentence alignment and the character score, as BODEGA defines them.

BODEGA compares texts after ``normalise_for_lev`` (lower-cased, newlines to spaces,
OpenAttack's ``PunctTokenizer`` tokens re-joined by single spaces:
``bodega.scoring.punct``); the character score is one minus the Levenshtein distance
over the longer length. Each original sentence is aligned to the adversarial sentence
at the smallest normalised distance (first on ties). Here every sentence is normalised
once, exact matches are found by a dictionary lookup and other pairs are pruned with a
length bound and a distance cutoff, which gives the same alignment as comparing every
pair. Sentences come from ``bodega.scoring.segmenter`` (NLTK's English punkt, exactly,
but faster; BODEGA used LAMBO); the adversarial text of a pair reuses its original's
segmentation work and normalised sentences through memos that live for that pair only.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Iterable, Iterator

import Levenshtein

from bodega.scoring.punct import normalise_for_lev
from bodega.scoring.segmenter import Segmenter
from bodega.tasks import get_task

PAIR_CHARACTER = "~"
"""BODEGA splits an FC text into units at every ``~`` (``segment_sentences``)."""


def normalised_distance(a: str, b: str) -> float:
    """Levenshtein distance over the longer length of two already normalised strings.

    The hint (an expected distance) only speeds up the exact computation: attacks
    change a few percent of a text, so a narrow band usually suffices.
    """
    longest = max(len(a), len(b))
    if longest == 0:
        return 0.0
    hint = max(abs(len(a) - len(b)), longest // 20, 1)
    return Levenshtein.distance(a, b, score_hint=hint) / longest


def character_similarity(original: str, adversarial: str) -> float:
    """BODEGA's character score: 1 - Levenshtein / max length, on normalised text."""
    return 1.0 - normalised_distance(normalise_for_lev(original), normalise_for_lev(adversarial))


def split_sentences(text: str, segmenter: Segmenter | None = None) -> list[str]:
    """Sentences of a multi-sentence text: lines first, then NLTK's punkt within each line.

    BODEGA used the LAMBO segmenter, whose model is not installable offline; punkt is
    the documented substitute (``bodega.scoring.segmenter``, a faster exact copy of
    NLTK's English punkt). Empty pieces are dropped, so a blank text has no sentence.
    Pass the same ``segmenter`` for both texts of a pair: the adversarial text then
    reuses the original's unchanged lines and boundary decisions.
    """
    segmenter = segmenter or Segmenter()
    return [piece for line in text.splitlines() if line.strip() for piece in segmenter.sentences(line)]


def segment(task: str, text: str, segmenter: Segmenter | None = None) -> list[str]:
    """BODEGA's units of a text: PR2 whole, FC split at every ``~``, HN/RD sentences (maybe none)."""
    mode = get_task(task).segmentation
    if mode == "whole":
        return [text]
    if mode == "pair":
        return text.split(PAIR_CHARACTER)
    return split_sentences(text, segmenter)


def align(original: list[str], adversarial: list[str]) -> list[int]:
    """For each normalised original sentence, the index of the closest normalised adversarial one.

    Closest = smallest Levenshtein distance over the longer length; the first index wins
    ties. Equivalent to comparing every pair, but exact matches are a dictionary lookup;
    otherwise the sentence after the previous match is tried first (attacks keep the
    order), which gives a tight bound; only candidates whose length difference alone does
    not exceed it are compared (found by bisection in the sentences sorted by length),
    and the C distance stops early once a pair cannot win.
    """
    if not adversarial:
        raise ValueError("cannot align to an empty list of adversarial sentences")
    if len(adversarial) == 1:
        return [0] * len(original)
    first_index: dict[str, int] = {}
    for j, sentence in enumerate(adversarial):
        first_index.setdefault(sentence, j)
    lengths = [len(s) for s in adversarial]
    by_length: list[int] = []
    alignment: list[int] = []
    for sentence in original:
        exact = first_index.get(sentence)
        if exact is None:
            if not by_length:
                by_length = sorted(range(len(adversarial)), key=lengths.__getitem__)
            hint = min(alignment[-1] + 1, len(adversarial) - 1) if alignment else 0
            exact = _closest(sentence, adversarial, lengths, hint, by_length)
        alignment.append(exact)
    return alignment


def _closest(sentence: str, candidates: list[str], lengths: list[int], hint: int,
             by_length: list[int]) -> int:
    """First index of the smallest distance / longest length, exactly, in integer arithmetic.

    ``by_length`` lists the candidates' indices in order of length.
    """
    n = len(sentence)
    # The best so far is the ratio num / den at index best; start from the hinted candidate.
    best, den = hint, max(n, lengths[hint])
    if den == 0:
        return _first_empty(lengths)
    num = Levenshtein.distance(sentence, candidates[hint], score_hint=max(abs(n - lengths[hint]), 1))
    pool: Iterable[int] = by_length
    nearest_first = num < den
    if nearest_first:
        # Length L can reach num / den only if |n - L| / max(n, L) <= num / den, that is
        # n (den - num) / den <= L <= n den / (den - num). Those lengths are tried nearest
        # first, so the bound only grows and the first one past the best ends the search.
        key = lengths.__getitem__
        shortest, longest = -(-n * (den - num) // den), n * den // (den - num)
        pool = _nearest_first(by_length, lengths, n, bisect_left(by_length, shortest, key=key),
                              bisect_right(by_length, longest, key=key))
    for j in pool:
        if j == hint:
            continue
        candidate = candidates[j]
        longest = max(n, lengths[j])
        if longest == 0:  # both empty: distance 0
            if num > 0 or j < best:
                best, num, den = j, 0, 1
            continue
        # j wins with ratio d / longest if it is smaller, or equal and j comes first.
        earlier = j < best
        limit = num * longest  # compare d * den with limit
        lower = abs(n - lengths[j])
        if lower * den > limit and nearest_first:
            break
        if lower * den > limit or (lower * den == limit and not earlier):
            continue
        cutoff = limit // den if earlier else -(-limit // den) - 1
        distance = Levenshtein.distance(sentence, candidate, score_cutoff=cutoff)
        if distance > cutoff:
            continue
        if distance * den < limit or (distance * den == limit and earlier):
            best, num, den = j, distance, longest
    return best


def _nearest_first(by_length: list[int], lengths: list[int], n: int, low: int, high: int) -> Iterator[int]:
    """``by_length[low:high]`` in order of |n - L| / max(n, L) (n > 0): lengths nearest n first."""
    up = bisect_left(by_length, n, low, high, key=lengths.__getitem__)
    down = up - 1
    while down >= low or up < high:
        if up < high and (down < low or (lengths[by_length[up]] - n) * n
                          <= (n - lengths[by_length[down]]) * lengths[by_length[up]]):
            yield by_length[up]
            up += 1
        else:
            yield by_length[down]
            down -= 1


def _first_empty(lengths: list[int]) -> int:
    return lengths.index(0)


@dataclass(frozen=True)
class AlignedText:
    """A text's units (raw), their ``normalise_for_lev`` forms and the whole text's form."""

    segments: list[str]
    normalised: list[str]
    whole: str


def prepare(task: str, text: str, segmenter: Segmenter | None = None,
            normalised: dict[str, str] | None = None) -> AlignedText:
    """Segment once and normalise each unit (and the whole text) once.

    ``normalised`` maps a unit to its normalised form: an adversarial text repeats most
    sentences of its original, which then need no normalising again. The segmenter's
    memo of punkt decisions serves the normalisation too (its contexts are plain strings).
    """
    segmenter = segmenter or Segmenter()
    segments = segment(task, text, segmenter)
    known = {} if normalised is None else normalised
    forms = []
    for unit in segments:
        form = known.get(unit)
        if form is None:
            form = known[unit] = normalise_for_lev(unit, segmenter)
        forms.append(form)
    whole = forms[0] if len(segments) == 1 and segments[0] == text else normalise_for_lev(text, segmenter)
    return AlignedText(segments, forms, whole)


def character_score(source: AlignedText, target: AlignedText) -> float:
    """The character score of two prepared texts (no normalising again)."""
    return 1.0 - normalised_distance(source.whole, target.whole)


def prepare_pair(task: str, original: str, adversarial: str,
                 segmenter: Segmenter | None = None) -> tuple[AlignedText, AlignedText]:
    """Both texts prepared, the adversarial one reusing the original's segmentation work and
    normalised sentences (memos that live for this pair only)."""
    segmenter, normalised = segmenter or Segmenter(), {}
    return (prepare(task, original, segmenter, normalised),
            prepare(task, adversarial, segmenter, normalised))


def align_texts(task: str, original: str, adversarial: str) -> list[tuple[str, str | None]]:
    """(original unit, aligned adversarial unit) pairs, raw text, in original order.

    An adversarial text without units (a blank HN or RD text) aligns nothing: None, as in
    BODEGA. An original without units is taken whole (where BODEGA would divide by zero).
    """
    source, target = prepare_pair(task, original, adversarial)
    segments = source.segments or [original]
    if not target.segments:
        return [(s, None) for s in segments]
    indices = align(source.normalised or [source.whole], target.normalised)
    return [(s, target.segments[j]) for s, j in zip(segments, indices)]
