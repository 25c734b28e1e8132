"""Samples of the attack set: one seeded permutation per task and seed, shared by every victim and attacker."""
from __future__ import annotations

import numpy as np

from attack_fakes import KeywordVictim
from bodega.attacks.runner import Target, sample_description, select_examples


class ConstantVictim:
    """Calls every text ``label``: a victim whose decisions differ from the keyword victim's."""

    def __init__(self, label: int) -> None:
        self.label = label

    def predict_proba(self, texts):
        probabilities = np.zeros((len(texts), 2))
        probabilities[:, self.label] = 1.0
        return probabilities


class OddVictim:
    """Calls 1 the texts whose number is odd, and counts the texts it was asked about."""

    def __init__(self) -> None:
        self.asked = 0

    def predict_proba(self, texts):
        self.asked += len(texts)
        odd = np.array([int(t.split()[-1]) % 2 for t in texts])
        return np.stack([1 - odd, odd], axis=1).astype(float)


def sorted_by_label(n_zero: int = 280, n_one: int = 120) -> list[Target]:
    """An attack file sorted by label, as three of BODEGA's tasks ship theirs (zeros first)."""
    labels = [0] * n_zero + [1] * n_one
    return [Target(i, f"id-{i}", f"text {i}", label) for i, label in enumerate(labels)]


def test_untargeted_sample_of_a_sorted_file_holds_both_labels_in_its_proportions():
    targets = sorted_by_label()
    sample = select_examples(targets, None, targeted=False, n_examples=50)
    ones = sum(t.label for t in sample)
    # 30% positives in the file: 15 expected of 50; the hypergeometric sd is about 3.
    assert len(sample) == 50 and 6 <= ones <= 24
    assert sample_description(sample, 0)["labels"] == {"0": 50 - ones, "1": ones}
    # The old rule (first N rows) gave 50 zeros here.
    assert [t.index for t in targets[:50]] != [t.index for t in sample]


def test_samples_of_n_are_nested_in_samples_of_2n():
    targets = sorted_by_label()
    for seed in (0, 1, 7):
        small = {t.index for t in select_examples(targets, None, False, 25, seed=seed)}
        large = {t.index for t in select_examples(targets, None, False, 50, seed=seed)}
        assert small < large
        victim = OddVictim()
        small_t = {t.index for t in select_examples(targets, victim, True, 10, seed=seed)}
        large_t = {t.index for t in select_examples(targets, victim, True, 20, seed=seed)}
        assert small_t < large_t


def test_untargeted_sample_is_the_same_for_two_victims_and_differs_by_seed():
    targets = sorted_by_label()
    a = select_examples(targets, KeywordVictim(), False, 40, seed=3)
    b = select_examples(targets, ConstantVictim(0), False, 40, seed=3)
    assert [t.index for t in a] == [t.index for t in b]
    assert [t.index for t in a] != [t.index for t in select_examples(targets, None, False, 40, seed=4)]
    assert [t.index for t in a] == sorted(t.index for t in a)  # attacked in row order


def test_zero_or_absent_means_every_row():
    targets = sorted_by_label(30, 10)
    assert len(select_examples(targets, None, False, 0)) == len(select_examples(targets, None, False, None)) == 40


def test_targeted_sample_is_the_eligible_rows_of_the_same_order():
    targets = sorted_by_label()
    victim = OddVictim()
    sample = select_examples(targets, victim, True, 10, batch_size=8, seed=5)
    assert len(sample) == 10 and all(t.label == 1 and t.index % 2 == 1 for t in sample)
    order = [i for i in np.random.default_rng([22, 5]).permutation(len(targets))
             if targets[i].label == 1 and i % 2 == 1]
    assert [t.index for t in sample] == sorted(order[:10])
    assert victim.asked < 120  # asked only until the sample was full, not about every positive
    assert select_examples(targets, ConstantVictim(0), True, 10) == []
