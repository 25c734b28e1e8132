"""BAE as-run against OpenAttack 2.1.1's own ``BAEAttacker``, as BODEGA's runs/attack.py built it.

Both sides run on the same tiny random masked LM (loaded from a folder, as OpenAttack
loads ``mlm_path``), the same deterministic victim, texts and runner. OpenAttack's BAE
needs two things that cannot be had offline, so both sides get the same stand-ins:
the Universal Sentence Encoder is replaced by a character-sequence ratio (passed as
OpenAttack's ``sentence_encoder``, which the constructor accepts), and the NLTK
perceptron tagger that OpenAttack loads through ``DataManager`` by spaCy's Penn tags
of the same word list. Everything else is OpenAttack's own code: the adversarial texts
after BODEGA's normalisation and the query counts must be identical.
"""
from __future__ import annotations

import difflib
import re

import numpy as np
import pytest

from attack_fakes import SENTENCES, KeywordVictim

pytest.importorskip("OpenAttack")

from bodega.attacks import get_attacker  # noqa: E402
from bodega.attacks.bae_as_run import BaeAsRun, penn_tags  # noqa: E402
from bodega.attacks.filter_words import bodega_filter_words  # noqa: E402
from bodega.attacks.openattack_backend import OpenAttackAttacker  # noqa: E402
from bodega.attacks.runner import Target, attack_one  # noqa: E402
from bodega.victims.accounting import QueryAccountant  # noqa: E402

TEXTS = SENTENCES + [
    "the corrupt press will say that the great nation is calm and the plan is fine and good for us all",
    "they lie again and again about the evil enemy who will attack the kind village with the press",
]


def bodega_normalise(text: str | None) -> str | None:
    """BODEGA's ``normalise_for_lev``: lower-case, newlines to spaces, WordPunct tokens joined by spaces."""
    if text is None:
        return None
    return " ".join(re.findall(r"\w+|[^\w\s]+", text.lower().replace("\n", " ")))


def ratio(text: str, reference: str) -> float:
    """The stand-in for the Universal Sentence Encoder's cosine: similar texts score near 1."""
    return difflib.SequenceMatcher(None, text, reference).ratio()


class RatioEncoder:
    """OpenAttack's sentence-encoder protocol (``TAGS``, ``calc_score``) over :func:`ratio`."""

    def __init__(self):
        from OpenAttack.tags import TAG_English

        self.TAGS = {TAG_English}

    def calc_score(self, text: str, reference: str) -> float:
        return ratio(text, reference)


def ratios(texts, reference: str) -> np.ndarray:
    return np.array([ratio(t, reference) for t in texts])


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory) -> str:
    from mlm_fakes import tiny_bert

    return str(tiny_bert(tmp_path_factory.mktemp("mlm") / "tiny-bert"))


@pytest.fixture(scope="module")
def nlp():
    from bodega.attacks.pos import _pipeline

    return _pipeline()


@pytest.fixture
def openattack_bae(tiny_mlm, nlp, monkeypatch):
    """``BAEAttacker(device, filter_words=OpenAttack's list + '~')`` with the two offline stand-ins."""
    import OpenAttack
    from OpenAttack.attackers import bae as bae_module

    real = bae_module.DataManager

    class TaggerShim:
        @staticmethod
        def load(name: str, cached: bool = True):
            if name == "TProcess.NLTKPerceptronPosTagger":
                return lambda words: list(zip(words, penn_tags(nlp, [words])[0]))
            return real.load(name, cached)

    monkeypatch.setattr(bae_module, "DataManager", TaggerShim)
    filter_words = OpenAttack.attack_assist.filter_words.get_default_filter_words("english") + ["~"]
    attacker = OpenAttack.attackers.BAEAttacker(mlm_path=tiny_mlm, device="cpu", sentence_encoder=RatioEncoder(),
                                                filter_words=filter_words)
    return OpenAttackAttacker("BAE", attacker)


@pytest.fixture(scope="module")
def native_bae(tiny_mlm, nlp):
    return BaeAsRun(tiny_mlm, frozenset(bodega_filter_words("openattack")), ratios, nlp=nlp)


def run(engine, text: str, targeted: bool, index: int, victim=None) -> dict:
    return attack_one(engine, QueryAccountant(victim or KeywordVictim()), Target(index, str(index), text, 1),
                      targeted, 0)


CASES = [(i, t) for i in range(len(TEXTS)) for t in (False, True)]


@pytest.mark.parametrize("index,targeted", CASES)
def test_bae_as_run_is_openattacks(index, targeted, native_bae, openattack_bae):
    native = run(native_bae, TEXTS[index], targeted, index)
    reference = run(openattack_bae, TEXTS[index], targeted, index)
    assert native["error"] is None and reference["error"] is None
    assert native["success"] == reference["success"]
    assert bodega_normalise(native["adversarial"]) == bodega_normalise(reference["adversarial"])
    assert native["queries"] == reference["queries"]
