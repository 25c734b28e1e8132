"""Where candidate words come from: WordNet synonyms, user-supplied lexicons or vectors, character edits.

A word transformation is any callable ``(text, index, pos) -> list[str]`` giving the
replacements for word ``index`` of a :class:`~bodega.text.TokenizedText`
(``pos`` is its coarse tag). Context-free lexicons ignore ``text``; a masked-LM
transformation reads it. Candidates keep the case pattern of the word they replace.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Protocol

import numpy as np

from bodega.errors import BodegaError
from bodega.text import TokenizedText, match_case


class WordTransformation(Protocol):
    """Where a search gets replacement words: ``(text, index, pos) -> candidates`` for one word.

    ``text`` is the whole :class:`~bodega.text.TokenizedText` (a context-free lexicon may ignore
    it), ``index`` the word to replace and ``pos`` its coarse tag (``noun``, ``verb``, ``adj``,
    ``adv`` or ``other``). Return candidates best first, in the case pattern of the word they
    replace; the searches drop the word itself and keep the order, so the same inputs must give
    the same list. An optional ``warm_up()`` loads lexicons or models before the first example.
    """

    def __call__(self, text: TokenizedText, index: int, pos: str) -> list[str]: ...


_WORDNET_POS = {"noun": "n", "verb": "v", "adj": "a", "adv": "r"}
_NEVER_REPLACED = frozenset({"be", "is", "are", "am"})


class WordNetSynonyms:
    """Lemmas of every WordNet synset of the word with its part of speech, as OpenAttack's default.

    OpenAttack's rules are kept: only the first word of a multi-word lemma, never the
    word itself, nothing for forms of *to be* or for tags outside noun/verb/adj/adv,
    duplicates removed case-insensitively in WordNet's order, all lower case (here the
    case of the replaced word is then restored). ``max_candidates`` cuts the list.
    ``openattack_lists`` keeps OpenAttack's slip: a lemma is compared with the word before
    lower-casing, so a capitalised lemma of the word itself (``Nation`` for ``nation``)
    stays in the list, where it weighs in Genetic's and PSO's choice of positions.
    """

    def __init__(self, max_candidates: int | None = None, openattack_lists: bool = False):
        self.max_candidates = max_candidates
        self.openattack_lists = openattack_lists
        self._wordnet = None
        self._cache: dict[tuple[str, str], tuple[str, ...]] = {}

    @property
    def wordnet(self):
        """NLTK's WordNet reader, loaded on first use from the project's NLTK data."""
        if self._wordnet is None:
            from bodega.wordnet import english_wordnet

            self._wordnet = english_wordnet()
        return self._wordnet

    def warm_up(self) -> None:
        """Load WordNet now, so that the first example is not charged for it."""
        self.wordnet

    def synonyms(self, word: str, pos: str) -> tuple[str, ...]:
        """The word's lower-cased WordNet candidates for its part of speech, remembered per (word, tag)."""
        key = (word.lower(), pos)
        if key not in self._cache:
            self._cache[key] = self._lookup(*key)
        return self._cache[key]

    def _lookup(self, word: str, pos: str) -> tuple[str, ...]:
        if pos not in _WORDNET_POS or word in _NEVER_REPLACED:
            return ()
        found: dict[str, None] = {}
        for synset in self.wordnet.synsets(word, pos=_WORDNET_POS[pos]):
            for lemma in synset.lemmas():
                first = lemma.name().replace("_", " ").split()[0]
                if (first if self.openattack_lists else first.lower()) != word:
                    found.setdefault(first.lower())
        names = tuple(found)
        return names[: self.max_candidates] if self.max_candidates else names

    def __call__(self, text: TokenizedText, index: int, pos: str) -> list[str]:
        original = text.words[index].text
        return [match_case(original, s) for s in self.synonyms(original, pos)]


class LexiconSubstitutes:
    """Substitutes from a user-supplied file, one ``word<TAB>candidate candidate ...`` per line.

    This is how HowNet sememe neighbours (for SememePSO) or any other curated list
    are plugged in when the user has them; none ships with the project.
    """

    def __init__(self, path: str | Path, max_candidates: int | None = None):
        self.table: dict[str, tuple[str, ...]] = {}
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            word, sep, rest = line.partition("\t")
            if not sep:
                raise BodegaError(f"{path}:{number}: expected 'word<TAB>candidates', got {line[:60]!r}")
            candidates = tuple(c for c in rest.split() if c.lower() != word.lower())
            self.table[word.lower()] = candidates[:max_candidates] if max_candidates else candidates

    def __call__(self, text: TokenizedText, index: int, pos: str) -> list[str]:
        original = text.words[index].text
        return [match_case(original, c) for c in self.table.get(original.lower(), ())]


