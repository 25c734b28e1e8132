"""Segmentation, normalisation, sentence alignment and the character score.

BODEGA compares texts after lower-casing and collapsing whitespace; the character
score is one minus the Levenshtein distance over the longer length. Each original
sentence is aligned to the adversarial sentence at the smallest normalised
distance (first on ties). Here every sentence is normalised once, exact matches are
found by a dictionary lookup and other pairs are pruned with a length bound and a
distance cutoff, which gives the same alignment as comparing every pair. Sentences
come from ``bodega.scoring.segmenter`` (NLTK's English punkt, exactly, but faster); the
adversarial text of a pair reuses its original's segmentation work and normalised
sentences through memos that live for that pair only.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Iterable, Iterator

import Levenshtein

from bodega.scoring.segmenter import Segmenter
from bodega.tasks import PAIR_SEPARATOR, get_task


def normalise(text: str) -> str:
    """Lower-case and collapse every whitespace run to one space (stripped).

    ``str.split()`` splits at exactly the characters ``re``'s ``\\s`` matches (both use
    Unicode's whitespace test), and is several times faster than a regular expression.
    Most sentences already have single spaces only: no other character that is both
    whitespace and printable exists (tests check every code point), so then lower-casing
    is all there is to do.
    """
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        return text.lower()
    return " ".join(text.lower().split())


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
    return 1.0 - normalised_distance(normalise(original), normalise(adversarial))


def split_sentences(text: str, segmenter: Segmenter | None = None) -> list[str]:
    """Sentences of a multi-sentence text: lines first, then NLTK's punkt within each line.

    BODEGA used the LAMBO segmenter, whose model is not installable offline; punkt is
    the documented substitute (``bodega.scoring.segmenter``, a faster exact copy of
    NLTK's English punkt). Empty pieces are dropped; a text with no sentence gives one
    (possibly empty) segment so that every text has at least one. Pass the same
    ``segmenter`` for both texts of a pair: the adversarial text then reuses the
    original's unchanged lines and boundary decisions.
    """
    return _split(text, segmenter or Segmenter())[0]


def _split(text: str, segmenter: Segmenter) -> tuple[list[str], bool]:
    """``split_sentences`` and whether the sentences are spaced (``Segmenter.sentences``)."""
    sentences: list[str] = []
    spaced = True
    for line in text.splitlines():
        if line.strip():
            pieces, apart = segmenter.sentences(line)
            sentences.extend(pieces)
            spaced = spaced and apart
    return (sentences, spaced) if sentences else ([text], False)


def segment(task: str, text: str, segmenter: Segmenter | None = None) -> list[str]:
    """The units the semantic score averages over: PR2 whole, FC evidence and claim, HN/RD sentences."""
    mode = get_task(task).segmentation
    if mode == "whole":
        return [text]
    if mode == "pair":
        evidence, sep, claim = text.partition(PAIR_SEPARATOR)
        return [evidence, claim] if sep else [text]
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
    """A text's segments (raw, for the semantic model), their normalised forms and the whole normalised."""

    segments: list[str]
    normalised: list[str]
    whole: str


def prepare(task: str, text: str, segmenter: Segmenter | None = None,
            normalised: dict[str, str] | None = None) -> AlignedText:
    """Segment once and normalise each segment (and the whole text) once.

    ``normalised`` maps a segment to its normalised form: an adversarial text repeats
    most sentences of its original, which then need no normalising again. When only
    whitespace separates the sentences (lines break at whitespace too), the whole text's
    words are theirs and the whole form is their forms joined. Lower-casing must then
    not depend on context, which in Python only capital sigma does (final form).
    """
    spaced = False
    if get_task(task).segmentation in ("whole", "pair"):
        segments = segment(task, text)
    else:
        segments, spaced = _split(text, segmenter or Segmenter())
    if len(segments) == 1 and segments[0] is text:
        whole = normalise(text)
        return AlignedText(segments, [whole], whole)
    known = {} if normalised is None else normalised
    forms = []
    for sentence in segments:
        form = known.get(sentence)
        if form is None:
            form = known[sentence] = normalise(sentence)
        forms.append(form)
    whole = " ".join(forms) if spaced and "\u03a3" not in text else normalise(text)
    return AlignedText(segments, forms, whole)


def character_score(source: AlignedText, target: AlignedText) -> float:
    """The character score of two prepared texts (no normalising again)."""
    return 1.0 - normalised_distance(source.whole, target.whole)


def prepare_pair(task: str, original: str, adversarial: str) -> tuple[AlignedText, AlignedText]:
    """Both texts prepared, the adversarial one reusing the original's segmentation work and
    normalised sentences (memos that live for this pair only)."""
    segmenter, normalised = Segmenter(), {}
    return (prepare(task, original, segmenter, normalised),
            prepare(task, adversarial, segmenter, normalised))


def align_texts(task: str, original: str, adversarial: str) -> list[tuple[str, str]]:
    """(original sentence, aligned adversarial sentence) pairs, raw text, in original order."""
    source, target = prepare_pair(task, original, adversarial)
    indices = align(source.normalised, target.normalised)
    return [(s, target.segments[j]) for s, j in zip(source.segments, indices)]
