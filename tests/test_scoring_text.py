"""Segmentation, normalisation, and the fast alignment against the literal definition."""
from __future__ import annotations

import Levenshtein
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bodega.scoring.confusables import fold_confusables
from bodega.scoring.punct import normalise_for_bert, normalise_for_lev
from bodega.scoring.text import align, character_similarity, prepare_pair, segment, split_sentences


def brute_force_alignment(original: list[str], adversarial: list[str]) -> list[int]:
    """Every pair, float ratios, first index on ties: the definition as written."""
    result = []
    for sentence in original:
        ratios = []
        for candidate in adversarial:
            longest = max(len(sentence), len(candidate))
            ratios.append(Levenshtein.distance(sentence, candidate) / longest if longest else 0.0)
        result.append(ratios.index(min(ratios)))
    return result


sentences = st.lists(st.text(alphabet="ab c", max_size=8), min_size=1, max_size=7)


@settings(max_examples=400, deadline=None)
@given(sentences, sentences)
def test_fast_alignment_equals_every_pair_comparison(original, adversarial):
    assert align(original, adversarial) == brute_force_alignment(original, adversarial)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab c", max_size=10), min_size=10, max_size=30),
       st.lists(st.text(alphabet="ab c", max_size=10), min_size=10, max_size=30))
def test_fast_alignment_of_many_sentences_equals_every_pair_comparison(original, adversarial):
    """Many short sentences: wide pools of candidates of similar length, and many ties."""
    assert align(original, adversarial) == brute_force_alignment(original, adversarial)


def test_alignment_takes_the_first_candidate_on_ties():
    assert align(["abc"], ["abd", "abe"]) == [0]
    assert align(["xyz", "abc"], ["abe", "abd"]) == [0, 0]


def test_one_adversarial_sentence_may_serve_several_original_ones():
    assert align(["the cat sat", "the cat sat down"], ["the cat sat down"]) == [0, 0]
    assert align(["a b", "c d", "e f"], ["c d", "a b"]) == [1, 0, 0]  # "e f" ties: first wins


def test_normalise_for_lev_lower_cases_and_re_spaces_tokens():
    assert normalise_for_lev("  The\tCAT \n sat,  (really)!  ") == "the cat sat , ( really )!"


def test_normalise_for_bert_keeps_case():
    assert normalise_for_bert("Mr. Smith\nsaid: \"No.\"") == 'Mr . Smith said : " No ."'
    assert normalise_for_bert(None) == "NOT_GENERATED"


def test_character_similarity_of_empty_texts_is_one():
    assert character_similarity("", "  ") == 1.0
    assert character_similarity("abc", "") == 0.0


def test_segmentation_per_task():
    assert segment("PR2", "One. Two.") == ["One. Two."]
    assert segment("FC", "Evidence one. Two. ~ The claim.") == ["Evidence one. Two. ", " The claim."]
    assert segment("FC", "no separator here") == ["no separator here"]
    assert segment("FC", "a ~ b~c") == ["a ", " b", "c"]  # every '~', as BODEGA splits
    assert segment("HN", "Title line\nMr. Smith went to Washington. He said hi.") == [
        "Title line", "Mr. Smith went to Washington.", "He said hi."]
    assert segment("RD", "") == [] and segment("RD", " \n ") == []


def test_adversarial_segmentation_with_memo_matches_a_fresh_one():
    original = "Dr. Who arrived. The U.S. team lost.\nA new paragraph. It ends here."
    adversarial = "Dr. Who arrived. The U.S. team won.\nA new paragraph. It ends here."
    source, target = prepare_pair("HN", original, adversarial)
    assert source.segments == split_sentences(original)
    assert target.segments == split_sentences(adversarial)
    assert target.whole == normalise_for_lev(adversarial)
    assert target.normalised == [normalise_for_lev(s) for s in target.segments]


@pytest.mark.parametrize("attacked, read", [
    ("b. r. ambedkar wɑs ɑⅼіvе іn 1990.", "b. r. ambedkar was alive in 1990."),
    ("mike friedrich 𝑛ever wrote.", "mike friedrich never wrote."),
    ("ｆｕｌｌ width", "full width"),
])
def test_homoglyphs_fold_to_what_a_reader_sees(attacked, read):
    assert fold_confusables(attacked) == read


def test_folding_leaves_ascii_text_alone():
    text = "Plain ASCII text, with m and rn and 0 and O."
    assert fold_confusables(text) is text
