"""Query accountant, persistent cache (multi-process, kill -9) and the OpenAttack adapter."""
from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from bodega.victims.accounting import QueryAccountant, QueryBudgetExceeded
from bodega.victims.cache import ProbabilityCache


class LengthVictim:
    """P(label 1) grows with text length; records every batch it is sent."""

    name, task = "length", "PR2"

    def __init__(self, weights_hash: str = "w1", scale: float = 10.0):
        self.weights_hash = weights_hash
        self.scale = scale
        self.batches: list[list[str]] = []

    def predict_proba(self, texts):
        self.batches.append(list(texts))
        p1 = np.array([len(t) / (len(t) + self.scale) for t in texts])
        return np.stack([1 - p1, p1], axis=1)

    def predict(self, texts):
        return self.predict_proba(texts).argmax(axis=1)


def test_counts_queries_unique_texts_and_forwards():
    victim = LengthVictim()
    accountant = QueryAccountant(victim, batch_size=2)
    probs = accountant.predict_proba(["aaaa", "b", "aaaa", "cc", "b"])
    np.testing.assert_allclose(probs, victim.predict_proba(["aaaa", "b", "aaaa", "cc", "b"]))
    assert accountant.counts() == {"queries": 5, "unique_queries": 3, "forwards": 3, "cache_hits": 0}
    accountant.predict_proba(["cc", "dddddd"])  # "cc" is a memory hit
    assert accountant.counts() == {"queries": 7, "unique_queries": 4, "forwards": 4, "cache_hits": 0}
    accountant.start_example()
    assert accountant.counts() == {"queries": 0, "unique_queries": 0, "forwards": 0, "cache_hits": 0}
    accountant.predict_proba(["aaaa"])
    assert accountant.counts() == {"queries": 1, "unique_queries": 1, "forwards": 0, "cache_hits": 0}
    assert (accountant.total_queries, accountant.total_forwards) == (8, 4)


def test_misses_go_to_the_model_once_in_length_sorted_batches():
    victim = LengthVictim()
    accountant = QueryAccountant(victim, batch_size=2)
    accountant.predict_proba(["dddd", "a", "ccc", "bb", "a", "eeeee"])
    assert victim.batches[:3] == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]


def test_budget_is_per_example_and_refuses_the_whole_call():
    victim = LengthVictim()
    accountant = QueryAccountant(victim, budget=3)
    accountant.predict_proba(["a", "b"])
    with pytest.raises(QueryBudgetExceeded, match="budget of 3"):
        accountant.predict_proba(["c", "d"])
    assert accountant.queries == 2 and len(victim.batches) == 1
    assert isinstance(QueryBudgetExceeded("x"), RuntimeError)
    accountant.start_example()
    accountant.predict_proba(["c", "d", "e"])


def test_accountant_satisfies_the_victim_protocol_and_checks_inputs():
    from bodega.victims import Victim

    accountant = QueryAccountant(LengthVictim("hash-x"))
    assert isinstance(accountant, Victim)
    assert (accountant.name, accountant.task, accountant.weights_hash) == ("length", "PR2", "hash-x")
    assert list(accountant.predict(["", "a much longer text"])) == [0, 1]
    with pytest.raises(TypeError, match="position 1"):
        accountant.predict_proba(["ok", 3])


def test_cache_is_keyed_by_weights_hash(tmp_path):
    cache = ProbabilityCache(tmp_path / "cache.sqlite")
    old = QueryAccountant(LengthVictim("old", scale=10.0), cache=cache)
    old.predict_proba(["some text", "another"])
    fresh = LengthVictim("old", scale=10.0)
    QueryAccountant(fresh, cache=ProbabilityCache(tmp_path / "cache.sqlite")).predict_proba(["some text"])
    assert fresh.batches == []  # served from the persistent cache, in a new accountant
    retrained = LengthVictim("new", scale=1.0)
    probs = QueryAccountant(retrained, cache=cache).predict_proba(["some text"])
    assert retrained.batches == [["some text"]]
    np.testing.assert_allclose(probs[0], [1 / 10, 9 / 10])


def test_cache_takes_writers_from_several_processes(tmp_path):
    path = tmp_path / "cache.sqlite"
    script = textwrap.dedent(f"""
        import sys, numpy as np
        from bodega.victims.cache import ProbabilityCache
        cache = ProbabilityCache({str(path)!r})
        w = sys.argv[1]
        for i in range(40):
            cache.put("h", [f"{{w}}-{{i}}"], np.array([[0.25, 0.75]]))
    """)
    workers = [subprocess.Popen([sys.executable, "-c", script, str(w)]) for w in range(3)]
    assert [p.wait(timeout=120) for p in workers] == [0, 0, 0]
    cache = ProbabilityCache(path)
    assert len(cache) == 120
    assert len(cache.get("h", [f"{w}-{i}" for w in range(3) for i in range(40)])) == 120


def test_cache_survives_kill_9_mid_write(tmp_path):
    path = tmp_path / "cache.sqlite"
    script = textwrap.dedent(f"""
        import numpy as np
        from bodega.victims.cache import ProbabilityCache
        cache = ProbabilityCache({str(path)!r})
        print("ready", flush=True)
        i = 0
        while True:
            texts = [f"text-{{i}}-{{j}}" for j in range(50)]
            p1 = np.array([(i * 50 + j) % 97 / 97 for j in range(50)])
            cache.put("h", texts, np.stack([1 - p1, p1], axis=1))
            i += 1
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert writer.stdout.readline().strip() == "ready"
    deadline = time.time() + 60
    while time.time() < deadline and (not path.exists() or len(ProbabilityCache(path)) < 500):
        time.sleep(0.2)
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()
    with sqlite3.connect(path) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    cache = ProbabilityCache(path)
    n = len(cache)
    assert n >= 500 and n % 50 == 0  # whole transactions only
    batches = n // 50
    texts = [f"text-{i}-{j}" for i in range(batches) for j in range(50)]
    found = cache.get("h", texts)
    assert len(found) == n
    expected = np.array([(k % 97) / 97 for k in range(n)])
    np.testing.assert_allclose([found[k][1] for k in range(n)], expected)
    np.testing.assert_allclose([found[k].sum() for k in range(n)], 1.0)
    cache.put("h", ["after"], np.array([[0.5, 0.5]]))  # still writable


def test_openattack_adapter_counts_through_the_accountant():
    OpenAttack = pytest.importorskip("OpenAttack")
    from bodega.victims.openattack_adapter import as_openattack_classifier

    accountant = QueryAccountant(LengthVictim(), budget=4)
    classifier = as_openattack_classifier(accountant)
    assert isinstance(classifier, OpenAttack.Classifier)
    probs = classifier.get_prob(["a", "bbbbbbbbbbbbbbbbbbbbbbbbbb"])
    assert probs.shape == (2, 2) and list(classifier.get_pred(["a"])) == [0]
    assert accountant.counts() == {"queries": 3, "unique_queries": 2, "forwards": 2, "cache_hits": 0}
    with pytest.raises(QueryBudgetExceeded):
        classifier.get_prob(["x", "y"])
    wrapped = as_openattack_classifier(LengthVictim())
    wrapped.get_prob(["q"])
    assert wrapped.accountant.queries == 1
