"""The fast punkt segmenter gives exactly NLTK punkt's sentences, on real texts and perturbed ones."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bodega.scoring.segmenter import Segmenter
from bodega.scoring.punct import normalise_for_lev
from bodega.scoring.text import prepare, prepare_pair, split_sentences

RAW = Path(__file__).resolve().parents[2] / "shared" / "data" / "raw"


@lru_cache(maxsize=1)
def plain_punkt():
    from bodega.resources import use_nltk_data

    use_nltk_data()
    from nltk.tokenize import PunktTokenizer

    return PunktTokenizer("english")


def nltk_sentences(text: str) -> list[str]:
    """split_sentences as defined: lines, NLTK punkt per line, empty pieces dropped."""
    pieces = [s for line in text.splitlines() if line.strip() for s in plain_punkt().tokenize(line)]
    return [s for s in pieces if s.strip()]


@lru_cache(maxsize=None)
def attack_texts(task: str) -> tuple[str, ...]:
    from bodega.data.converters import get_converter, raw_folder

    return tuple(e.text for e in get_converter(task)(raw_folder(RAW, task)).attack)


def corpus_texts() -> list[str]:
    if not RAW.exists():
        pytest.skip(f"{RAW} is absent (the raw corpora): cannot compare on real texts")
    return [t for task in ("HN", "RD") for t in attack_texts(task)]


@pytest.mark.parametrize("text, expected", [
    ("Very bad acting!!! I promise.", ["Very bad acting!!!", "I promise."]),
    ("Mr. Smith went to Washington. He said hi.", ["Mr. Smith went to Washington.", "He said hi."]),
    ("(Sent one.) Sent two.", ["(Sent one.)", "Sent two."]),
    ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
    ("J. S. Bach wrote it. It is 3.5 p.m. now.", None),
    ("The vote was 12. Business leaders cheered. B. Smith did not.", None),  # collocations of the model
    ("Wait . . . what? Yes... no.", None),
    ("It ends--no. It goes on; e.g. here. ‘Quoted.’ «Done.» [X.] {Y.}", None),
    ("Tab\tseparated. Sentences\x0bhere.   Trailing spaces.   ", None),
    ("", None),
    ("   ", None),
])
def test_known_cases_equal_nltk(text, expected):
    got = Segmenter().tokenize(text)
    assert got == plain_punkt().tokenize(text)
    if expected is not None:
        assert got == expected


def test_every_hn_and_rd_attack_text_is_segmented_as_nltk_does():
    texts = corpus_texts()
    segmenter = Segmenter()  # one memo for all: decisions carry over between texts, results must not change
    for k, text in enumerate(texts):
        assert split_sentences(text, segmenter) == nltk_sentences(text), f"text {k}: {text[:80]!r}"


HOMOGLYPHS = {"a": "ɑ", "e": "е", "o": "о", "i": "і", "l": "ⅼ", "A": "Α", "M": "М", ".": "․"}
INSERTS = [".", ". ", "?", "!", "...", ". . .", '."', ".”", ".)", "Mr.", "U.S.", "e.g.", "3.", " A.", "--",
           "'", "’", "(", ",", ":", " \t", "“"]


@st.composite
def perturbed(draw):
    """A real line with random edits of the kinds attacks and punkt's rules care about."""
    texts = corpus_texts()
    text = texts[draw(st.integers(0, len(texts) - 1))]
    chars = list(text)
    for _ in range(draw(st.integers(1, 12))):
        if not chars:
            break
        at = draw(st.integers(0, len(chars) - 1))
        kind = draw(st.sampled_from(["insert", "delete", "case", "homoglyph", "word", "period-case"]))
        if kind == "insert":
            chars[at:at] = list(draw(st.sampled_from(INSERTS)))
        elif kind == "delete":
            del chars[at:at + draw(st.integers(1, 3))]
        elif kind == "case":
            chars[at] = chars[at].swapcase()
        elif kind == "homoglyph":
            chars[at] = HOMOGLYPHS.get(chars[at], chars[at])
        elif kind == "word":
            chars[at:at] = list(" " + draw(st.sampled_from(["the", "The", "Dr", "No", "it", "IT", "1990", "jr"])))
        else:  # flip the case of the first letter after the next period
            stop = "".join(chars).find(". ", at)
            if 0 <= stop < len(chars) - 2:
                chars[stop + 2] = chars[stop + 2].swapcase()
    return text, "".join(chars)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(perturbed())
def test_perturbed_texts_are_segmented_as_nltk_does(pair):
    original, attacked = pair
    source, target = prepare_pair("HN", original, attacked)
    assert source.segments == nltk_sentences(original)
    assert target.segments == nltk_sentences(attacked)
    assert target.normalised == [normalise_for_lev(s) for s in target.segments]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("aAbZ1 .?!,;:'\"()[]-\t“”’…") + ["Mr", "e.g", "U.S", " i.", "The"]),
                max_size=40).map("".join))
def test_random_punctuation_soup_equals_nltk(text):
    assert Segmenter().tokenize(text) == plain_punkt().tokenize(text)


@pytest.mark.parametrize("text", [
    "It ended.(Next one starts here. Two.", "ΟΔΟΣ.:Β and more. Next.", "ΑΣ. Β", "Tab\tsep.  X.\n\n  Y. ",
    "It ends.)--but goes. On.", "\x1fx. y\x1f. z", "Line one.\u2028Line two.\x85Three.\x1cFour.",
    " \xa0Lead. Trail.\xa0", "No sentence break here", "", "   \n  ",
])
def test_unusual_separators_are_segmented_as_nltk_does(text):
    assert prepare("HN", text).segments == nltk_sentences(text)
