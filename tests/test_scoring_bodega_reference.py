"""Our scorer against a literal copy of BODEGA's (tests/bodega_reference_score.py) and OpenAttack's tokenizer.

Real attack texts of the four tasks, perturbed copies of them, and OpenAttack-style outputs
(lower-cased, PunctTokenizer tokens joined by single spaces) go through both; the
per-example scores, the aggregates and the exact texts given to the semantic model must
be the same. The semantic model is a deterministic, case-sensitive stand-in on both sides.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import Levenshtein
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bodega_reference_score import ReferenceBODEGAScore, openattack_style, openattack_tokenizer
from bodega.scoring import score_examples, summarise
from bodega.scoring.punct import normalise_for_bert, normalise_for_lev, punct_join

pytest.importorskip("OpenAttack")
DATA = Path(__file__).resolve().parents[1] / "data"


@lru_cache(maxsize=None)
def attack_texts(task: str) -> tuple[str, ...]:
    from bodega.data.tsv import read_tsv

    path = DATA / task / "attack.tsv"
    if not path.exists():
        pytest.skip(f"{path} is absent: run `bodega data` to prepare the tasks")
    return tuple(e.text for e in read_tsv(path))


def openattack_join(text: str) -> str:
    return " ".join(openattack_tokenizer().tokenize(text, pos_tagging=False))


def stand_in(reference: str, candidate: str) -> float:
    """Deterministic, case-sensitive, and often outside [0, 1] (so clipping matters)."""
    longest = max(len(reference), len(candidate), 1)
    return 1.2 - 1.5 * Levenshtein.distance(reference, candidate) / longest


class StandInModel:
    name = "stand-in"

    def __init__(self):
        self.sent: list[tuple[str, str]] = []

    def score(self, pairs):
        self.sent.extend(pairs)
        return np.array([stand_in(a, b) for a, b in pairs])


def reference_similarity(references: list[str], candidates: list[str]) -> list[float]:
    return [stand_in(a, b) for a, b in zip(references, candidates)]


# --- the tokenizer --------------------------------------------------------------------------

@pytest.mark.parametrize("task", ["PR2", "FC", "HN", "RD"])
def test_normalisation_equals_openattack_on_every_attack_text(task):
    for k, text in enumerate(attack_texts(task)):
        lev, bert = text.lower().replace("\n", " "), text.replace("\n", " ")
        assert normalise_for_lev(text) == openattack_join(lev), f"{task} text {k}: {text[:80]!r}"
        assert normalise_for_bert(text) == openattack_join(bert), f"{task} text {k}: {text[:80]!r}"


INSERTS = ['."', ".”", "?“", ".)", "!)", ".(", ".'", '")--', "’--", ".:", "?!", "...", ". . .", "Mr.",
           "U.S.", "--", "~", " ~ ", "\n", "  ", "(", "“", "é", "\u0301", "\u032f", "İ", "Σ", "ɑ", "․", "\x1c",
           "\u200d", "½", "\xa0"]


@st.composite
def perturbed_text(draw):
    """A real text (any task) with random edits of the kinds punkt and the word expression care about."""
    task = draw(st.sampled_from(["PR2", "FC", "HN", "RD"]))
    texts = attack_texts(task)
    text = texts[draw(st.integers(0, len(texts) - 1))]
    start = draw(st.integers(0, max(len(text) - 300, 0)))
    chars = list(text[start:start + 300])
    for _ in range(draw(st.integers(1, 10))):
        at = draw(st.integers(0, len(chars)))
        kind = draw(st.sampled_from(["insert", "delete", "case"]))
        if kind == "insert":
            chars[at:at] = list(draw(st.sampled_from(INSERTS)))
        elif kind == "delete":
            del chars[at:at + draw(st.integers(1, 3))]
        elif at < len(chars):
            chars[at] = chars[at].swapcase()
    return "".join(chars)


@settings(max_examples=300, deadline=None)
@given(perturbed_text())
def test_normalisation_equals_openattack_on_perturbed_texts(text):
    assert normalise_for_lev(text) == openattack_join(text.lower().replace("\n", " "))
    assert normalise_for_bert(text) == openattack_join(text.replace("\n", " "))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("aZ1 .?!,;:'\"()[]{}-*@~\t“”‘’«»…\u0301\x1c\u200d½\xa0")
                                + ["Mr", "e.g", " i.", "--"]),
                max_size=40).map("".join))
def test_punctuation_soup_equals_openattack(text):
    assert punct_join(text) == openattack_join(text)


def test_a_break_inside_punctuation_splits_it_as_openattack_does():
    # punkt ends a sentence between '.' and '(' here, so OpenAttack gives '.' and '(' apart
    assert punct_join("It ended.(Next one starts here. Two.") == openattack_join("It ended.(Next one starts here. Two.")
    assert "ended . (" in punct_join("It ended.(Next one starts here. Two.")
    assert punct_join("It ends here.)") == "It ends here .)"


# --- the whole scorer -----------------------------------------------------------------------

def perturb(text: str, rng: np.random.Generator) -> str:
    """A seeded attack-like edit: swapped letters, look-alikes, changed words, punctuation, sentences."""
    words = text.split(" ")
    for _ in range(max(1, len(words) // 15)):
        k = int(rng.integers(len(words)))
        word, kind = words[k], int(rng.integers(6))
        if kind == 0 and len(word) > 3:
            i = int(rng.integers(1, len(word) - 2))
            words[k] = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        elif kind == 1:
            words[k] = word.replace("a", "ɑ").replace("e", "е")
        elif kind == 2:
            words[k] = words[int(rng.integers(len(words)))]
        elif kind == 3:
            words[k] = word + ["!", ".", '."', ".”", ",", " ~"][int(rng.integers(6))]
        elif kind == 4:
            words[k] = word.upper()
        else:
            words[k] = ""
    attacked = " ".join(words)
    if rng.random() < 0.3:
        attacked = "An added sentence. " + attacked
    return attacked


def compare(task: str, originals: list[str], adversarials: list[str | None]) -> None:
    successes = [a is not None for a in adversarials]
    model = StandInModel()
    ours = score_examples(task, originals, adversarials, successes, model)
    reference = ReferenceBODEGAScore(task, reference_similarity)
    for original, adversarial in zip(originals, adversarials):
        reference.after_attack(original, adversarial)
    (success, semantic, character, bodega), per_example = reference.compute()
    assert model.sent == reference.sent_to_model
    for k, (got, (sem, char, b)) in enumerate(zip(ours, per_example)):
        where = f"{task} example {k}: {originals[k][:60]!r}"
        assert got.success == (adversarials[k] is not None), where
        assert got.semantic == (None if sem is None else pytest.approx(sem, rel=1e-12, abs=1e-15)), where
        assert got.character == (None if char is None else pytest.approx(char, rel=1e-12, abs=1e-15)), where
        assert got.bodega == pytest.approx(b, rel=1e-12, abs=1e-15), where
    summary = summarise(ours, [0] * len(ours), 0.0, 0.0)
    assert summary.success_score == pytest.approx(success)
    assert summary.semantic_score == pytest.approx(semantic)
    assert summary.character_score == pytest.approx(character)
    assert summary.bodega_score == pytest.approx(bodega)


SIZES = {"PR2": 40, "FC": 40, "HN": 6, "RD": 25}


@pytest.mark.parametrize("task", ["PR2", "FC", "HN", "RD"])
def test_scores_equal_bodegas_on_perturbed_real_texts(task):
    rng = np.random.default_rng(12)
    texts = list(attack_texts(task)[:SIZES[task]])
    adversarials = [None if k % 7 == 3 else perturb(t, rng) for k, t in enumerate(texts)]
    compare(task, texts, adversarials)


@pytest.mark.parametrize("task", ["PR2", "FC", "HN", "RD"])
def test_scores_equal_bodegas_on_openattack_style_outputs(task):
    """OpenAttack's attackers return lower-cased, re-spaced text; the native twin keeps case and spacing."""
    rng = np.random.default_rng(5)
    texts = list(attack_texts(task)[SIZES[task]:2 * SIZES[task]])
    attacked = [perturb(t, rng) for t in texts]
    compare(task, texts, [openattack_style(a) for a in attacked])
    compare(task, texts, attacked)


