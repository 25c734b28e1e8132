"""``fidelity``: the paper profile runs the native attackers as BODEGA ran OpenAttack; cpu and smoke run them fixed."""
from __future__ import annotations

import pytest

from bodega.errors import BodegaError
from bodega.attacks import get_attacker
from bodega.attacks.constraints import SentenceEncoder, SentenceSimilarity


@pytest.mark.parametrize("profile,expected", [("paper", True), ("cpu", False), ("smoke", False)])
def test_the_profile_chooses_as_run_or_fixed(profile, expected):
    pwws = get_attacker("PWWS", profile=profile)
    assert (pwws.respace, pwws.lower, pwws.reask) == (expected,) * 3
    assert pwws.search.keywords["openattack_order"] is expected
    dwb = get_attacker("DeepWordBug", profile=profile)
    assert dwb.respace is expected and dwb.lower is False  # OpenAttack re-spaces DeepWordBug but keeps its case
    assert dwb.options["homoglyphs"] == ("openattack" if expected else "bodega")
    pso = get_attacker("PSO", profile=profile)
    assert pso.search.keywords["openattack_bests"] is expected and pso.reask is False


def test_one_option_overrides_the_fidelity():
    genetic = get_attacker("Genetic", profile="paper", reask=False)
    assert genetic.respace and not genetic.reask and genetic.search.keywords["openattack_order"]
    assert get_attacker("Genetic", fidelity="as-run", profile="cpu").reask
    with pytest.raises(BodegaError, match="fidelity"):
        get_attacker("PWWS", fidelity="exact")


def test_sticky_threshold_keeps_the_short_text_threshold_for_later_texts():
    """OpenAttack's TextFooler overwrites its threshold after a text shorter than the window."""
    fixed = SentenceSimilarity(SentenceEncoder("unused"), threshold=0.5, window=15)
    sticky = SentenceSimilarity(SentenceEncoder("unused"), threshold=0.5, window=15, sticky=True)
    assert [fixed.threshold_for(n) for n in (20, 5, 20)] == [0.5, 0.1, 0.5]
    assert [sticky.threshold_for(n) for n in (20, 5, 20)] == [0.5, 0.1, 0.1]
