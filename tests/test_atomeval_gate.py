"""The one-way gate and its diagnostics on hand-made cases."""
from __future__ import annotations

import pytest

from bodega.atomeval.gate import Gate
from bodega.atomeval.matching import Matcher, MatcherConfig, SlotStatus

EVIDENCE = ("Telemundo is an American Spanish-language terrestrial television network owned by Comcast "
            "through the NBCUniversal division .")
CLAIM = "Telemundo is a English-language television network ."


def test_changed_year_fails_and_drifts_to_the_evidence(gate):
    evidence = "His debut solo studio album Everyday Robots was released on 28 April 2014 ."
    verdict = gate.judge("Damon Albarn 's debut album was released in 2011 .",
                         "Damon Albarn 's debut album was released in 2014 .", evidence)
    assert not verdict.valid
    (drift,) = [d for d in verdict.diagnostics if d.kind == "EvDrift"]
    assert "2014" in drift.detail and drift.original is verdict.original_atoms[0]
    other_year = gate.judge("Damon Albarn 's debut album was released in 2011 .",
                            "Damon Albarn 's debut album was released in 1999 .", evidence)
    assert not other_year.valid and not other_year.has("EvDrift")


def test_generalised_noun_is_scope_loss(gate):
    verdict = gate.judge("Savages is a German documentary .", "Savages is a German film .")
    assert not verdict.valid
    (loss,) = [d for d in verdict.diagnostics if d.kind == "ScopeLoss"]
    assert "documentary -> film" in loss.detail
    dropped = gate.judge("Savages is a German film .", "Savages is a film .")
    assert not dropped.valid and dropped.has("ScopeLoss")
    # the other way round is a more specific claim: it still asserts the original
    assert gate.judge("Savages is a film .", "Savages is a German film .").valid


def test_added_evidence_fact_passes_and_is_event(gate):
    verdict = gate.judge(CLAIM, "Telemundo , owned by Comcast , is a English-language television network .",
                         EVIDENCE)
    assert verdict.valid
    assert verdict.has("EvEnt") and not verdict.has("UnverAdd")


def test_added_unsupported_fact_passes_and_is_unveradd(gate):
    verdict = gate.judge(CLAIM, "Telemundo , founded by aliens , is a English-language television network .",
                         EVIDENCE)
    assert verdict.valid
    (add,) = [d for d in verdict.diagnostics if d.kind == "UnverAdd"]
    assert "aliens" in add.detail


def test_negation_fails_the_gate(gate):
    verdict = gate.judge("Magic Johnson played for the Lakers .", "Magic Johnson did not play for the Lakers .")
    assert not verdict.valid
    assert "polarity" in verdict.judgements[0].best.problems[0]
    assert not gate.judge("Telemundo is a website .", "Telemundo is never a website .").valid


def test_paraphrase_synonym_homoglyph_and_reordering_pass(gate):
    assert gate.judge(CLAIM, "Telemundo is a English-language TV network .").valid
    assert gate.judge(CLAIM, "Telemundo is a Εnglish-language televisiоn network .").valid  # homoglyphs
    assert gate.judge(CLAIM, "An English-language television network is Telemundo .").valid


def test_hedge_is_scope_loss(gate):
    verdict = gate.judge(CLAIM, "Telemundo may be a English-language television network .")
    assert not verdict.valid and verdict.has("ScopeLoss")


def test_matcher_without_wordnet_and_typos():
    plain = Matcher(MatcherConfig(use_wordnet=False, typo_max_edits=0))
    assert plain.compare_text("television network", "TV network").status is SlotStatus.CHANGED
    assert plain.compare_text("championship", "championsihp").status is SlotStatus.CHANGED
    tolerant = Matcher(MatcherConfig(use_wordnet=False, typo_max_edits=2))
    assert tolerant.compare_text("championship", "championsihp").status is SlotStatus.SAME
    assert tolerant.compare_text("in 2011", "in 2012").status is SlotStatus.CHANGED


def test_split_words_are_read_as_words(gate):
    from bodega.atomeval.normalise import rejoin_split_words

    assert rejoin_split_words("scandinavia does n ot contain greenland .",
                              "scandinavia does not contain greenland .") == "scandinavia does not contain greenland ."
    assert rejoin_split_words("the end", "theend the end") == "the end"  # real words stay apart
    assert gate.judge("Scandinavia does not contain Greenland .", "Scandinavia does n ot contain Green land .").valid


