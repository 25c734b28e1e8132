"""Bring your own attacker: ``py:module:factory`` through the same runner (records, resume, budget, scoring).

The native example is the book's ``book/examples/word_dropper.py`` (the page
``book/own_attacker.md`` includes that file), run under the name the page gives it.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from attack_fakes import SENTENCES, KeywordVictim, OnesSemantic
from bodega.errors import BodegaError
from bodega.attacks import get_attacker, run_attack
from bodega.io import read_jsonl
from bodega.plugins import PluginError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = "py:book/examples/word_dropper.py:build"


@pytest.fixture()
def data_dir(keyword_attack_set) -> Path:
    return keyword_attack_set()


def test_the_books_example_runs_through_the_runner(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "run"
    summary = run_attack("PR2", KeywordVictim(), data_dir, EXAMPLE, out, semantic=OnesSemantic(), progress=False,
                         attacker_options={"max_words": 2}).run
    records = list(read_jsonl(out / "records.jsonl"))
    assert summary.config.attacker == EXAMPLE and summary.n_examples == len(SENTENCES)
    wins = [r for r in records if r["success"]]
    assert wins and len(wins) < len(records)
    victim = KeywordVictim()
    for r in wins:  # a success is checked with the victim, and dropped at most two words
        assert victim.predict([r["adversarial"]])[0] != victim.predict([r["original"]])[0]
        assert len(r["original"].split()) - len(r["adversarial"].split()) in (1, 2)
    # every text asked is counted: the runner's original + one trial per word per step (+ the runner's check)
    for r in records:
        n = len(r["original"].split())
        steps = n - len(r["adversarial"].split()) if r["success"] else 2
        assert r["queries"] == 1 + sum(n - j for j in range(steps)) + int(r["success"])
    assert summary.bodega_score > 0


def test_resume_and_budget_apply_to_an_own_attacker(data_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    out = tmp_path / "run"
    run_attack("PR2", KeywordVictim(), data_dir, EXAMPLE, out, semantic=OnesSemantic(), progress=False,
               n_examples=2)
    before = list(read_jsonl(out / "records.jsonl"))
    with pytest.raises(BodegaError, match="different settings"):
        run_attack("PR2", KeywordVictim(), data_dir, EXAMPLE, out, semantic=OnesSemantic(), progress=False)
    budget = run_attack("PR2", KeywordVictim(), data_dir, EXAMPLE, tmp_path / "b", semantic=OnesSemantic(),
                        progress=False, query_budget=3).run
    assert budget.budget_exhausted == len(SENTENCES) and not any(
        r["success"] for r in read_jsonl(tmp_path / "b" / "records.jsonl"))
    (out / "records.jsonl").write_text((out / "records.jsonl").read_text().splitlines()[0] + "\n")
    run_attack("PR2", KeywordVictim(), data_dir, EXAMPLE, out, semantic=OnesSemantic(), progress=False,
               n_examples=2)
    assert list(read_jsonl(out / "records.jsonl"))[1]["adversarial"] == before[1]["adversarial"]


@pytest.fixture()
def forget_mine():
    """The module this file imports as ``mine`` is dropped afterwards, so other tests' ``mine`` is theirs."""
    yield
    sys.modules.pop("mine", None)


def test_a_module_on_the_path_and_clear_errors(tmp_path, monkeypatch, forget_mine):
    (tmp_path / "mine.py").write_text("class A:\n    name = 'A'\n\ndef build():\n    return A()\n"
                                      "def builds_openattack_misfit():\n    return object()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match="attack\\(victim, text, goal, rng\\)"):
        get_attacker("py:mine:build")
    with pytest.raises(PluginError, match="PYTHONPATH"):
        get_attacker("py:not_a_module_here:build")
    with pytest.raises(PluginError, match="no callable 'missing'"):
        get_attacker("py:mine:missing")
    with pytest.raises(PluginError, match="py:module:factory"):
        get_attacker("py:mine")
    pytest.importorskip("OpenAttack")
    with pytest.raises(PluginError, match="OpenAttack Attacker"):
        get_attacker("py:mine:builds_openattack_misfit", backend="openattack")


def openattack_deepwordbug(power: int = 2):
    """An OpenAttack attacker a user might bring (with the offline tokenizer, as tests have no NLTK data)."""
    import OpenAttack

    from bodega.attacks.openattack_backend import make_tokenizer

    return OpenAttack.attackers.DeepWordBugAttacker(token_unk="🔥", power=power, tokenizer=make_tokenizer())


def test_an_openattack_attacker_runs_through_the_same_runner(data_dir, tmp_path):
    pytest.importorskip("OpenAttack")
    spec = f"py:{Path(__file__).resolve()}:openattack_deepwordbug"
    own = run_attack("PR2", KeywordVictim(), data_dir, spec, tmp_path / "own", semantic=OnesSemantic(),
                     progress=False, backend="openattack", attacker_options={"power": 5}).run
    builtin = run_attack("PR2", KeywordVictim(), data_dir, "DeepWordBug", tmp_path / "builtin",
                         semantic=OnesSemantic(), progress=False, backend="openattack").run
    ours = list(read_jsonl(tmp_path / "own" / "records.jsonl"))
    theirs = list(read_jsonl(tmp_path / "builtin" / "records.jsonl"))
    assert [(r["adversarial"], r["queries"]) for r in ours] == [(r["adversarial"], r["queries"]) for r in theirs]
    assert own.config.backend == "openattack" and own.bodega_score == builtin.bodega_score


def test_the_command_line_says_how_to_name_an_own_attacker(capsys):
    from bodega.cli import main

    with pytest.raises(SystemExit):
        main(["attack", "--help"])
    assert "py:module:factory" in " ".join(capsys.readouterr().out.split())
