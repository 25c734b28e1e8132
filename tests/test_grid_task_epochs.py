"""Per-task epochs: a ``FC-BERT`` key in a profile or a grid wins over the family's ``BERT`` key."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from bodega.experiments import GridError, parse_grid
from bodega.experiments.cells import attack_cells, victim_cells
from bodega.experiments.hashing import HashCache
from bodega.profiles import Profile, get_profile

BASE = {"name": "x", "profile": "cpu", "tasks": ["PR2", "FC"], "victims": ["BiLSTM", "BERT"],
        "attackers": ["PWWS"], "scenarios": ["untargeted"]}


def test_profile_task_key_wins_over_family_key():
    profile = Profile("p", allow_hub=False, models={}, epochs={"BERT": 2, "FC-BERT": 7})
    assert profile.epochs_for("FC", "BERT") == 7
    assert profile.epochs_for("PR2", "BERT") == 2
    with pytest.raises(KeyError):
        profile.epochs_for("FC", "BiLSTM")


def test_every_profile_has_epochs_for_every_family_and_task():
    for name in ("paper", "cpu", "smoke"):
        profile = get_profile(name)
        for task in ("HN", "PR2", "FC", "RD"):
            for kind in ("BiLSTM", "BERT", "GEMMA2B", "GEMMA7B"):
                assert profile.epochs_for(task, kind) >= 1


def _where(tmp_path) -> dict:
    """A grid's data (one row per split of PR2 and FC), results and victim notebook under ``tmp_path``."""
    for task in ("PR2", "FC"):
        (tmp_path / "data" / task).mkdir(parents=True)
        for split in ("train", "dev", "attack"):
            (tmp_path / "data" / task / f"{split}.tsv").write_text(f"0\t{task}-1\ttext\n")
    notebook = tmp_path / "victim.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]), str(notebook))
    return {"data_root": str(tmp_path / "data"), "results": str(tmp_path / "results"),
            "notebooks": {"victim": str(notebook)}}


def test_grid_task_key_wins_and_reaches_the_training_cells(tmp_path):
    spec = parse_grid({**BASE, **_where(tmp_path), "training": {"epochs": {"BERT": 1, "FC-BERT": 6}}})
    assert spec.training.epochs_for("FC", "BERT") == 6 and spec.training.epochs_for("PR2", "BERT") == 1
    assert spec.training.epochs_for("FC", "BiLSTM") is None  # the profile decides
    epochs = {cell.name: cell.inputs["epochs"] for cell in victim_cells(spec, HashCache())}
    assert epochs == {"PR2-BiLSTM": None, "PR2-BERT": 1, "FC-BiLSTM": None, "FC-BERT": 6}


@pytest.mark.parametrize("key", ["FC-BART", "XX-BERT", "PR2BERT", "FC-"])
def test_unknown_task_victim_keys_are_errors(key):
    with pytest.raises(GridError, match=f"training.epochs: unknown victim '{key}'"):
        parse_grid({**BASE, "training": {"epochs": {key: 3}}}, "g.yaml")


def test_task_key_epochs_must_be_positive():
    with pytest.raises(GridError, match="training.epochs.FC-BERT"):
        parse_grid({**BASE, "training": {"epochs": {"FC-BERT": 0}}}, "g.yaml")


def test_a_victim_key_spelt_otherwise_reaches_the_same_cells_with_the_same_keys(tmp_path):
    """``pr-bert``, ``PR-BERT`` (PR is PR2's alias) and ``PR2-BERT`` are one victim: the grid makes its keys canonical,
    so the training cells (settings and keys) are those of the canonical spelling."""
    where = _where(tmp_path)
    canonical = parse_grid({**BASE, **where, "training": {"epochs": {"PR2-BERT": 3, "BERT": 1},
                                                          "seeds": {"BiLSTM": [0, 1]}}})
    other = parse_grid({**BASE, **where, "tasks": ["pr", "fc"], "victims": ["bilstm", "bert"], "profile": "CPU",
                        "attackers": ["pwws"], "training": {"epochs": {"pr-bert": 3, "Bert": 1},
                                                            "seeds": {"bilstm": [0, 1]}}})
    assert other.training == canonical.training and other.training.epochs == {"PR2-BERT": 3, "BERT": 1}
    keys = [(cell.name, cell.key) for cell in victim_cells(canonical, HashCache())]
    assert [(cell.name, cell.key) for cell in victim_cells(other, HashCache())] == keys and len(keys) == 6

    def attack_keys(spec):
        hashes = HashCache()
        return [(cell.name, cell.key) for victim in victim_cells(spec, hashes)
                for cell in attack_cells(spec, victim, hashes)]

    for cell in victim_cells(canonical, HashCache()):  # each victim's folder, as a trained one
        Path(cell.out_dir).mkdir(parents=True)
    assert attack_keys(other) == attack_keys(canonical) and len(attack_keys(canonical)) == 6
    with pytest.raises(GridError, match="training.epochs: a victim is given twice in two spellings"):
        parse_grid({**BASE, "training": {"epochs": {"PR-BERT": 3, "PR2-BERT": 3}}})
