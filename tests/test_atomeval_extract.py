"""SROM atoms: schema, normalisation, the gold file and the dependency extractor."""
from __future__ import annotations

import json

import pytest

from bodega.atomeval.atoms import Atom, AtomSchemaError, Modifier, parse_atoms
from bodega.atomeval.gold import GOLD_PATH, atoms_match, evaluate_extractor, extraction_correct, load_gold
from bodega.atomeval.normalise import normalise


def test_normalise_numbers_dates_lemmas():
    assert normalise("on November 22nd , 1968") == normalise("on november 22 1968")
    assert normalise("about 100,000 copies") == ("about", "100000", "copy")
    assert normalise("was released", relation=True) == normalise("releases", relation=True) == ("release",)
    assert normalise("The 14th Dalai Lama") == ("14", "dalai", "lama")
    assert normalise("three children") == ("3", "child")
    assert normalise("Telemundo -LRB- x -RRB-") == ("telemundo", "x")


def test_schema_rejects_bad_atoms_with_a_named_field():
    with pytest.raises(AtomSchemaError, match="polarity"):
        parse_atoms({"atoms": [{"subject": "a", "relation": "be", "object": "", "modifiers": [],
                                "polarity": "maybe"}]})
    with pytest.raises(AtomSchemaError, match="subject"):
        parse_atoms({"atoms": [{"subject": "", "relation": "be", "object": "", "modifiers": [],
                                "polarity": "affirmed"}]})
    with pytest.raises(AtomSchemaError, match="at least one"):
        parse_atoms({"atoms": []})
    atoms = parse_atoms({"atoms": [{"subject": "X", "relation": "be", "object": "Y",
                                    "modifiers": [{"type": "time", "value": "in 2011"}],
                                    "polarity": "negated"}]})
    assert atoms[0].negated and atoms[0].modifiers[0].value == "in 2011"


def test_gold_file_is_well_formed_and_large_enough():
    gold = load_gold()
    assert len(gold) >= 100
    assert {g.split for g in gold} == {"dev", "test"}
    assert len({g.id for g in gold}) == len(gold)
    raw = [json.loads(line) for line in GOLD_PATH.read_text(encoding="utf-8").splitlines()]
    assert all(r["label"] == "REFUTES" for r in raw)


def test_match_is_slotwise_and_order_free():
    a = Atom("Damon Albarn 's debut album", "was released", "", (Modifier("time", "in 2011"),))
    b = Atom("damon albarn debut album", "release", "", (Modifier("other", "in 2011"),))
    assert atoms_match(a, b)
    assert not atoms_match(a, b.with_(modifiers=(Modifier("time", "in 2012"),)))
    assert not atoms_match(a, b.with_(polarity="negated"))
    c = Atom("Vedam", "direct", "", (Modifier("agent", "by Christopher Nolan"),))
    d = Atom("Vedam", "write", "", (Modifier("agent", "by Christopher Nolan"),))
    assert extraction_correct([d, c], [c, d])
    assert not extraction_correct([c], [c, d])


@pytest.fixture(scope="module")
def extractor():
    from bodega.atomeval.extract_spacy import SpacyExtractor

    return SpacyExtractor()


def test_spacy_extractor_on_hand_made_claims(extractor):
    (atom,) = extractor.extract("Magic Johnson did not play for the Lakers .")
    assert atom.negated and normalise(atom.relation, relation=True) == ("play",)
    assert [m.value for m in atom.modifiers] == ["for the Lakers"]
    atoms = extractor.extract("Vedam was written and directed by Christopher Nolan .")
    assert sorted(normalise(a.relation, relation=True) for a in atoms) == [("direct",), ("write",)]
    assert all(m.value == "by Christopher Nolan" for a in atoms for m in a.modifiers)
    (atom,) = extractor.extract("Sheryl Lee has yet to appear in a film as of 2016 .")
    assert atom.negated and atom.relation == "appear"
    (atom,) = extractor.extract("Savages was exclusively a German film .")
    assert (atom.relation, atom.object, [m.value for m in atom.modifiers]) == ("be", "a German film",
                                                                               ["exclusively"])


def test_spacy_extractor_gold_accuracy_reaches_target(extractor):
    report = evaluate_extractor(extractor)
    assert report.n["all"] >= 100
    assert report.accuracy("all") >= 0.85, report.errors[:5]
