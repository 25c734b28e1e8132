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
A text with no such place is cut by the word expression alone; any other text is
first split into punkt's sentences (``bodega.scoring.segmenter``, identical to NLTK's).
tests/test_scoring_bodega_reference.py checks the result against OpenAttack's own
tokenizer on every attack text of the four tasks and on perturbed copies.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import regex

from bodega.scoring.segmenter import Segmenter

_WORD_PUNCT = regex.compile(r"\w+|[^\w\s]+", regex.UNICODE | regex.MULTILINE | regex.DOTALL)
r"""NLTK's ``WordPunctTokenizer``: its expression and flags, compiled by the ``regex`` engine as
the installed NLTK compiles it (where ``\w`` includes combining marks, unlike ``re``'s)."""

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


def punct_join(text: str, segmenter: Segmenter | None = None) -> str:
    """``" ".join(PunctTokenizer().tokenize(text, pos_tagging=False))``, as OpenAttack gives it."""
    if not _inner_break().search(text):
        return " ".join(_WORD_PUNCT.findall(text))
    spans = (segmenter or Segmenter()).spans(text)
    return " ".join(token for start, stop in spans for token in _WORD_PUNCT.findall(text, start, stop))


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
