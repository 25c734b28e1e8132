"""NLTK's English punkt sentence splitter, re-implemented for speed with identical output.

Punkt decides every candidate boundary ('.', '?' or '!' followed by punctuation or by
whitespace and a token) from a short context: the word before it, the mark and the
token after it. NLTK wraps each context in token objects, runs two annotation passes
through generators and guards every regular expression with a timeout, which made
segmentation most of the scorer's time on long articles. Here the same model (NLTK's
own abbreviations, collocations, sentence starters and orthographic contexts) and the
same regular expressions (NLTK's, recompiled without the timeout wrapper) decide with
plain strings. A ``Segmenter`` remembers the decisions and the lines it has seen, so
the adversarial text of a pair reuses its original's work. ``tokenize`` equals
``nltk.tokenize.PunktTokenizer("english").tokenize``; tests/test_scoring_segmenter.py
checks that on every HN and RD attack text and on perturbed copies of them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

# Punkt looks back for the word before a candidate by ``string.whitespace`` (ASCII) only.
_LOOKBACK_SPACES = " \t\n\r\x0b\x0c"


@dataclass(frozen=True)
class PunktRules:
    """The English punkt model and the regular expressions that apply it."""

    abbreviations: frozenset[str]
    collocations: frozenset[tuple[str, str]]
    collocation_starts: frozenset[str]  # first words of the collocations
    starters: frozenset[str]
    orthography: Mapping[str, int]
    sentence_end: frozenset[str]
    punctuation: frozenset[str]
    candidates: Any  # compiled ``regex`` patterns, as NLTK builds them
    after_group: int  # numbers of the candidate pattern's groups "after_tok" and "next_tok"
    next_group: int
    words: Any
    realignment: Any
    numeric: Any
    ellipsis: Any
    initial: Any
    lower_case: int  # orthographic-context flags
    upper_case: int
    middle_upper: int
    begin_lower: int


@lru_cache(maxsize=1)
def english_rules() -> PunktRules:
    """The rules of NLTK's English punkt model from the offline data folder (read once)."""
    import regex

    from bodega.resources import use_nltk_data

    use_nltk_data()
    from nltk.tokenize import punkt

    tokenizer = punkt.PunktTokenizer("english")
    params, language = tokenizer._params, tokenizer._lang_vars

    def plain(pattern: Any) -> Any:
        """NLTK's pattern, compiled by the same engine with the same flags but no timeout."""
        return regex.compile(pattern.pattern, pattern.flags)

    candidates = plain(language.period_context_re())
    return PunktRules(
        abbreviations=frozenset(params.abbrev_types), collocations=frozenset(params.collocations),
        collocation_starts=frozenset(first for first, _ in params.collocations),
        starters=frozenset(params.sent_starters), orthography=dict(params.ortho_context),
        sentence_end=frozenset(language.sent_end_chars),
        punctuation=frozenset(punkt.PunktSentenceTokenizer.PUNCTUATION),
        candidates=candidates, after_group=candidates.groupindex["after_tok"],
        next_group=candidates.groupindex["next_tok"], words=plain(language._word_tokenizer_re()),
        realignment=plain(language.re_boundary_realignment),
        numeric=plain(punkt.PunktToken._RE_NUMERIC), ellipsis=plain(punkt.PunktToken._RE_ELLIPSIS),
        initial=plain(punkt.PunktToken._RE_INITIAL), lower_case=punkt._ORTHO_LC,
        upper_case=punkt._ORTHO_UC, middle_upper=punkt._ORTHO_MID_UC, begin_lower=punkt._ORTHO_BEG_LC)


def contains_break(rules: PunktRules, context: str) -> bool:
    """Punkt's decision: does any token of ``context`` but the last end a sentence?

    A token's decision depends on its own first-pass label and its successor's, so each
    token is decided in turn and the first break answers. Only a token ending in a period
    is reconsidered after the first pass; other tokens break when they are '?' or '!'.
    """
    tokens = _words(rules, context)
    for k in range(len(tokens) - 1):
        token = tokens[k]
        if token[-1] != ".":
            if token in rules.sentence_end:
                return True
            continue
        if _second_pass(rules, token, tokens[k + 1]):
            return True
    return False


# Words of letters and digits joined by single periods, maybe ending in one, separated by
# spaces: punkt's word expression cuts such a context at the spaces only (no character
# of it is punctuation that punkt splits off, and no ".." or ". . ." occurs).
_PLAIN = re.compile(r"[^\W_]+(?:\.[^\W_]+)*\.?(?: +[^\W_]+(?:\.[^\W_]+)*\.?)*")


def _words(rules: PunktRules, context: str) -> list[str]:
    """Punkt's word tokens of a context, line by line; plain contexts without the slow expression."""
    if _PLAIN.fullmatch(context):
        return context.split()
    tokens: list[str] = []
    for line in context.split("\n"):
        if line.strip():
            tokens.extend(rules.words.findall(line))
    return tokens


_BREAK, _ABBREVIATION, _ELLIPSIS = 1, 2, 3


def _first_pass(rules: PunktRules, token: str) -> int:
    """0, break, abbreviation or ellipsis from the token alone."""
    if token in rules.sentence_end:
        return _BREAK
    if token.startswith("..") and rules.ellipsis.match(token):
        return _ELLIPSIS
    if token.endswith(".") and not token.endswith(".."):
        stem = token[:-1].lower()
        if stem in rules.abbreviations or stem.split("-")[-1] in rules.abbreviations:
            return _ABBREVIATION
        return _BREAK
    return 0


