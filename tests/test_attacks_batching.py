"""Victim calls: the native searches gather a step's texts into one call where the algorithm allows it.

OpenAttack 2.1.1 asks DeepWordBug's and PSO's texts one per call, PWWS's candidates one
token per call and BERT-ATTACK's original apart from its importance probes; the native
as-run searches ask the same texts, as many times (queries count texts, repeats
included), in fewer calls. Counted on the victim
behind the query accountant, as a run counts them; the texts and queries must be
OpenAttack's own, as in the conformance suite.
"""
from __future__ import annotations

import pytest

from attack_fakes import SENTENCES, KeywordVictim

pytest.importorskip("OpenAttack")

from bodega.attacks import get_attacker  # noqa: E402
from bodega.attacks.runner import Target, attack_one  # noqa: E402
from bodega.victims.accounting import QueryAccountant  # noqa: E402


class CountingVictim(KeywordVictim):
    """The keyword victim, remembering the size of every call."""

    def __init__(self):
        super().__init__()
        self.batches: list[int] = []

    def predict_proba(self, texts: list[str]):
        self.batches.append(len(texts))
        return super().predict_proba(texts)


def run(engine, index: int, targeted: bool) -> tuple[dict, CountingVictim]:
    victim = CountingVictim()
    record = attack_one(engine, QueryAccountant(victim), Target(index, str(index), SENTENCES[index], 1), targeted,
                        0).to_dict()
    assert record["error"] is None, record["error"]
    return record, victim


def normalise(text: str | None) -> str | None:
    from test_conformance_openattack import bodega_normalise

    return bodega_normalise(text)


def compare(native_engine, reference_engine, cases) -> tuple[int, int]:
    """Same texts and queries as OpenAttack on every case, never more calls; the calls summed over the cases."""
    native_calls = reference_calls = 0
    for index, targeted in cases:
        native, native_victim = run(native_engine, index, targeted)
        reference, reference_victim = run(reference_engine, index, targeted)
        assert normalise(native["adversarial"]) == normalise(reference["adversarial"])
        assert (native["success"], native["queries"]) == (reference["success"], reference["queries"])
        assert sum(native_victim.batches) == sum(reference_victim.batches) == native["forwards"]
        assert len(native_victim.batches) <= len(reference_victim.batches)
        native_calls += len(native_victim.batches)
        reference_calls += len(reference_victim.batches)
    return native_calls, reference_calls


CASES = [(i, targeted) for i in range(len(SENTENCES)) for targeted in (False, True)]


def test_pwws_asks_its_ranking_in_one_call():
    native, reference = compare(get_attacker("PWWS", fidelity="as-run"), get_attacker("PWWS", backend="openattack"),
                                CASES)
    assert native < reference, (native, reference)


@pytest.mark.parametrize("name", ["DeepWordBug", "PSO"])
def test_one_call_per_step_where_openattack_asks_one_text_per_call(name):
    """DeepWordBug's leave-one-out texts and each PSO swarm state go in one call; OpenAttack sends them one by one."""
    native, reference = compare(get_attacker(name, fidelity="as-run"), get_attacker(name, backend="openattack"),
                                CASES)
    assert 3 * native < reference, (native, reference)


def test_bert_attack_asks_the_original_with_its_probes(tmp_path):
    from mlm_fakes import tiny_bert

    mlm = str(tiny_bert(tmp_path / "tiny-bert"))
    native, reference = compare(get_attacker("BERT-ATTACK", fidelity="as-run", mlm_path=mlm),
                                get_attacker("BERT-ATTACK", backend="openattack", mlm_path=mlm), CASES)
    assert native < reference, (native, reference)


def test_fixed_pwws_ranks_in_one_call_and_then_asks_one_text_per_step():
    """The fixed search: the original (the runner's), one ranking call (saliency probes and all candidates), then
    the greedy texts one per call: it stops at the first success, so a batch would ask texts it never needs."""
    for index in range(len(SENTENCES)):
        victim = CountingVictim()
        record = attack_one(get_attacker("PWWS", profile="cpu", fidelity="fixed"),
                            QueryAccountant(victim, batch_size=1000), Target(index, str(index), SENTENCES[index], 1),
                            False, 0).to_dict()
        assert victim.batches[0] == 1 and victim.batches[1] > len(SENTENCES[index].split())
        assert all(size == 1 for size in victim.batches[2:])
        assert sum(victim.batches) == record["unique_queries"]