def test_lower_casing_and_re_spacing_cost_nothing_unless_punkt_splits_the_twin_differently():
    """BODEGA's normalisation makes an OpenAttack twin free; re-tokenising its re-joined text can
    still split a punctuation run ('?!' after a space), which BODEGA then counts as an edit."""
    plain = 'The "minister" said: it is (almost) done... Next line, U.S. style.'
    run = "Really?! Next line."
    twins = [openattack_style(plain), openattack_style(run)]
    scores = score_examples("HN", [plain, run], twins, [True, True], StandInModel())
    assert scores[0].character == 1.0
    assert scores[1].character == pytest.approx(1 - 1 / len("really ? ! next line ."))
    compare("HN", [plain, run], twins)


@pytest.mark.parametrize("task, original, adversarial", [
    ("HN", "One sentence here. Another one.", "   \n "),  # no adversarial sentence: NOT_GENERATED
    ("PR2", "Something was said.", ""),
    ("FC", "Evidence one ~ the claim", "Evidence one the claim"),  # the attack removed '~'
    ("FC", "Evidence one ~ the claim", "Evidence ~ one ~ the claim"),
    ("FC", "a ~ b ~ c", "a ~ b ~ c"),
    ("HN", "Same. Same. Same.", "Same. Other. Same."),  # ties and a sentence serving several
    ("RD", "Mr. Smith went. He said \"no.\" Then left!", "mr. smith went . he said \" no . \" then left !"),
])
def test_edge_cases_equal_bodegas(task, original, adversarial):
    compare(task, [original], [adversarial])


