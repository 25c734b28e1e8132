"""The BODEGA score's definition (BODEGA's ``BODEGAScore.compute``), pinned on small cases with a
scripted semantic model. Texts reach the model as ``normalise_for_bert`` gives them (tokens
re-joined by single spaces, case kept) and Levenshtein sees ``normalise_for_lev`` (also lower-cased)."""
from __future__ import annotations

import numpy as np
import pytest

from bodega.errors import BodegaError
from bodega.scoring import ExampleScore, score_examples, summarise
from bodega.scoring.semantic import CharacterModel


class ScriptedModel:
    """Returns a fixed score per (reference, candidate) pair and records every call."""

    name = "scripted"

    def __init__(self, table: dict[tuple[str, str], float] | None = None, default: float = 0.5):
        self.table = table or {}
        self.default = default
        self.calls: list[list[tuple[str, str]]] = []

    def score(self, pairs):
        self.calls.append(list(pairs))
        return np.array([self.table.get(p, self.default) for p in pairs])


def test_identical_texts_score_one_for_character_and_model_sees_the_normalised_pair():
    model = ScriptedModel({("The cat sat .", "The cat sat ."): 1.0})
    [score] = score_examples("PR2", ["The cat sat."], ["The cat sat."], [True], model)
    assert score == ExampleScore(True, 1.0, 1.0, 1.0)
    assert model.calls == [[("The cat sat .", "The cat sat .")]]


def test_one_character_edit_gives_one_minus_one_over_length():
    model = ScriptedModel(default=1.0)
    [score] = score_examples("PR2", ["abcdefghij"], ["abcdefghiX"], [True], model)
    assert score.character == pytest.approx(0.9)
    assert score.bodega == pytest.approx(0.9)


def test_character_score_ignores_case_whitespace_and_spacing_around_punctuation():
    [score] = score_examples("PR2", ["Hello   World\n"], ["hello world"], [True], ScriptedModel(default=1.0))
    assert score.character == 1.0
    [score] = score_examples("PR2", ["Hello,World (again) now!"], ["hello , world ( again ) now !"], [True],
                             ScriptedModel(default=1.0))
    assert score.character == 1.0


def test_failed_attack_scores_zero_and_is_not_sent_to_the_model():
    model = ScriptedModel(default=1.0)
    scores = score_examples("PR2", ["a text", "other"], ["a test", None], [False, False], model)
    assert scores == [ExampleScore(False, None, None, 0.0), ExampleScore(False, None, None, 0.0)]
    assert model.calls == []


def test_success_without_adversarial_text_is_an_error_naming_the_example():
    with pytest.raises(BodegaError, match="example 1"):
        score_examples("PR2", ["a", "b"], ["a", None], [False, True], ScriptedModel())


def test_fc_pair_is_split_into_evidence_and_claim():
    original = "Paris is the capital of France. ~ Paris is in France."
    adversarial = "Paris is the capital of France. ~ Paris is in Spain."
    model = ScriptedModel({("Paris is the capital of France .", "Paris is the capital of France ."): 1.0,
                           ("Paris is in France .", "Paris is in Spain ."): 0.25})
    [score] = score_examples("FC", [original], [adversarial], [True], model)
    assert model.calls == [[("Paris is the capital of France .", "Paris is the capital of France ."),
                            ("Paris is in France .", "Paris is in Spain .")]]
    assert score.semantic == pytest.approx((1.0 + 0.25) / 2)
    lev = 5  # "france" -> "spain": 5 edits
    assert score.character == pytest.approx(1 - lev / len("paris is the capital of france . ~ paris is in france ."))
    assert score.bodega == pytest.approx(score.semantic * score.character)


def test_added_sentence_is_ignored_by_alignment_and_averaging():
    original = "The economy grew last year. Unemployment fell sharply."
    adversarial = "The economy grew last year. Nobody expected this. Unemployment fell sharply!"
    model = ScriptedModel({("The economy grew last year .", "The economy grew last year ."): 1.0,
                           ("Unemployment fell sharply .", "Unemployment fell sharply !"): 0.5})
    [score] = score_examples("HN", [original], [adversarial], [True], model)
    # Two original sentences, each aligned to its closest adversarial sentence; the added one is unused.
    assert model.calls == [[("The economy grew last year .", "The economy grew last year ."),
                            ("Unemployment fell sharply .", "Unemployment fell sharply !")]]
    assert score.semantic == pytest.approx(0.75)
    compared = "the economy grew last year . nobody expected this . unemployment fell sharply !"
    assert score.character == pytest.approx(1 - (len("nobody expected this . ") + 1) / len(compared))


