"""BODEGA's text normalisation: OpenAttack's ``PunctTokenizer`` tokens re-joined by single spaces.

BODEGA (``metrics/BODEGAScore.py``) compares texts after ``normalise_for_lev``
(lower-case, newline to space, then OpenAttack 2.1.1's ``PunctTokenizer`` tokens joined
with single spaces) and gives the semantic model ``normalise_for_bert`` texts (newline
to space and the same re-join, case kept). That tokenizer splits sentences with NLTK's
English punkt and each sentence with ``WordPunctTokenizer`` (``\\w+|[^\\w\\s]+``).

Importing OpenAttack takes seconds and its punkt pickle cannot load with the installed
NLTK, so this module computes the same tokens without it. A sentence boundary only
matters where it falls inside a run of punctuation (between two words there is
whitespace anyway): after a sentence-final mark followed directly by one of punkt's
"non-word" characters, or after closing quotes that punkt moves in front of ``--``.
A text with no such place is cut by the word expression alone. Where there is one, punkt
decides from a stretch of text around it: its decisions only look at the word before a
mark, the mark and what follows up to the next token, and its realignment at the start
of the next sentence, so the run of non-blank characters holding the place, with the
runs before and after it, is split into punkt's sentences (``bodega.scoring.segmenter``,
identical to NLTK's) and the run's tokens are taken from those sentences.
tests/test_scoring_bodega_reference.py checks the result against OpenAttack's own
tokenizer on every attack text of the four tasks and on perturbed copies.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from typing import Any

import regex

from bodega.scoring.segmenter import Segmenter

_WORD_PUNCT = regex.compile(r"\w+|[^\w\s]+", regex.UNICODE | regex.MULTILINE | regex.DOTALL)
r"""NLTK's ``WordPunctTokenizer``: its expression and flags, compiled by the ``regex`` engine as
the installed NLTK compiles it (where ``\w`` includes combining marks, unlike ``re``'s)."""

_WORD_PUNCT_RE = re.compile(_WORD_PUNCT.pattern, re.UNICODE | re.MULTILINE | re.DOTALL)
"""The same expression in ``re``, twice as fast; used for texts whose every character both
engines class alike (word, space or neither)."""

_RE_ONLY_SPACES = re.compile("[\x1c-\x1f]")
"""The ASCII characters the engines class differently: spaces for ``re``, not for ``regex``."""


@lru_cache(maxsize=None)
def _classed_alike(char: str) -> bool:
    return (bool(re.match(r"\w", char)) == bool(regex.match(r"\w", char))
            and bool(re.match(r"\s", char)) == bool(regex.match(r"\s", char)))


def _expression(text: str) -> Any:
    """NLTK's word expression, in whichever engine gives NLTK's tokens for ``text`` fastest."""
    if text.isascii():
        return _WORD_PUNCT if _RE_ONLY_SPACES.search(text) else _WORD_PUNCT_RE
    return _WORD_PUNCT_RE if all(map(_classed_alike, set(text))) else _WORD_PUNCT

@lru_cache(maxsize=1)
def _inner_break() -> Any:
    """Where punkt may end a sentence inside a run of punctuation, from the installed NLTK's rules:
    a sentence-final mark followed directly by one of punkt's non-word characters, or closing
    quotes that punkt's realignment moves back in front of ``--``."""
    from nltk.tokenize.punkt import PunktLanguageVars

    language = PunktLanguageVars()
    marks = "[" + re.escape("".join(language.sent_end_chars)) + "]"
    closing = re.match(r"\[(?:\\.|[^\]])*\]", language.re_boundary_realignment.pattern).group(0)
    return regex.compile(f"{marks}{language._re_non_word_chars}|{closing}--")


_RUN = re.compile(r"[^ \t\n\r\x0b\x0c]+")
"""Runs between ASCII whitespace: punkt looks back for the word before a mark by ASCII whitespace only."""


def punct_join(text: str, segmenter: Segmenter | None = None) -> str:
    """``" ".join(PunctTokenizer().tokenize(text, pos_tagging=False))``, as OpenAttack gives it.

    Punkt's last sentence ends where ``str.rstrip`` stops, so trailing characters that
    Python counts as spaces and the word expression does not (``\x1c``-``\x1f``) are dropped.
    """
    full, text = text, text[:len(text.rstrip())]
    places = [match.start() for match in _inner_break().finditer(text)]
    words = _expression(text)
    if not places:
        return " ".join(words.findall(text))
    segmenter = segmenter or Segmenter()
    runs = [match.span() for match in _RUN.finditer(text)]
    starts = [start for start, _ in runs]
    tokens: list[str] = []
    done = 0  # tokens before this position are taken
    for k in sorted({bisect_right(starts, place) - 1 for place in places}):
        start, end = runs[k]
        tokens.extend(words.findall(text, done, start))
        # From the run before, or from the text's start: punkt's first sentence keeps leading blanks,
        # and one of them changes its decision (" .??" -> " .?" + "?", but ".??" -> "." + "?" + "?").
        offset = runs[k - 1][0] if k > 0 else 0
        # A word after the next run keeps the window's end from being stripped as the text's end.
        # At the end, what follows the last run (blanks, control characters) is kept: punkt looks at it.
        window = text[offset:runs[k + 1][1]] + " x" if k + 1 < len(runs) else full[offset:]
        for first, stop in segmenter.spans(window):
            tokens.extend(match.group() for match in words.finditer(window, first, stop)
                          if start <= offset + match.start() < end)
        done = end
    tokens.extend(words.findall(text, done))
    return " ".join(tokens)


def normalise_for_lev(text: str, segmenter: Segmenter | None = None) -> str:
    """BODEGA's input to Levenshtein (character score and sentence alignment)."""
    return punct_join(text.lower().replace("\n", " "), segmenter)


def normalise_for_bert(text: str | None, segmenter: Segmenter | None = None) -> str:
    """BODEGA's input to the semantic model: case kept; a missing text is ``NOT_GENERATED``."""
    if text is None:
        return NOT_GENERATED
    return punct_join(text.replace("\n", " "), segmenter)


NOT_GENERATED = "NOT_GENERATED"
"""What BODEGA sends to the semantic model for a sentence that has no aligned counterpart."""
