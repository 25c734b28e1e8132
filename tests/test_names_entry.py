"""Names are made canonical where they enter: a command's options, an API call, a notebook's parameters."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

import bodega
from attack_fakes import SENTENCES, KeywordVictim
from bodega.cli import main
from bodega.errors import UnknownNameError
from bodega.names import attacker_name, name_list, profile_name, run_names, task_name, victim_name


class OnesSemantic:
    def score(self, pairs):
        return np.ones(len(pairs))


def test_each_kind_of_name_resolves_through_its_registry():
    assert run_names("pr", "bert", "pso", "CPU").__dict__ == dict(task="PR2", victim="BERT", attacker="SememePSO",
                                                                profile="cpu")
    assert (task_name(" fc "), victim_name("gemma2b"), attacker_name("bert_attack"), profile_name("Smoke")) == \
        ("FC", "GEMMA2B", "BERT-ATTACK", "smoke")
    assert victim_name("hf:models/Bert") == "hf:models/Bert" and attacker_name("py:mine.py:build") == "py:mine.py:build"
    with pytest.raises(UnknownNameError, match="unknown task 'XX'; choose one of HN, PR2, FC, RD"):
        task_name("XX")


def test_an_option_is_canonical_once_parsed():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=name_list(task_name))
    parser.add_argument("--victim", type=victim_name)
    assert vars(parser.parse_args(["--tasks", "pr,FC,pr2", "--victim", "bilstm"])) == {"tasks": ("PR2", "FC"),
                                                                                       "victim": "BiLSTM"}
    with pytest.raises(UnknownNameError, match="unknown victim kind 'lstm'"):
        parser.parse_args(["--victim", "lstm"])


def test_the_attack_command_passes_canonical_names_on(monkeypatch, tmp_path):
    seen = {}

    def run_attack(task, victim, data, attacker, out, **options):
        seen.update(task=task, attacker=attacker, profile=options["profile"])
        raise SystemExit(0)

    monkeypatch.setattr("bodega.attacks.run_attack", run_attack)
    with pytest.raises(SystemExit):
        main(["attack", "--task", "pr", "--victim", "v", "--data", "d", "--attacker", "pso", "--profile", "SMOKE",
              "--out", str(tmp_path)])
    assert seen == {"task": "PR2", "attacker": "SememePSO", "profile": "smoke"}


def test_an_unknown_name_on_the_command_line_is_one_line_and_exit_2(capsys):
    assert main(["-v", "train", "--task", "PR2", "--victim", "bertt", "--data", "d", "--out", "o"]) == 2
    assert capsys.readouterr().err == ("bodega train: error: unknown victim kind 'bertt'; choose one of BiLSTM, "
                                       "GloVeBiLSTM, MiniLM, BERT, GEMMA2B, GEMMA7B\n")
    assert main(["data", "prepare-missing", "--tasks", "PR2,XX"]) == 2
    assert capsys.readouterr().err == "bodega data: error: unknown task 'XX'; choose one of HN, PR2, FC, RD\n"


def test_the_api_writes_canonical_names_whatever_the_callers_spelling():
    report = bodega.attack(KeywordVictim().predict_proba, SENTENCES[:2], [1, 1], task="pr", attacker="deepwordbug",
                           profile="SMOKE", semantic=OnesSemantic())
    assert (report.settings["attacker"], report.settings["profile"], report.settings["task"]) == \
        ("DeepWordBug", "smoke", "PR2")


def test_a_grid_slice_is_named_in_any_spelling_and_checked_against_the_grid(capsys):
    from bodega.commands.grid import _slice
    from bodega.experiments import load_grid
    from bodega.paths import project_root

    spec = load_grid(project_root() / "parameters" / "grid_demo.yaml")
    assert _slice(spec, "attackers", name_list(attacker_name)("pwws,bert_attack")) == ("PWWS", "BERT-ATTACK")
    assert main(["grid", "status", str(project_root() / "parameters" / "grid_demo.yaml"), "--victims", "bert"]) == 2
    assert capsys.readouterr().err.strip() == ("bodega grid: error: --victims: BERT not in the grid's victims "
                                               "(BiLSTM, MiniLM)")


def test_the_data_notebooks_task_and_source_names_are_read_in_any_spelling(tmp_path):
    """``sources = {"hn": "bypublisher"}`` was looked up by the canonical name only, so HN's default source was
    converted instead; no ``tasks`` means every registered task."""
    from bodega.data.prepare import prepare_tasks

    status = prepare_tasks(None, tmp_path / "raw", tmp_path / "out", sources={"hn": "bypublisher"}, missing_ok=True)
    assert list(status) == ["HN", "PR2", "FC", "RD"]
    assert status["HN"] == f"NOT PREPARED: raw folder {tmp_path / 'raw' / 'HN' / 'bypublisher'} is missing"
