"""Any victim as an ``OpenAttack.Classifier``, counted through the same accountant.

OpenAttack's own attackers call ``get_prob``/``get_pred``; routing them through a
:class:`~bodega.victims.accounting.QueryAccountant` gives one set of query counts, one
budget and one cache whichever backend runs the attack. Importing this module imports
OpenAttack, so nothing else in :mod:`bodega.victims` imports it.
"""
from __future__ import annotations

import numpy as np
import OpenAttack

from bodega.victims.accounting import QueryAccountant


class AccountedClassifier(OpenAttack.Classifier):
    """OpenAttack's two-method classifier protocol over a QueryAccountant."""

    def __init__(self, accountant: QueryAccountant):
        self.accountant = accountant

    def get_prob(self, input_: list[str]) -> np.ndarray:
        """OpenAttack's probability call, counted by the accountant."""
        return self.accountant.predict_proba(list(input_))

    def get_pred(self, input_: list[str]) -> np.ndarray:
        """OpenAttack's decision call, counted by the accountant."""
        return self.get_prob(input_).argmax(axis=1)


def as_openattack_classifier(victim_or_accountant) -> AccountedClassifier:
    """Wrap a Victim (in a fresh unlimited accountant) or an existing QueryAccountant."""
    if isinstance(victim_or_accountant, QueryAccountant):
        return AccountedClassifier(victim_or_accountant)
    return AccountedClassifier(QueryAccountant(victim_or_accountant))
