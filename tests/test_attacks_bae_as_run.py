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
from functools import lru_cache

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


def ratio(text: str, reference: str, leniency: float = 1.0) -> float:
    """The stand-in for the Universal Sentence Encoder's cosine: similar texts score near 1.

    ``leniency`` shrinks the distance from 1, so that more fillers pass OpenAttack's fixed 0.936.
    """
    return 1.0 - (1.0 - difflib.SequenceMatcher(None, text, reference).ratio()) / leniency


class RatioEncoder:
    """OpenAttack's sentence-encoder protocol (``TAGS``, ``calc_score``) over :func:`ratio`."""

    def __init__(self, leniency: float):
        from OpenAttack.tags import TAG_English

        self.TAGS = {TAG_English}
        self.leniency = leniency

    def calc_score(self, text: str, reference: str) -> float:
        return ratio(text, reference, self.leniency)


def ratios(leniency: float):
    return lambda texts, reference: np.array([ratio(t, reference, leniency) for t in texts])


LENIENCIES = (1.0, 4.0)


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory) -> str:
    from mlm_fakes import tiny_bert

    return str(tiny_bert(tmp_path_factory.mktemp("mlm") / "tiny-bert"))


@pytest.fixture(scope="module")
def nlp():
    from bodega.attacks.pos import _pipeline

    return _pipeline()


@pytest.fixture(scope="module")
def openattack_bae(tiny_mlm, nlp):
    """``BAEAttacker(device, filter_words=OpenAttack's list + '~')`` with the two offline stand-ins, per leniency."""
    import OpenAttack
    from OpenAttack.attackers import bae as bae_module

    real = bae_module.DataManager

    @lru_cache(maxsize=None)
    def tag(words: tuple[str, ...]) -> list[tuple[str, str]]:
        return list(zip(words, penn_tags(nlp, [words])[0]))

    class TaggerShim:
        @staticmethod
        def load(name: str, cached: bool = True):
            if name == "TProcess.NLTKPerceptronPosTagger":
                return lambda words: tag(tuple(words))
            return real.load(name, cached)

    filter_words = OpenAttack.attack_assist.filter_words.get_default_filter_words("english") + ["~"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bae_module, "DataManager", TaggerShim)
        yield {leniency: OpenAttackAttacker("BAE", OpenAttack.attackers.BAEAttacker(
                   mlm_path=tiny_mlm, device="cpu", sentence_encoder=RatioEncoder(leniency), filter_words=filter_words))
               for leniency in LENIENCIES}


@pytest.fixture(scope="module")
def native_bae(tiny_mlm, nlp):
    return {leniency: BaeAsRun(tiny_mlm, frozenset(bodega_filter_words("openattack")), ratios(leniency), nlp=nlp)
            for leniency in LENIENCIES}


def run(engine, text: str, targeted: bool, index: int, victim=None) -> dict:
    return attack_one(engine, QueryAccountant(victim or KeywordVictim()), Target(index, str(index), text, 1),
                      targeted, 0).to_dict()


_REFERENCE: dict[tuple, dict] = {}


def reference_run(openattack_bae, index: int, targeted: bool, leniency: float) -> dict:
    key = (index, targeted, leniency)
    if key not in _REFERENCE:
        _REFERENCE[key] = run(openattack_bae[leniency], TEXTS[index], targeted, index)
    return _REFERENCE[key]


CASES = [(i, t, leniency) for i in range(len(TEXTS)) for t in (False, True) for leniency in LENIENCIES]


@pytest.mark.parametrize("index,targeted,leniency", CASES)
def test_bae_as_run_is_openattacks(index, targeted, leniency, native_bae, openattack_bae):
    native = run(native_bae[leniency], TEXTS[index], targeted, index)
    reference = reference_run(openattack_bae, index, targeted, leniency)
    assert native["error"] is None and reference["error"] is None
    assert native["success"] == reference["success"]
    assert bodega_normalise(native["adversarial"]) == bodega_normalise(reference["adversarial"])
    assert native["queries"] == reference["queries"]


def test_the_cases_exercise_success_failure_and_the_threshold(openattack_bae):
    """Guard against a vacuous comparison: OpenAttack's BAE both succeeds and fails on these cases, and the
    similarity stand-in's leniency changes outcomes (so the 0.936 threshold is where both sides apply it)."""
    outcomes = {case: reference_run(openattack_bae, *case) for case in CASES}
    successes = [case for case, record in outcomes.items() if record["success"]]
    assert 0 < len(successes) < len(outcomes)
    for leniency in LENIENCIES[1:]:
        strict = [(outcomes[(i, t, 1.0)]["adversarial"], outcomes[(i, t, 1.0)]["queries"]) for i, t, _ in CASES]
        loose = [(outcomes[(i, t, leniency)]["adversarial"], outcomes[(i, t, leniency)]["queries"])
                 for i, t, _ in CASES]
        assert strict != loose


def test_the_recipe_builds_the_as_run_search_only_when_asked(tiny_mlm):
    as_run = get_attacker("BAE", profile="smoke", fidelity="as-run", mlm_path=tiny_mlm)
    assert isinstance(as_run, BaeAsRun) and as_run.similarity_threshold == 0.936 and "~" in as_run.filter_words
    assert as_run.k == 50 and as_run.max_change_rate == 0.2
    assert not isinstance(get_attacker("BAE", profile="smoke", fidelity="fixed", mlm_path=tiny_mlm), BaeAsRun)
    assert not isinstance(get_attacker("BAE", profile="smoke", fidelity="as-run", openattack_search=False,
                                       mlm_path=tiny_mlm), BaeAsRun)


def test_the_recipe_runs_on_the_profiles_sentence_encoder(tiny_mlm):
    """The as-run recipe scores similarity with a sentence encoder's cosine (here the tiny model's, threshold 0)."""
    attacker = get_attacker("BAE", profile="smoke", fidelity="as-run", mlm_path=tiny_mlm, encoder_path=tiny_mlm,
                            similarity_threshold=0.0)
    scores = attacker.similarity(["the evil enemy", "a calm village"], "the evil enemy")
    assert scores[0] == pytest.approx(1.0, abs=1e-5) and scores[1] < scores[0]
    record = run(attacker, TEXTS[6], False, 6)
    assert record["error"] is None and record["queries"] > len(TEXTS[6].split())
    assert record["adversarial"] is None or record["adversarial"] == record["adversarial"].lower()