def test_empty_adversarial_text_is_judged_by_the_model_as_in_bodega():
    model = ScriptedModel({("Something was said .", ""): 0.3})
    [score] = score_examples("PR2", ["Something was said."], [""], [True], model)
    assert score == ExampleScore(True, 0.3, 0.0, 0.0)
    assert model.calls == [[("Something was said .", "")]]


def test_a_blank_adversarial_article_has_no_sentence_and_the_model_sees_not_generated():
    model = ScriptedModel({("One .", "NOT_GENERATED"): 0.2, ("Two .", "NOT_GENERATED"): 0.4})
    [score] = score_examples("HN", ["One. Two."], [" \n "], [True], model)
    assert model.calls == [[("One .", "NOT_GENERATED"), ("Two .", "NOT_GENERATED")]]
    assert score.semantic == pytest.approx(0.3) and score.character == 0.0


def test_semantic_scores_are_clipped_per_sentence():
    original = "One is here. Two is there."
    model = ScriptedModel({("One is here .", "One is here ."): 1.7, ("Two is there .", "Two is where ."): -0.4})
    [score] = score_examples("HN", [original], ["One is here. Two is where."], [True], model)
    assert score.semantic == pytest.approx(0.5)


def test_bodega_is_the_mean_of_products_not_the_product_of_means():
    model = ScriptedModel({("aaaa", "aaab"): 1.0, ("bbbb", "bbbb"): 0.2})
    scores = score_examples("PR2", ["aaaa", "bbbb", "cccc"], ["aaab", "bbbb", None], [True, True, False], model)
    assert [s.bodega for s in scores] == pytest.approx([0.75, 0.2, 0.0])
    summary = summarise(scores, queries=[10, 20, 30], attack_seconds=6.0, scoring_seconds=1.5)
    assert summary.bodega_score == pytest.approx((0.75 + 0.2 + 0.0) / 3)
    assert summary.success_score == pytest.approx(2 / 3)
    assert summary.semantic_score == pytest.approx(0.6)  # successes only
    assert summary.character_score == pytest.approx(0.875)
    assert summary.bodega_score != pytest.approx(summary.success_score * 0.6 * 0.875)


def test_summary_prints_bodegas_nine_lines_with_attack_and_evaluation_time_apart():
    scores = [ExampleScore(True, 0.5, 0.8, 0.4), ExampleScore(False, None, None, 0.0)]
    summary = summarise(scores, queries=[3, 5], attack_seconds=10.0, scoring_seconds=2.0)
    lines = summary.lines()
    assert [line.split(":")[0] for line in lines] == [
        "Subset size", "Success score", "Semantic score", "Character score", "BODEGA score",
        "Queries per example", "Total attack time", "Time per example", "Total evaluation time"]
    assert lines[0] == "Subset size: 2"
    assert lines[5] == "Queries per example: 4.0"
    assert lines[6] == "Total attack time: 10.0"
    assert lines[7] == "Time per example: 5.0"
    assert lines[8] == "Total evaluation time: 2.0"
    assert summary.to_dict()["bodega_score"] == pytest.approx(0.2)


def test_summary_without_successes_has_no_semantic_mean():
    summary = summarise([ExampleScore(False, None, None, 0.0)], [1], 1.0, 0.1)
    assert summary.semantic_score is None and summary.character_score is None
    assert "Semantic score: nan" in summary.lines()


def test_all_pairs_of_all_examples_go_to_the_model_in_one_call():
    model = ScriptedModel(default=1.0)
    score_examples("FC", ["a ~ b", "c ~ d"], ["a ~ x", "c ~ y"], [True, True], model)
    assert len(model.calls) == 1 and len(model.calls[0]) == 4


def test_character_model_is_the_character_score_of_each_sentence():
    [score] = score_examples("PR2", ["abcdefghij"], ["abcdefghiX"], [True], CharacterModel())
    assert score.semantic == pytest.approx(0.9)
    assert score.bodega == pytest.approx(0.81)
