"""Slot normalisation: the canonical token sequence that two slot texts are compared by.

Two slot texts are equal when their normalised sequences are equal. Normalising lower-cases,
drops punctuation and PTB bracket tokens, articles and the possessive marker, writes number
words and ordinals as digits (``twenty`` -> ``20``, ``22nd`` -> ``22``, ``1,000`` -> ``1000``),
expands month abbreviations and lemmatises every word with WordNet's morphology (verbs first
for relations, nouns first elsewhere), so "was released" and "releases" agree.
"""
from __future__ import annotations

import re
from functools import lru_cache

ARTICLES = frozenset({"a", "an", "the"})
PTB_TOKENS = frozenset({"-lrb-", "-rrb-", "-lsb-", "-rsb-", "-lcb-", "-rcb-", "``", "''", "--"})
NEGATORS = frozenset({"not", "n't", "never", "no", "none", "nobody", "nothing", "neither", "nor"})
RELATION_AUXILIARIES = frozenset({"be", "have", "do", "to", "will", "would", "shall", "should", "can",
                                  "could", "may", "might", "must", "get"})
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                      "eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000",
                      "million": "1000000", "billion": "1000000000"})
_ORDINAL_WORDS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "sixth": "6",
                  "seventh": "7", "eighth": "8", "ninth": "9", "tenth": "10"}
_MONTHS = {m[:3]: m for m in ("january february march april may june july august september october "
                              "november december").split()}
_IRREGULAR = {"is": "be", "are": "be", "was": "be", "were": "be", "been": "be", "am": "be", "being": "be",
              "has": "have", "had": "have", "does": "do", "did": "do", "done": "do"}
_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?(?:st|nd|rd|th)?|[^\W_]+(?:[-'][^\W_]+)*|n't|'s|\$|%", re.UNICODE)
_ORDINAL_DIGITS = re.compile(r"^(\d+)(?:st|nd|rd|th)$")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, PTB brackets and punctuation removed, look-alike letters folded.

    Homoglyphs (Cyrillic ``е``, mathematical ``𝑛``) are folded to the ASCII letter a reader sees,
    so a character-level attack that only swaps look-alikes leaves the atoms unchanged.
    """
    from bodega.scoring.confusables import fold_confusables

    text = re.sub(r"-[lr][rsc]b-", " ", fold_confusables(text).lower())
    return [t for t in _TOKEN.findall(text) if t not in PTB_TOKENS]


@lru_cache(maxsize=1)
def _wordnet():
    from bodega.resources import use_nltk_data

    use_nltk_data()
    from nltk.corpus import wordnet

    wordnet.ensure_loaded()
    return wordnet


@lru_cache(maxsize=100_000)
def lemma(word: str, verb_first: bool = False) -> str:
    """WordNet base form of one lower-case word (the word itself when WordNet does not know it)."""
    if not word.isalpha():
        return word
    wn = _wordnet()
    order = ("v", "n", "a") if verb_first else ("n", "v", "a")
    for pos in order:
        base = wn.morphy(word, pos)
        if base:
            return base
    return word


def canonical_number(token: str) -> str:
    """Number words and ordinals as digits, commas dropped from numerals; other tokens as given."""
    if token in _NUMBER_WORDS:
        return _NUMBER_WORDS[token]
    if token in _ORDINAL_WORDS:
        return _ORDINAL_WORDS[token]
    match = _ORDINAL_DIGITS.match(token)
    if match:
        return match.group(1)
    if token[:1].isdigit():
        return token.replace(",", "")
    return token


def normalise(text: str, *, relation: bool = False) -> tuple[str, ...]:
    """Canonical token sequence of a slot text (see the module docstring)."""
    out: list[str] = []
    for token in tokens(text):
        if token in ARTICLES or token == "'s":
            continue
        if token == "n't":
            token = "not"
        token = canonical_number(token)
        token = _MONTHS.get(token, token)
        out.append(_IRREGULAR.get(token) or lemma(token, verb_first=relation))
    if relation:
        content = [t for t in out if t not in RELATION_AUXILIARIES]
        out = content or out
    return tuple(out)


def numbers_in(text: str) -> frozenset[str]:
    """The canonical numbers (years, counts, days) a text mentions."""
    found = set()
    for token in tokens(text):
        value = canonical_number(token)
        if value[:1].isdigit():
            found.add(value)
    return frozenset(found)


def rejoin_split_words(text: str, reference: str, max_parts: int = 6) -> str:
    """Undo spaces inserted inside words: "leona rd" -> "leonard" when the reference has "leonard".

    Character-level attacks split words ("ze ro", "n ot", "o ' bannon"); a reader still reads the
    word. Adjacent whitespace tokens of ``text`` are joined (longest first, up to ``max_parts``)
    when their concatenation, with look-alike letters folded and case ignored, is a whitespace token
    of ``reference`` and the parts are not already such a token on their own.
    """
    from bodega.scoring.confusables import fold_confusables

    def key(token: str) -> str:
        return fold_confusables(token).lower()

    vocabulary = {key(t) for t in reference.split()}
    vocabulary |= {k.rstrip(".,;:!?") for k in vocabulary}
    parts = text.split()
    out, i = [], 0
    while i < len(parts):
        joined = None
        for k in range(min(max_parts, len(parts) - i), 1, -1):
            candidate = "".join(parts[i:i + k])
            if key(candidate) in vocabulary and key(candidate).rstrip(".,;:!?"):
                joined = (candidate, k)
                break
        if joined is not None and not all(key(p) in vocabulary for p in parts[i:i + joined[1]]):
            out.append(joined[0])
            i += joined[1]
        else:
            out.append(parts[i])
            i += 1
    return " ".join(out)