def test_negative_quantifier_and_exclusion_words_do_not_specialise(gate):
    assert not gate.judge("Tamerlan Tsarnaev had a brother .", "Tamerlan Tsarnaev had no brother .").valid
    assert not gate.judge("The show was set in Death Valley .", "The show was set outside Death Valley .").valid
    assert not gate.judge("A.J. Styles won a championship .", "A.J. Styles won all championships .").valid


@pytest.mark.parametrize("claim, rewrite", [
    ("Stone directed Savages .", "Savages directed Stone ."),                       # subject <-> object
    ("Savages was directed by Stone .", "Stone was directed by Savages ."),         # passive, roles swapped
    ("Magic Johnson played for the Lakers .", "The Lakers played for Magic Johnson ."),  # subject <-> modifier
    ("Stone gave the award to Smith .", "Smith gave the award to Stone ."),         # who gave to whom
    ("The Beatles influenced Nirvana in the 1990s .", "Nirvana influenced The Beatles in the 1990s ."),
    ("Stone directed Savages in 2012 and wrote Platoon .",                          # modifier to another atom
     "Stone directed Savages and wrote Platoon in 2012 ."),
])
def test_role_swaps_fail_the_gate(gate, claim, rewrite):
    verdict = gate.judge(claim, rewrite)
    assert not verdict.valid
    assert not any(j.via == "reordered" for j in verdict.judgements if not j.preserved)


@pytest.mark.parametrize("claim, rewrite", [
    ("Stone directed Savages .", "Savages was directed by Stone ."),                # active -> passive
    ("Savages was directed by Stone .", "Stone directed Savages ."),                # passive -> active
    ("The Beatles influenced Nirvana in the 1990s .", "Nirvana was influenced in the 1990s by The Beatles ."),
    ("Savages was directed by Oliver Stone in 2012 .", "In 2012 Oliver Stone directed Savages ."),
    ("Stone directed Savages in 2012 and wrote Platoon .",                          # modifier moved to the front
     "In 2012 , Stone directed Savages and wrote Platoon ."),
    ("Stone gave the award to Smith .", "Stone gave Smith the award ."),            # dative shift
    ("Tom Cruise married Katie Holmes .", "Katie Holmes married Tom Cruise ."),     # a reciprocal verb
    (CLAIM, "An English-language television network is Telemundo ."),               # the copula
])
def test_voice_and_reordered_modifiers_stay_valid(gate, claim, rewrite):
    assert gate.judge(claim, rewrite).valid


def test_role_check_is_a_parameter():
    from bodega.atomeval.extract_spacy import SpacyExtractor
    from bodega.atomeval.gate import GateConfig

    loose = Gate(SpacyExtractor(), config=GateConfig(check_roles=False))
    assert loose.judge("Stone directed Savages .", "Savages directed Stone .").valid  # the old rule


def test_without_the_extractor_the_whole_sentence_is_compared_and_without_matching_only_equal_atoms_count(gate):
    from bodega.atomeval.ablation import ExactAtomGate, SentenceExtractor
    from bodega.atomeval.gate import Gate

    claim = "Stone directed Savages in 2012 ."
    whole = Gate(SentenceExtractor())
    assert whole.judge(claim, "Stone directed the film Savages in 2012 .").valid  # says everything and more
    assert not whole.judge(claim, "Stone directed Savages .").valid  # the year is gone
    exact = ExactAtomGate(gate)
    assert exact.judge(claim, "Stone directed Savages in 2012 .").valid
    assert not exact.judge(claim, "In 2012 , Savages was directed by Stone .").valid  # the full gate accepts this
    assert gate.judge(claim, "In 2012 , Savages was directed by Stone .").valid


def test_agreement_reports_accuracy_and_the_share_called_valid():
    from bodega.atomeval.human import agreement

    result = agreement("gate", [True, True, False, False], [True, False, True, False], [0.9, 0.2, 0.8, 0.1])
    assert result.accuracy == 0.5 and result.predicted_share == 0.5 and result.precision == 0.5
    assert agreement("score", [True, False], None, [0.9, 0.1]).accuracy is None
