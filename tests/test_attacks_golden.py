"""Golden outputs of the native attackers' fixed (non-as-run) searches on a deterministic victim.

The as-run searches are checked against OpenAttack itself (``test_conformance_openattack.py``,
``test_attacks_bae_as_run.py``); the fixed ones have no reference to compare with, so their
adversarial texts and query counts were recorded once (``fixtures/attacks_golden.json``,
written from the code before the search loops were merged and batched) and every later
version must give the same. A change that is meant to move these outputs rewrites the file
on purpose: ``python tests/test_attacks_golden.py --write``, and says why in its commit.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from attack_fakes import SENTENCES, KeywordVictim

FIXTURE = Path(__file__).parent / "fixtures" / "attacks_golden.json"
WORDNET = ("PWWS", "PSO", "Genetic", "DeepWordBug")
MASKED_LM = ("BERT-ATTACK", "BAE")
CASES = [(name, i, targeted) for name in WORDNET + MASKED_LM for i in range(len(SENTENCES))
         for targeted in (False, True)]


def build(name: str, mlm: str | None):
    """The attacker as the ``cpu`` profile builds it (fixed fidelity), on the tiny masked LM where it needs one."""
    from bodega.attacks import get_attacker

    if name in WORDNET:
        return get_attacker(name, profile="cpu", fidelity="fixed")
    options = dict(mlm_path=mlm, candidates="masked-lm", max_change_rate=0.4)
    if name == "BAE":
        options.update(encoder_path=mlm, similarity_threshold=0.9)
    return get_attacker(name, profile="cpu", fidelity="fixed", **options)


def run_case(attacker, index: int, targeted: bool) -> dict:
    from bodega.attacks.runner import Target, attack_one
    from bodega.victims.accounting import QueryAccountant

    record = attack_one(attacker, QueryAccountant(KeywordVictim()), Target(index, str(index), SENTENCES[index], 1),
                        targeted, seed=0).to_dict()
    assert record["error"] is None, record["error"]
    return {key: record[key] for key in ("adversarial", "success", "queries", "unique_queries")}


def key(name: str, index: int, targeted: bool) -> str:
    return f"{name}/{index}/{'targeted' if targeted else 'untargeted'}"


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory) -> str:
    from mlm_fakes import tiny_bert

    return str(tiny_bert(tmp_path_factory.mktemp("golden") / "tiny-bert"))


@pytest.fixture(scope="module")
def attackers(tiny_mlm):
    return {name: build(name, tiny_mlm) for name in WORDNET + MASKED_LM}


@pytest.fixture(scope="module")
def golden() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name,index,targeted", CASES)
def test_fixed_search_gives_the_recorded_text_and_queries(name, index, targeted, attackers, golden):
    assert run_case(attackers[name], index, targeted) == golden[key(name, index, targeted)]


def test_the_recorded_cases_succeed_and_fail(golden):
    """Guard against a vacuous fixture: every attacker both succeeds and fails, and spends queries."""
    for name in WORDNET + MASKED_LM:
        records = [golden[key(attacker, i, t)] for attacker, i, t in CASES if attacker == name]
        assert 0 < sum(r["success"] for r in records) < len(records), name
        assert all(r["queries"] > 0 for r in records), name


def write_fixture(folder: Path) -> None:
    """Record the current outputs (run from the tests folder: ``python test_attacks_golden.py --write``)."""
    from mlm_fakes import tiny_bert

    mlm = str(tiny_bert(folder / "tiny-bert"))
    built = {name: build(name, mlm) for name in WORDNET + MASKED_LM}
    records = {key(name, i, t): run_case(built[name], i, t) for name, i, t in CASES}
    FIXTURE.write_text(json.dumps(records, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_attacks_golden.py --write")
    with tempfile.TemporaryDirectory() as tmp:
        write_fixture(Path(tmp))
