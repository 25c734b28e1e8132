"""One registry per kind of name: canonical names, aliases folded and resolved, and every older name in
committed results read as the canonical one."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from attack_fakes import KeywordVictim, OnesSemantic
from bodega.attacks import run_attack
from bodega.attacks.base import ATTACKERS
from bodega.errors import BodegaError, UnknownNameError
from bodega.profiles import PROFILES
from bodega.registry import Registry
from bodega_book.attacks_page import attack_benchmark_table
from bodega_book.figures import MARKERS
from bodega.report.published import load_published
from bodega.report.results import load_runs
from bodega.tasks import TASKS
from bodega.victims.kinds import VICTIM_KINDS

ROOT = Path(__file__).resolve().parents[1]


def test_a_registry_resolves_aliases_in_any_case_and_lists_canonical_names_in_order():
    loaded = []
    registry: Registry[int] = Registry("colour", loader=lambda: loaded.append(True))
    registry.register("Deep_Blue", 1, aliases=("navy",))
    registry.register("Red", 2)
    assert loaded == [True]  # the package's own entries come first, once
    assert registry["NAVY"] == registry[" deep-blue "] == 1 and registry.canonical("DEEP_BLUE") == "Deep_Blue"
    assert list(registry) == ["Deep_Blue", "Red"] and "navy" in registry and "green" not in registry
    with pytest.raises(UnknownNameError, match="unknown colour 'green'; choose one of Deep_Blue, Red"):
        registry["green"]
    with pytest.raises(BodegaError, match="colour name 'Navy' is taken by 'Deep_Blue'"):
        registry.register("Navy", 3)
    registry.register("Red", 4)  # the same name again replaces its entry
    registry.unregister("deep-blue")
    assert dict(registry) == {"Red": 4} and registry.find("navy") is None


def test_each_kind_of_name_has_its_registry_with_the_old_spellings():
    assert list(TASKS) == ["HN", "PR2", "FC", "RD"] and TASKS["pr"].name == "PR2"
    assert list(PROFILES) == ["paper", "cpu", "cpu-full-bert", "smoke"]
    assert list(VICTIM_KINDS) == ["BiLSTM", "GloVeBiLSTM", "MiniLM", "BERT", "GEMMA2B", "GEMMA7B"]
    assert ATTACKERS.canonical("PSO") == "SememePSO" and ATTACKERS.canonical("bertattack") == "BERT-ATTACK"
    assert set(ATTACKERS) == {"BAE", "BERT-ATTACK", "DeepWordBug", "Genetic", "SememePSO", "PWWS", "SCPN",
                              "TextFooler"}


def test_names_kept_elsewhere_are_canonical_registered_names():
    assert set(MARKERS) == set(ATTACKERS)
    published = load_published()
    assert {v for row in published.table3_f1.values() for v in row} <= set(VICTIM_KINDS)
    assert set(published.table3_f1) <= set(TASKS) and set(published.rerun_bodega) <= set(ATTACKERS)
    assert published.rerun_victims == ("BiLSTM", "BERT", "GEMMA2B")
    assert all(victim in published.rerun_setup for victim in published.rerun_victims)  # as its setup line says
    for profile in PROFILES.values():  # an epochs key is a kind or TASK-kind
        for key in profile.epochs:
            assert key in VICTIM_KINDS or (key.split("-")[0] in TASKS and key.split("-")[1] in VICTIM_KINDS)


def test_committed_summaries_with_bodegas_name_read_as_the_canonical_name():
    summaries = [json.loads(p.read_text()) for p in (ROOT / "results" / "study" / "runs").glob("*PSO*/summary.json")]
    assert summaries and {s["attacker"] for s in summaries} == {"PSO"}  # written before SememePSO was canonical
    runs = load_runs(ROOT / "results" / "study")
    assert "PSO" not in set(runs.attacker)
    assert set(runs[runs.name.str.contains("SememePSO")].attacker) == {"SememePSO"}


def test_the_committed_benchmark_rows_with_bodegas_name_show_the_canonical_name():
    bench = json.loads((ROOT / "book" / "data" / "attack_vs_openattack.json").read_text())
    assert "PSO" in {row["attacker"] for row in bench["rows"]}
    assert set(attack_benchmark_table(bench).attacker) == {"DeepWordBug", "PWWS", "Genetic", "SememePSO"}


def test_a_run_recorded_under_an_older_spelling_resumes(keyword_attack_set, tmp_path):
    data, out = keyword_attack_set(), tmp_path / "run"
    run_attack("PR2", KeywordVictim(), data, "DeepWordBug", out, n_examples=2, semantic=OnesSemantic(),
               progress=False)
    config = json.loads((out / "run.json").read_text())
    (out / "run.json").write_text(json.dumps({**config, "attacker": "deepwordbug"}))
    report = run_attack("PR2", KeywordVictim(), data, "deepwordbug", out, n_examples=2, semantic=OnesSemantic(),
                        progress=False)
    assert report.settings["attacker"] == "DeepWordBug"


def test_the_published_values_file_enters_with_canonical_names(tmp_path):
    import yaml

    path = tmp_path / "published.yaml"
    rerun = {"bodega_mean": {"pso": 0.3}}
    path.write_text(yaml.safe_dump({"table3_f1": {"pr": {"bilstm": 0.5}}, "prose": [],
                                    "independent_rerun_macabeu": rerun}))
    published = load_published(path)
    assert (published.table3_f1, published.rerun_victims, published.rerun_bodega) == (
        {"PR2": {"BiLSTM": 0.5}}, ("BiLSTM", "BERT", "GEMMA2B"), {"SememePSO": 0.3})
    path.write_text(yaml.safe_dump({"table3_f1": {"PR2": {"LSTM": 0.5}}, "prose": []}))
    with pytest.raises(BodegaError, match=r"published.yaml: unknown victim kind 'LSTM'"):
        load_published(path)
