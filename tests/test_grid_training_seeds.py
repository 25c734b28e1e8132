"""Trainings as a grid dimension: ``training.seeds`` names each victim's trainings; each training is its own
victim cell and folder (``-t<seed>``, none for training 0) with its own attack cells and keys."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from grid_fakes import VICTIM_PARAMS
from victims_fixtures import one_thread, write_task_data  # noqa: F401

from bodega.experiments import GridError, parse_grid
from bodega.experiments.cells import attack_cells, run_name, victim_cells
from bodega.experiments.hashing import HashCache
from bodega_book.cost import parse_cell_name

BASE = {"name": "x", "profile": "smoke", "tasks": ["PR2", "FC"], "victims": ["BiLSTM", "BERT"],
        "attackers": ["PWWS"], "scenarios": ["untargeted"]}


def _grid(tmp_path: Path, training: dict):
    for task in ("PR2", "FC"):
        (tmp_path / "data" / task).mkdir(parents=True, exist_ok=True)
        for split in ("train", "dev", "attack"):
            (tmp_path / "data" / task / f"{split}.tsv").write_text(f"0\t{task}-1\ttext\n")
    return parse_grid({**BASE, "training": training, "data_root": str(tmp_path / "data"),
                       "results": str(tmp_path / "results")}, "g.yaml")


def _declared() -> set[str]:
    return {line.split("=")[0].strip() for line in VICTIM_PARAMS.splitlines()}


def test_seeds_by_list_and_by_the_most_specific_key(tmp_path):
    assert _grid(tmp_path, {}).training.seeds_for("FC", "BERT") == (0,)
    assert _grid(tmp_path, {"seed": 4}).training.seeds_for("FC", "BERT") == (4,)
    assert _grid(tmp_path, {"seeds": [0, 1, 2]}).training.seeds_for("PR2", "BiLSTM") == (0, 1, 2)
    by_key = _grid(tmp_path, {"seeds": {"FC-BERT": [0, 1, 2], "BERT": [0, 1], "PR2": [0, 5]}}).training
    assert by_key.seeds_for("FC", "BERT") == (0, 1, 2)
    assert by_key.seeds_for("PR2", "BERT") == (0, 1)  # the victim's key wins over the task's
    assert by_key.seeds_for("PR2", "BiLSTM") == (0, 5) and by_key.seeds_for("FC", "BiLSTM") == (0,)


@pytest.mark.parametrize(("training", "message"), [
    ({"seeds": [0, 0]}, "listed twice"),
    ({"seeds": []}, None),  # an empty list is no seeds: the one training of `seed`
    ({"seeds": [0, -1]}, "expected an integer >= 0"),
    ({"seeds": {"FC-XLNet": [0]}}, "unknown victim 'FC-XLNet'"),
    ({"seeds": {"BERT": 3}}, "training.seeds.BERT: expected a non-empty list"),
    ({"seed": 1, "seeds": [0, 1]}, "either training.seed"),
])
def test_bad_seeds_name_the_key(tmp_path, training, message):
    if message is None:
        assert _grid(tmp_path, training).training.seeds_for("FC", "BERT") == (0,)
        return
    with pytest.raises(GridError, match=message):
        _grid(tmp_path, training)


def test_each_training_is_its_own_victim_cell_with_its_own_attack_cells(tmp_path):
    spec = _grid(tmp_path, {"seeds": {"BERT": [0, 1]}})
    cells = {cell.name: cell for cell in victim_cells(spec, HashCache(), _declared())}
    assert sorted(cells) == ["FC-BERT", "FC-BERT-t1", "FC-BiLSTM", "PR2-BERT", "PR2-BERT-t1", "PR2-BiLSTM"]
    first, second = cells["FC-BERT"], cells["FC-BERT-t1"]
    assert (first.parameters["seed"], second.parameters["seed"]) == (0, 1) and first.key != second.key
    assert Path(first.out_dir).name == "FC-BERT" and Path(second.out_dir).name == "FC-BERT-t1"
    assert spec.plan.n_attack_cells == 6  # one per training

    unchanged = {cell.name: cell.key for cell in victim_cells(_grid(tmp_path, {}), HashCache(), _declared())}
    assert unchanged["FC-BERT"] == first.key  # training 0 keeps its name and key

    for cell in (first, second):  # each training trained, with its own weights
        Path(cell.out_dir).mkdir(parents=True)
        (Path(cell.out_dir) / "victim.json").write_text(json.dumps({"weights_hash": cell.name}))
    attack_first = attack_cells(spec, first, HashCache(), {"seed"} | _declared() | {"attacker", "targeted"})
    attack_second = attack_cells(spec, second, HashCache(), {"seed"} | _declared() | {"attacker", "targeted"})
    assert [c.name for c in attack_first] == ["FC-BERT-PWWS-U"]
    assert [c.name for c in attack_second] == ["FC-BERT-PWWS-U-t1"]
    assert "training_seed" not in attack_first[0].inputs and attack_second[0].inputs["training_seed"] == 1
    assert attack_first[0].key != attack_second[0].key and attack_second[0].depends_on == "FC-BERT-t1"


def test_names_carry_the_training_and_parse_back():
    assert run_name("FC", "BERT", "PWWS", "targeted", seed=2, training=1) == "FC-BERT-PWWS-T-t1-s2"
    assert run_name("FC", "BERT", "PWWS", "targeted") == "FC-BERT-PWWS-T"
    assert parse_cell_name("FC-BERT-PWWS-T-t1-s2")["attacker"] == "PWWS"
    assert parse_cell_name("FC-BERT-t1") == {"task": "FC", "victim": "BERT", "attacker": "(training)",
                                             "scenario": None, "training": 1}


def test_two_seeds_give_two_victims_and_one_seed_twice_gives_one(tmp_path):
    from bodega.victims import train_victim

    data = write_task_data(tmp_path / "data", n_train=64, n_eval=8)

    def weights(seed: int, folder: str) -> str:
        out = train_victim("PR2", "BiLSTM", data, tmp_path / folder, profile="smoke", epochs=1, seed=seed,
                           progress=False)
        return json.loads((out / "victim.json").read_text())["weights_hash"]

    first = weights(0, "t0")
    assert weights(1, "t1") != first
    assert weights(0, "t0-again") == first


def test_a_rule_may_cover_only_the_other_trainings(tmp_path):
    spec = parse_grid({
        "name": "g", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
        "attackers": ["DeepWordBug", "PWWS"], "scenarios": ["untargeted", "targeted"],
        "training": {"seeds": [0, 1, 2]},
        "examples_for": [{"trainings": [1, 2], "examples": 7}],
        "skip": [{"trainings": [1, 2], "attackers": ["PWWS"], "reason": "training 0 only"}],
    })
    plan = spec.plan
    assert [c.attacker for c in plan.attacks_of("PR2", "BiLSTM", 0)] == ["DeepWordBug", "DeepWordBug", "PWWS", "PWWS"]
    assert [c.attacker for c in plan.attacks_of("PR2", "BiLSTM", 2)] == ["DeepWordBug", "DeepWordBug"]
    assert plan.n_attack_cells == 4 + 2 + 2
    assert [cell.training for cell in plan.left_out()] == [1, 1, 2, 2]  # none of the first training's
    assert spec.examples_of("PR2", "BiLSTM", "DeepWordBug", "targeted", 1) == 7
    assert spec.examples_of("PR2", "BiLSTM", "DeepWordBug", "targeted", 0) is None
    with pytest.raises(GridError, match="trainings"):
        parse_grid({"name": "g", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
                    "attackers": ["PWWS"], "scenarios": ["untargeted"],
                    "skip": [{"trainings": 1, "reason": "x"}]})


def test_each_trainings_attack_is_passed_its_own_victim_folder():
    """The attack notebook finds its victim from ``victim_dir`` only: a notebook that resolved it by name would
    attack training 0 under every training's key, so the grid refuses a notebook without ``victim_dir``."""
    from bodega.experiments.cells import ATTACK_REQUIRED
    from bodega.experiments.runner import check_notebook
    from bodega.notebook.session import victim_paths

    notebook = Path(__file__).resolve().parents[1] / "notebooks" / "attack.ipynb"
    assert "victim_dir" in check_notebook(notebook, ATTACK_REQUIRED)
    assert ("victim_dir",) in ATTACK_REQUIRED
    source = "".join("".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"])
    assert "victim_dir=victim_dir" in source  # the declared folder reaches prepare_run
    assert victim_paths("PR2", "BERT", 0, results_root="r", victim_dir="r/models/PR2-BERT-t1")[1] == \
        Path("r/models/PR2-BERT-t1")


def test_a_grid_refuses_an_attack_notebook_without_victim_dir(tmp_path):
    from bodega.errors import BodegaError
    from bodega.experiments.cells import ATTACK_REQUIRED
    from bodega.experiments.runner import check_notebook

    notebook = tmp_path / "attack.ipynb"
    parameters = ("task = 'PR2'\nattacker = 'PWWS'\ntargeted = False\nn_examples = 5\nquery_budget = None\n"
                  "seed = 0\nprofile = 'smoke'\nbackend = 'native'\nout_dir = ''\nresults_root = ''\ndata_root = ''")
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {"kernelspec": {
        "name": "python3", "language": "python", "display_name": "Python 3"}}, "cells": [{
        "cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": parameters, "outputs": [],
        "execution_count": None, "id": "p"}]}))
    with pytest.raises(BodegaError, match="victim_dir"):
        check_notebook(notebook, ATTACK_REQUIRED)