# --- Prefetching: the texts a first-success loop will ask, computed ahead, never counted as asked ---------------

class InvariantVictim(CountingVictim):
    """The counting keyword victim, saying what it is: each text is scored alone, whatever its batch."""

    batch_invariant = True


ASKED = ("adversarial", "success", "queries", "unique_queries", "budget_exhausted", "error")


def run_with(victim: CountingVictim, engine, index: int, targeted: bool, budget: int | None = None):
    accountant = QueryAccountant(victim, budget=budget)
    record = attack_one(engine, accountant, Target(index, str(index), SENTENCES[index], 1), targeted, 0).to_dict()
    return record, accountant


@pytest.fixture(scope="module")
def tiny_mlm_path(tmp_path_factory) -> str:
    from mlm_fakes import tiny_bert

    return str(tiny_bert(tmp_path_factory.mktemp("mlm") / "tiny-bert"))


def engines(mlm: str) -> dict:
    return {"PWWS as-run": get_attacker("PWWS", fidelity="as-run"),
            "PWWS fixed": get_attacker("PWWS", profile="cpu", fidelity="fixed"),
            "BERT-ATTACK as-run": get_attacker("BERT-ATTACK", fidelity="as-run", mlm_path=mlm)}


@pytest.mark.parametrize("name", ["PWWS as-run", "PWWS fixed", "BERT-ATTACK as-run"])
def test_prefetching_asks_the_same_texts_in_fewer_calls(name, tiny_mlm_path):
    """Same texts, success and queries as without prefetching on every case; never more victim calls, fewer in all."""
    engine = engines(tiny_mlm_path)[name]
    plain_calls = prefetched_calls = prefetched = 0
    for index, targeted in CASES:
        plain_victim, victim = CountingVictim(), InvariantVictim()
        plain, _ = run_with(plain_victim, engine, index, targeted)
        record, accountant = run_with(victim, engine, index, targeted)
        assert {k: record[k] for k in ASKED} == {k: plain[k] for k in ASKED}, (index, targeted)
        assert record["forwards"] == sum(victim.batches) >= plain["forwards"]
        assert len(victim.batches) <= len(plain_victim.batches)  # computed ahead only with an ask's forward
        plain_calls += len(plain_victim.batches)
        prefetched_calls += len(victim.batches)
        prefetched += accountant.prefetched
    assert prefetched > 0
    assert prefetched_calls < plain_calls, (prefetched_calls, plain_calls)


@pytest.mark.parametrize("name", ["PWWS as-run", "BERT-ATTACK as-run"])
def test_a_budget_stops_a_prefetched_attack_where_it_stopped(name, tiny_mlm_path):
    """The budget counts asks: with every budget up to the attack's queries, the same record either way."""
    engine = engines(tiny_mlm_path)[name]
    index, targeted = 0, True
    full, _ = run_with(CountingVictim(), engine, index, targeted)
    assert full["queries"] > 3
    for budget in range(full["queries"] + 2):
        plain, _ = run_with(CountingVictim(), engine, index, targeted, budget)
        record, accountant = run_with(InvariantVictim(), engine, index, targeted, budget)
        assert {k: record[k] for k in ASKED} == {k: plain[k] for k in ASKED}, budget
        assert record["queries"] <= budget
        assert record["budget_exhausted"] == (budget < full["queries"])


def test_a_victim_that_does_not_say_it_is_batch_invariant_is_not_prefetched():
    for index, targeted in CASES[:4]:
        plain, plain_victim = run(get_attacker("PWWS", fidelity="as-run"), index, targeted)
        again = CountingVictim()
        record, accountant = run_with(again, get_attacker("PWWS", fidelity="as-run"), index, targeted)
        assert not accountant.prefetches and accountant.prefetched == 0
        assert again.batches == plain_victim.batches and record["forwards"] == plain["forwards"]
