"""Bounded resources: no victim is given a text of unbounded length."""
from __future__ import annotations

import logging

import numpy as np


class _Ones:
    name = "ones"

    def score(self, pairs):
        return np.ones(len(pairs))


def test_a_long_text_is_cut_for_a_victim_without_a_trimming_tokenizer(caplog):
    """Through bodega.wrap (or a py: victim without --trim-tokenizer) texts went to the victim, the attacker and the
    scorer whole: 65 KB needed 2.3 GB, 1 MB more than 23 GB."""
    import bodega
    from bodega.victims.trimming import MAX_CHARACTERS

    seen: list[int] = []

    def predict(texts):
        seen.extend(len(text) for text in texts)
        return [[0.2, 0.8]] * len(texts)

    long = "an evil plan to deceive the public " * 30_000  # about 1 MB
    with caplog.at_level(logging.WARNING):
        report = bodega.attack(predict, [long, "a short evil plan"], [1, 1], task="PR2", attacker="DeepWordBug",
                               query_budget=5, semantic=_Ones())
    assert seen and max(seen) <= MAX_CHARACTERS
    assert len(report.records) == 2 and len(report.records[0].original) == MAX_CHARACTERS
    lines = [r.getMessage() for r in caplog.records if "characters and are cut there" in r.getMessage()]
    assert lines == [f"1 of 2 texts are longer than {MAX_CHARACTERS:,} characters and are cut there: predict has "
                     "no trimming tokenizer (give one with --trim-tokenizer or trim_tokenizer=)"]