def _type(rules: PunktRules, token: str) -> str:
    """Lower case, or "##number##" for a number (which starts with a digit, '-', '.' or ',')."""
    lower = token.lower()
    first = lower[0]
    if first.isascii() and not first.isdigit() and first not in "-.,":
        return lower
    return rules.numeric.sub("##number##", lower)


def _without_period(kind: str) -> str:
    return kind[:-1] if len(kind) > 1 and kind[-1] == "." else kind


def _second_pass(rules: PunktRules, token: str, following: str) -> bool:
    """Whether ``token`` (ending in a period) ends a sentence, given the next token.

    Punkt's second pass: collocations, then the orthographic and frequent-starter
    heuristics for abbreviations and ellipses, then for initials and numbers. The next
    token's type is only needed when one of them can apply.
    """
    label = _first_pass(rules, token)
    kind = _without_period(_type(rules, token))
    initial = len(token) == 2 and bool(rules.initial.match(token))  # a letter and a period
    number = kind == "##number##"
    abbreviated = label in (_ABBREVIATION, _ELLIPSIS) and not initial
    if not (abbreviated or initial or number or kind in rules.collocation_starts):
        return label == _BREAK
    following_kind = _type(rules, following)
    if _first_pass(rules, following) == _BREAK:
        following_kind = _without_period(following_kind)
    if (kind, following_kind) in rules.collocations:
        return False
    if abbreviated:
        if _starts_sentence(rules, following, following_kind) is True:
            return True
        if following[0].isupper() and following_kind in rules.starters:
            return True
    if initial or number:
        starts = _starts_sentence(rules, following, following_kind)
        if starts is False:
            return False
        if (starts is None and initial and following[0].isupper()
                and not rules.orthography.get(following_kind, 0) & rules.lower_case):
            return False
    return label == _BREAK


def _starts_sentence(rules: PunktRules, token: str, kind: str) -> bool | None:
    """Punkt's orthographic heuristic: True, False, or None when unsure."""
    if token in rules.punctuation:
        return False
    context = rules.orthography.get(kind, 0)
    if token[0].isupper() and context & rules.lower_case and not context & rules.middle_upper:
        return True
    if token[0].islower() and (context & rules.upper_case or not context & rules.begin_lower):
        return False
    return None


class Segmenter:
    """Punkt's ``tokenize`` with memos of lines and decisions.

    Use one per text pair (or per text): an attack leaves most lines and contexts of
    its original as they were, so the adversarial text costs a fraction. The memos
    only skip work; the result never depends on them.
    """

    def __init__(self, rules: PunktRules | None = None) -> None:
        self.rules = rules or english_rules()
        self._lines: dict[str, list[str]] = {}
        self._decisions: dict[str, bool] = {}

    def tokenize(self, text: str) -> list[str]:
        """The sentences of ``text`` exactly as ``PunktTokenizer("english").tokenize`` gives them."""
        return [text[start:stop] for start, stop in self.spans(text)]

    def sentences(self, line: str) -> list[str]:
        """The non-blank sentences of a line (remembered: an attack leaves most lines as they were)."""
        found = self._lines.get(line)
        if found is None:
            found = self._lines[line] = [piece for start, end in self.spans(line)
                                         if (piece := line[start:end]).strip()]
        return found

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, stop) of each sentence: the breaks, then closing quotes and brackets moved back."""
        return _realign(self.rules, text, self._breaks(text))

    def _breaks(self, text: str) -> list[tuple[int, int]]:
        """Sentences before realignment: each candidate whose context breaks ends one.

        The context of a candidate is the word before it (back to ASCII whitespace, but not
        into the previous candidate's word), the mark, and what follows; it is one stretch
        of the text, since the mark's lookahead group begins right after it. A candidate
        whose word reaches back over the previous one replaces it ("acting!!! I" is
        decided once).
        """
        other_spaces = [c for c in _LOOKBACK_SPACES[1:] if c in text]
        kept: list[tuple[int, Any]] = []  # (word start, match)
        previous_start = previous_stop = 0
        for match in self.rules.candidates.finditer(text):
            mark = match.start()
            back = text.rfind(" ", previous_stop, mark)
            for space in other_spaces:
                back = max(back, text.rfind(space, previous_stop, mark))
            start = back + 1 if back > previous_stop else previous_start
            if kept and previous_stop > start:
                kept.pop()
            kept.append((start, match))
            previous_start, previous_stop = start, mark
        decisions, rules = self._decisions, self.rules
        after, following_token = rules.after_group, rules.next_group  # by number: faster than by name
        slices: list[tuple[int, int]] = []
        last_break = 0
        for start, match in kept:
            context = text[start:match.end(after)]
            decision = decisions.get(context)
            if decision is None:
                decision = decisions[context] = contains_break(rules, context)
            if decision:
                slices.append((last_break, match.end()))
                following = match.start(following_token)
                last_break = following if following >= 0 else match.end()
        slices.append((last_break, len(text.rstrip())))
        return slices


def _realign(rules: PunktRules, text: str, slices: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Move closing quotes and brackets after a break into the sentence they close."""
    spans: list[tuple[int, int]] = []
    shift = 0
    for k, (start, stop) in enumerate(slices):
        start += shift
        if k + 1 == len(slices):
            if start < stop:
                spans.append((start, stop))
            break
        next_start, next_stop = slices[k + 1]
        found = rules.realignment.match(text[next_start:next_stop])
        if found:
            spans.append((start, next_start + len(found.group(0).rstrip())))
            shift = found.end()
        else:
            shift = 0
            if start < stop:
                spans.append((start, stop))
    return spans
