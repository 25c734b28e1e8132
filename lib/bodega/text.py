"""Words with character offsets, so an attack rewrites only the words it changes, and stop-word lists.

A neutral layer below models and attacks: word-candidate models (:mod:`bodega.mlm`) and
attacks (:mod:`bodega.attacks`) both read texts as word spans and skip the same stopwords.

OpenAttack tokenises, lower-cases and re-joins every token with single spaces, so
even a failed attack returns a text that differs from the input. Here a text is
kept as it is and only word spans are replaced: punctuation, spacing, line breaks
and the case of every untouched word survive byte for byte.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Mapping

WORD_PATTERN = re.compile(r"\w+(?:['’]\w+)*")
"""A word: letters, digits or underscores, with inner apostrophes (``don't``)."""


@dataclass(frozen=True)
class Word:
    """A word of a text and its character span ``[start, end)``."""

    text: str
    start: int
    end: int


@dataclass(frozen=True)
class TokenizedText:
    """A text and its word spans; the text between words is never touched."""

    text: str
    words: tuple[Word, ...]

    def __len__(self) -> int:
        return len(self.words)

    @property
    def tokens(self) -> list[str]:
        """The words' texts, in order."""
        return list(self._token_tuple)

    @cached_property
    def _token_tuple(self) -> tuple[str, ...]:
        return tuple(word.text for word in self.words)

    def replace(self, changes: Mapping[int, str]) -> str:
        """The text with word ``i`` replaced by ``changes[i]``; an empty string deletes the word."""
        if not changes:
            return self.text
        parts: list[str] = []
        cursor = 0
        for index in sorted(changes):
            word = self.words[index]
            parts.append(self.text[cursor:word.start])
            parts.append(changes[index])
            cursor = word.end
        parts.append(self.text[cursor:])
        return "".join(parts)

    def offset(self, changes: Mapping[int, str], index: int) -> int:
        """Where word ``index`` starts in ``self.replace(changes)``."""
        shift = sum(len(new) - len(self.words[i].text) for i, new in changes.items() if i < index)
        return self.words[index].start + shift

    def window(self, changes: Mapping[int, str], low: int, high: int, mark: int | None = None) -> tuple[str, int]:
        """Words ``low``..``high - 1`` and the text between them, after ``changes``.

        Returns the window and where word ``mark`` starts inside it (-1 without a mark).
        """
        parts: list[str] = []
        cursor, length, marked = self.words[low].start, 0, -1
        for i in range(low, high):
            gap = self.text[cursor:self.words[i].start]
            parts.append(gap)
            length += len(gap)
            if i == mark:
                marked = length
            word = changes.get(i, self.words[i].text)
            parts.append(word)
            length += len(word)
            cursor = self.words[i].end
        return "".join(parts), marked

    def with_words(self, words: list[str]) -> str:
        """The text with the word list ``words`` (same length) spliced in where it differs."""
        pairs = zip(words, self._token_tuple, strict=True)
        return self.replace({i: new for i, (new, old) in enumerate(pairs) if new != old})


def tokenize(text: str) -> TokenizedText:
    """The text's words (runs of :data:`WORD_PATTERN`) with their spans; the text itself is kept as it is."""
    return TokenizedText(text, tuple(Word(m.group(), m.start(), m.end()) for m in WORD_PATTERN.finditer(text)))


def match_case(original: str, replacement: str) -> str:
    """Give a substitute the case pattern of the word it replaces (``Police`` -> ``Constabulary``)."""
    if len(original) > 1 and original.isupper():
        return replacement.upper()
    if original[:1].isupper() and replacement[:1].islower():
        return replacement[:1].upper() + replacement[1:]
    return replacement


OPENATTACK_TOKEN = re.compile(r"\w+|[^\w\s]+")
"""NLTK's ``WordPunctTokenizer`` pattern, which OpenAttack's ``PunctTokenizer`` applies to each sentence."""


def openattack_view(text: str, lower: bool) -> tuple[TokenizedText, TokenizedText]:
    """A text as OpenAttack's word-level attackers see it: ``(re-joined, source)``.

    ``re-joined`` is the (lower-cased when ``lower``) text's ``PunctTokenizer`` tokens
    joined by single spaces, every token a position (punctuation included), as OpenAttack
    detokenises; ``source`` has the same tokens as spans of the un-joined text, for tagging.
    """
    source_text = text.lower() if lower else text
    source = TokenizedText(source_text, tuple(Word(m.group(), m.start(), m.end())
                                              for m in OPENATTACK_TOKEN.finditer(source_text)))
    words, cursor = [], 0
    for token in source.tokens:
        words.append(Word(token, cursor, cursor + len(token)))
        cursor += len(token) + 1
    return TokenizedText(" ".join(source.tokens), tuple(words)), source

@lru_cache(maxsize=1)
def default_stopwords() -> frozenset[str]:
    """spaCy's English stopword list (OpenAttack ships its own list of the same kind)."""
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(w.lower() for w in STOP_WORDS)