class EmbeddingNeighbours:
    """Nearest neighbours in a user-supplied word-vector file (e.g. counter-fitted vectors).

    The file is word2vec text format (``word v1 v2 ...`` per line, an optional
    ``count dim`` header). TextFooler's rule: the ``k`` nearest words by cosine with
    similarity at least ``min_similarity``.
    """

    def __init__(self, path: str | Path, k: int = 50, min_similarity: float = 0.5):
        words, rows = [], []
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                parts = line.rstrip().split(" ")
                if number == 1 and len(parts) == 2:
                    continue
                words.append(parts[0])
                rows.append(np.asarray(parts[1:], dtype=np.float32))
        matrix = np.stack(rows)
        self.vectors = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        self.words = words
        self.index = {w: i for i, w in enumerate(words)}
        self.k, self.min_similarity = k, min_similarity
        self._cache: dict[str, tuple[str, ...]] = {}

    def neighbours(self, word: str) -> tuple[str, ...]:
        """The word's nearest words by cosine (at most ``k``, none below ``min_similarity``), remembered."""
        word = word.lower()
        if word not in self._cache:
            row = self.index.get(word)
            if row is None:
                self._cache[word] = ()
            else:
                sims = self.vectors @ self.vectors[row]
                order = np.argsort(-sims)[: self.k + 1]
                self._cache[word] = tuple(self.words[i] for i in order
                                          if i != row and sims[i] >= self.min_similarity)[: self.k]
        return self._cache[word]

    def __call__(self, text: TokenizedText, index: int, pos: str) -> list[str]:
        original = text.words[index].text
        return [match_case(original, n) for n in self.neighbours(original)]


# --- character edits (DeepWordBug) ------------------------------------------------------------

HOMOGLYPHS = {
    # lower case: Cyrillic, Greek, Armenian and other look-alikes
    "a": "а", "b": "ƅ", "c": "с", "d": "ԁ", "e": "е", "f": "ƒ", "g": "ɡ", "h": "һ", "i": "і",
    "j": "ј", "k": "κ", "l": "ӏ", "m": "ⅿ", "n": "ｎ", "o": "о", "p": "р", "q": "ԛ", "r": "г",
    "s": "ѕ", "t": "τ", "u": "υ", "v": "ν", "w": "ѡ", "x": "х", "y": "у", "z": "ᴢ",
    # upper case
    "A": "А", "B": "В", "C": "С", "D": "Ꭰ", "E": "Е", "F": "Ϝ", "G": "Ԍ", "H": "Н", "I": "І",
    "J": "Ј", "K": "К", "L": "Ꮮ", "M": "М", "N": "Ν", "O": "О", "P": "Р", "Q": "Ԛ", "R": "Ꭱ",
    "S": "Ѕ", "T": "Т", "U": "Ս", "V": "Ꮩ", "W": "Ԝ", "X": "Х", "Y": "Ү", "Z": "Ζ",
    # digits and the apostrophe
    "0": "Ο", "1": "Ɩ", "2": "ᒿ", "3": "Ʒ", "4": "Ꮞ", "5": "Ƽ", "6": "б", "7": "𝟩", "8": "𝟪",
    "9": "𝟫", "'": "ʼ", "-": "‐",
}
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _homoglyph(word: str, rng: np.random.Generator) -> str:
    i = int(rng.integers(len(word)))
    return word[:i] + HOMOGLYPHS.get(word[i], word[i]) + word[i + 1:]


def _swap(word: str, rng: np.random.Generator) -> str:
    if len(word) < 2:
        return word
    i = int(rng.integers(len(word) - 1))
    return word[:i] + word[i + 1] + word[i] + word[i + 2:]


def _delete(word: str, rng: np.random.Generator) -> str:
    if len(word) < 2:
        return word
    i = int(rng.integers(len(word)))
    return word[:i] + word[i + 1:]


def _insert(word: str, rng: np.random.Generator) -> str:
    i = int(rng.integers(len(word) + 1))
    return word[:i] + _LETTERS[int(rng.integers(26))] + word[i:]


def _substitute(word: str, rng: np.random.Generator) -> str:
    i = int(rng.integers(len(word)))
    return word[:i] + _LETTERS[int(rng.integers(26))] + word[i + 1:]


def openattack_homoglyph(word: str, rng) -> str:
    """OpenAttack 2.1.1's homoglyph edit, with its own table (lower case, digits, ``-`` and ``'`` only)."""
    from bodega.attacks.filter_words import openattack_constant

    table = openattack_constant("attackers/deepwordbug/__init__.py", "homos")
    i = int(rng.integers(len(word)))
    return word[:i] + table.get(word[i], word[i]) + word[i + 1:]


class LegacyDraws:
    """``integers(n)`` from numpy's legacy ``RandomState``, the order of OpenAttack's ``np.random.randint(0, n)``.

    Seeded with the first draw of the example's generator, as the OpenAttack backend
    seeds numpy's global state, so both backends draw the same numbers.
    """

    def __init__(self, rng: np.random.Generator):
        self.state = np.random.RandomState(int(rng.integers(2**32)))

    def integers(self, n: int) -> int:
        """A whole number in ``[0, n)``, as ``np.random.randint(0, n)`` would draw it."""
        return int(self.state.randint(0, n))


CHARACTER_EDITS: dict[str, Callable[[str, np.random.Generator], str]] = {
    "homoglyph": _homoglyph, "swap": _swap, "delete": _delete, "insert": _insert, "substitute": _substitute,
}


def character_edit(kind: str) -> Callable[[str, np.random.Generator], str]:
    """One of DeepWordBug's edits: homoglyph (default), swap, delete, insert, substitute."""
    if kind not in CHARACTER_EDITS:
        raise BodegaError(f"unknown character edit {kind!r}; choose one of {', '.join(CHARACTER_EDITS)}")
    return CHARACTER_EDITS[kind]