def test_bodega_score_of_an_openattack_style_tsv_equals_bodegas(tmp_path):
    """`bodega score` of an InCrediblAE TSV with OpenAttack-style outputs, against BODEGA's scorer,
    the character model standing in for the semantic model on both sides."""
    from bodega.cli import main
    from bodega.scoring.interchange import AttackedExample, write_incrediblae_tsv

    rng = np.random.default_rng(3)
    texts = list(attack_texts("RD")[:12])
    rows = [AttackedExample(t, openattack_style(perturb(t, rng)), k % 4 != 1, 10 + k) for k, t in enumerate(texts)]
    path = tmp_path / "adv.tsv"
    write_incrediblae_tsv(path, rows)
    out, summary_path = tmp_path / "scores.jsonl", tmp_path / "summary.json"
    assert main(["score", "--task", "RD", "--input", str(path), "--out", str(out), "--semantic", "character",
                 "--summary", str(summary_path)]) == 0
    got = [json.loads(line) for line in out.read_text().splitlines()]

    reference = ReferenceBODEGAScore("RD", lambda refs, cands: [
        1 - Levenshtein.distance(a, b) / max(len(a), len(b)) if max(len(a), len(b)) else 1.0
        for a, b in ((reference.normalise_for_lev(r), reference.normalise_for_lev(c)) for r, c in zip(refs, cands))])
    cleaned = [" ".join(t.replace("\t", " ").splitlines()) for t in texts]  # what the TSV carries
    for text, row in zip(cleaned, rows):
        reference.after_attack(text, " ".join(row.adversarial.splitlines()) if row.success else None)
    (success, semantic, character, bodega), per_example = reference.compute()
    for row, (sem, char, b) in zip(got, per_example):
        assert row["semantic"] == (None if sem is None else pytest.approx(sem, rel=1e-12))
        assert row["character"] == (None if char is None else pytest.approx(char, rel=1e-12))
        assert row["bodega"] == pytest.approx(b, rel=1e-12, abs=1e-15)
    summary = json.loads(summary_path.read_text())
    assert summary["bodega_score"] == pytest.approx(bodega)
    assert summary["success_score"] == pytest.approx(success)
    assert summary["semantic_score"] == pytest.approx(semantic)
    assert summary["character_score"] == pytest.approx(character)


@pytest.mark.parametrize("text", [" .??", "\t.??", "́!!‘.”?@@Z{Mr‘\u200d́ }“;.!,?\t\x1c"])
def test_leading_blanks_and_trailing_controls_are_seen_as_punkt_sees_them(text):
    # found by the property test: punkt decides differently with one leading blank, and looks at what
    # follows the last run even where str.rstrip would drop it
    assert punct_join(text) == openattack_join(text)
