"""TextFooler (needs the MiniLM encoder) and the OpenAttack backend, on the keyword victim."""
from __future__ import annotations

import numpy as np
import pytest

from attack_fakes import KeywordVictim
from bodega.errors import BodegaError
from bodega.attacks import Goal, get_attacker

TEXT = "They say the evil plan would destroy the village."


def test_textfooler_keeps_meaning_window_and_text():
    attacker = get_attacker("TextFooler")
    victim = KeywordVictim()
    result = attacker.attack(victim, TEXT, Goal.untargeted(1), np.random.default_rng(0))
    assert result.success and victim.predict([result.adversarial])[0] == 0
    assert result.adversarial.startswith("They say the ") and result.adversarial.endswith(" the village.")


def test_openattack_backend_runs_offline_through_the_accountant():
    pytest.importorskip("OpenAttack")
    from bodega.victims.accounting import QueryAccountant

    accountant = QueryAccountant(KeywordVictim())
    attacker = get_attacker("PWWS", backend="openattack")
    result = attacker.attack(accountant, TEXT, Goal.untargeted(1), np.random.default_rng(0))
    assert result.success
    assert result.adversarial == result.adversarial.lower() and result.adversarial.endswith(" .")
    assert accountant.queries > 0
    with pytest.raises(BodegaError, match="native"):
        get_attacker("TextFooler", backend="openattack")
