"""A victim trained by a grid is reused by a hand-run attack notebook when the settings are the same."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

import bodega.notebook.session as session
from bodega.data import Example, write_tsv
from bodega.errors import BodegaError
from bodega.records import TrainingFingerprint
from bodega.victims.base import hash_files
from bodega.victims.kinds import victim_class
from bodega.victims.reuse import find_trained_victim, same_training
from bodega.victims.training import training_fingerprint


@pytest.fixture()
def data_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "data" / "FC"
    folder.mkdir(parents=True)
    write_tsv(folder / "train.tsv", [Example(i % 2, f"t{i}", f"claim {i} ~ evidence {i}") for i in range(30)])
    return folder


def _trained(folder: Path, fingerprint: TrainingFingerprint, weights: bool = True) -> Path:
    """A finished model folder; with ``weights``, its weight files and their hash as training records them."""
    folder.mkdir(parents=True)
    training = fingerprint.to_dict()
    info = {"task": training["task"], "kind": training["kind"], "training": training}
    if weights:
        (folder / "tokenizer").mkdir()
        for name in ("config.json", "model.safetensors", "tokenizer/vocab.txt"):
            (folder / name).write_text(f"{folder.name} {name}")
        files, extra = victim_class(training["kind"]).files_for_hash(folder, info)
        info["weights_hash"] = hash_files(files, extra)
    else:  # as committed: the metadata records the weights' hash, the weights are not there
        info["weights_hash"] = "0" * 64
    (folder / "victim.json").write_text(json.dumps(info))
    return folder


def test_a_grid_victim_with_the_same_training_is_found(data_dir, tmp_path):
    results = tmp_path / "results"
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    _trained(results / "demo" / "models" / "FC-BiLSTM-other", replace(wanted, epochs=wanted.epochs + 1))
    # The demo grid caps training at 3000 rows; FC has fewer, so the same rows are used.
    grid = _trained(results / "demo" / "models" / "FC-BiLSTM", replace(wanted, max_train=3000))
    assert find_trained_victim("FC", "BiLSTM", data_dir, "cpu", 0, results) == grid
    assert find_trained_victim("FC", "BiLSTM", data_dir, "cpu", 1, results) is None  # another seed
    assert find_trained_victim("FC", "BERT", data_dir, "cpu", 0, results) is None


def test_a_row_cap_below_the_training_rows_is_other_training(data_dir):
    base = training_fingerprint("FC", "BiLSTM", data_dir, "cpu", max_train=0)
    assert same_training(replace(base, max_train=30), base, n_train_rows=30)
    assert not same_training(replace(base, max_train=29), base, n_train_rows=30)


def test_ensure_victim_returns_the_grid_victim_instead_of_training(data_dir, tmp_path, monkeypatch):
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    grid = _trained(tmp_path / "results" / "demo" / "models" / "FC-BiLSTM", wanted)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)

    def no_training(*args, **kwargs):
        raise AssertionError("trained a victim that was already trained")

    monkeypatch.setattr("bodega.victims.train_victim", no_training)
    own = tmp_path / "results" / "models" / "FC-BiLSTM"
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == grid


def test_committed_metadata_without_weights_is_skipped_for_the_demo_victim(data_dir, tmp_path, caplog):
    """Today's failure: results/cpu/models/FC-BERT (committed, no weights) sorts before the demo's FC-BERT."""
    results = tmp_path / "results"
    wanted = training_fingerprint("FC", "BERT", data_dir, "cpu")
    _trained(results / "cpu" / "models" / "FC-BERT", wanted, weights=False)
    demo = _trained(results / "demo" / "models" / "FC-BERT", wanted)
    with caplog.at_level("INFO", logger="bodega.victims.reuse"):
        assert find_trained_victim("FC", "BERT", data_dir, "cpu", 0, results) == demo
    assert "cpu/models/FC-BERT" in caplog.text and "weights are not there" in caplog.text


def test_a_victim_whose_weights_changed_is_not_reused(data_dir, tmp_path, caplog):
    results = tmp_path / "results"
    wanted = training_fingerprint("FC", "BERT", data_dir, "cpu")
    changed = _trained(results / "demo" / "models" / "FC-BERT", wanted)
    (changed / "model.safetensors").write_text("other bytes")
    with caplog.at_level("INFO", logger="bodega.victims.reuse"):
        assert find_trained_victim("FC", "BERT", data_dir, "cpu", 0, results) is None
    assert "differs from the one recorded" in caplog.text


def test_ensure_victim_refuses_its_own_folder_without_weights(data_dir, tmp_path, monkeypatch):
    wanted = training_fingerprint("FC", "BiLSTM", data_dir, "cpu")
    own = _trained(tmp_path / "results" / "models" / "FC-BiLSTM", wanted, weights=False)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    with pytest.raises(BodegaError, match="weights are not there.*remove the folder"):
        session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0)


NEWEST, OLDER = "parameters/grid_study_v3.yaml", "parameters/grid_study.yaml"


def _study(root: Path) -> None:
    """A project whose study grid (it commits its victims) trains FC's BiLSTM (settings of its own, two
    trainings) and FC's BERT, and leaves out every attack on FC's MiniLM (which it still trains); beside it a
    grid that commits nothing."""
    (root / "parameters").mkdir()
    (root / NEWEST).write_text(
        "name: study\nprofile: cpu\ntasks: [FC]\nvictims: [BiLSTM, BERT, MiniLM]\nattackers: [PWWS]\n"
        "scenarios: [untargeted]\nresults: results/study\ntraining: {max_dev: 600, seeds: {BiLSTM: [0, 1]}}\n"
        "skip: [{victims: [MiniLM], reason: too slow}]\nprecision: bf16\ncommits_victims: 3\n")
    (root / "parameters" / "grid_demo.yaml").write_text(
        "name: demo\nprofile: cpu\ntasks: [FC]\nvictims: [BiLSTM]\nattackers: [PWWS]\nscenarios: [untargeted]\n"
        "results: results/demo\n")


def _no_training(*args, **kwargs):
    raise AssertionError("trained a victim the study committed")


def _study_training(data_dir: Path, victim: str, seed: int = 0) -> TrainingFingerprint:
    """The training the study grid of :func:`_study` gives a victim (its max_dev is not the profile's; bf16
    where the victim's family trains in it)."""
    return replace(training_fingerprint("FC", victim, data_dir, "cpu", seed=seed, precision="bf16"), max_dev=600)


def _committed(root: Path, name: str, fingerprint: TrainingFingerprint, weights: bool = True) -> Path:
    """A study victim folder as committed: its weights (or only its metadata) and a marker whose cell key is
    stale (the code changed since), with the training's measured cost."""
    folder = _trained(root / "results" / "study" / "models" / name, fingerprint, weights)
    (folder / "cell.json").write_text(json.dumps({"status": "done", "key": "0" * 64, "name": name,
                                                  "seconds": 1200.0, "cpu_seconds": 1080.0}))
    (folder / "metrics.json").write_text(json.dumps({"history": [{"rows_seen": 900}, {"rows_seen": 1800}]}))
    return folder


def test_the_notebook_attacks_the_study_victim_it_committed(data_dir, tmp_path, monkeypatch):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    first = _committed(tmp_path, "FC-BiLSTM", _study_training(data_dir, "BiLSTM", seed=0))
    second = _committed(tmp_path, "FC-BiLSTM-t1", _study_training(data_dir, "BiLSTM", seed=1))
    monkeypatch.setattr("bodega.victims.train_victim", _no_training)
    own = tmp_path / "results" / "models" / "FC-BiLSTM"
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == first
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 1) == second
    assert session.study_victim("FC", "BiLSTM", data_dir, "smoke") is None  # another profile: not the study's
    assert session.study_victim("FC", "BiLSTM", data_dir, "cpu", 2) is None  # a training the study does not run


def test_a_victim_the_newest_study_has_not_trained_yet_comes_from_the_one_before(data_dir, tmp_path, monkeypatch):
    """The newest study trains FC's BiLSTM (results/study) but has committed only training 1; the study before
    it (its own results folder) committed training 0 with the same settings: the notebook attacks that one,
    and training 1 from the newest."""
    _study(tmp_path)
    older = (tmp_path / NEWEST).read_text().replace("name: study\n", "name: older\n").replace(
        "results/study", "results/older").replace("commits_victims: 3", "commits_victims: 2")
    (tmp_path / OLDER).write_text(older)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    newest_t1 = _committed(tmp_path, "FC-BiLSTM-t1", _study_training(data_dir, "BiLSTM", seed=1))
    older_t0 = _trained(tmp_path / "results" / "older" / "models" / "FC-BiLSTM",
                        _study_training(data_dir, "BiLSTM", seed=0))
    monkeypatch.setattr("bodega.victims.train_victim", _no_training)
    own = tmp_path / "results" / "models" / "FC-BiLSTM"
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == older_t0
    assert session.study_victim("FC", "BiLSTM", data_dir, "cpu", 0).grid == OLDER
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 1) == newest_t1
    # once the newest commits training 0, it wins
    newest_t0 = _committed(tmp_path, "FC-BiLSTM", _study_training(data_dir, "BiLSTM", seed=0))
    assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == newest_t0


def test_a_committed_victim_whose_attacks_the_study_left_out_is_attacked(data_dir, tmp_path, monkeypatch):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    committed = _committed(tmp_path, "FC-MiniLM", _study_training(data_dir, "MiniLM"))
    monkeypatch.setattr("bodega.victims.train_victim", _no_training)
    assert session.ensure_victim("FC", "MiniLM", data_dir, tmp_path / "own", "cpu", 0) == committed


def test_a_committed_victim_trained_otherwise_than_the_study_is_not_attacked(data_dir, tmp_path, monkeypatch,
                                                                           caplog):
    """Its weights match its own record, but the study trains the victim with other settings (here: on other
    training rows), so the folder is not the study's victim of this data; the notebook trains its own."""
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    other_rows = replace(_study_training(data_dir, "BiLSTM"), train_sha256="f" * 64)
    _committed(tmp_path, "FC-BiLSTM", other_rows)
    trained = []
    monkeypatch.setattr("bodega.victims.train_victim", lambda *args, **kwargs: trained.append(args) or args[3])
    own = tmp_path / "results" / "models" / "FC-BiLSTM"
    with caplog.at_level("WARNING", logger="bodega.notebook.session"):
        assert session.ensure_victim("FC", "BiLSTM", data_dir, own, "cpu", 0) == own and len(trained) == 1
    assert "no committed victim of FC-BiLSTM (training 0)" in caplog.text
    assert "trained with other settings than the study's (train_sha256)" in caplog.text


def test_a_committed_victim_whose_weights_changed_is_refused(data_dir, tmp_path, monkeypatch):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    committed = _committed(tmp_path, "FC-BiLSTM", _study_training(data_dir, "BiLSTM"))
    (committed / "model.safetensors").write_text("other bytes")
    monkeypatch.setattr("bodega.victims.train_victim", _no_training)
    with pytest.raises(BodegaError, match=r"FC-BiLSTM cannot be attacked: its weights hash \w+ differs from the one "
                                          r"recorded.*git checkout -- .*FC-BiLSTM"):
        session.ensure_victim("FC", "BiLSTM", data_dir, tmp_path / "own", "cpu", 0)


def test_a_study_victim_without_weights_is_trained_with_the_estimate_first(data_dir, tmp_path, monkeypatch,
                                                                          caplog):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    _committed(tmp_path, "FC-BERT", _study_training(data_dir, "BERT"), weights=False)
    said_before_training = []

    def train(*args, **kwargs):
        said_before_training.append(caplog.text)
        return args[3]

    monkeypatch.setattr("bodega.victims.train_victim", train)
    own = tmp_path / "results" / "models" / "FC-BERT"
    with caplog.at_level("WARNING", logger="bodega.notebook.session"):
        assert session.ensure_victim("FC", "BERT", data_dir, own, "cpu", 0) == own
    [said] = said_before_training
    assert "no committed victim of FC-BERT (training 0)" in said and "weights are not there" in said
    # 1080 CPU-seconds over the 1800 rows the study's training saw: 0.6 a row
    assert "took 20 minutes of wall clock and 18 CPU-minutes on its machine, 0.60 CPU-seconds a row" in said
    epochs = training_fingerprint("FC", "BERT", data_dir, "cpu").epochs  # the profile's, over the 30 rows
    assert f"sees at most {30 * epochs} rows ({epochs} epochs of 30): about {0.6 * 30 * epochs / 60:.0f} CPU" in said


def test_a_victim_the_study_does_not_train_gets_no_estimate(data_dir, tmp_path, monkeypatch, caplog):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    monkeypatch.setattr("bodega.victims.train_victim", lambda *args, **kwargs: args[3])
    with caplog.at_level("WARNING", logger="bodega.notebook.session"):
        session.ensure_victim("FC", "GEMMA2B", data_dir, tmp_path / "own", "cpu", 0)
    assert f"no grid that commits its victims ({NEWEST}) trains it" in caplog.text
    assert "no measured training time for this victim" in caplog.text


def test_the_notebook_attacks_the_study_victim_in_the_study_precision_unless_told(data_dir, tmp_path, monkeypatch):
    """The study attacked its victims in bf16: a notebook run against one, no precision asked, is the study's run;
    any other victim runs in fp32 unless a precision is asked for."""
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    committed = _committed(tmp_path, "FC-BERT", _study_training(data_dir, "BERT"))
    assert session.ensure_victim("FC", "BERT", data_dir, tmp_path / "own", "cpu", 0) == committed
    assert session.attack_precision(None, committed, "FC", "BERT", data_dir, "cpu") == "bf16"
    assert session.attack_precision("fp32", committed, "FC", "BERT", data_dir, "cpu") == "fp32"
    assert session.attack_precision(None, tmp_path / "own", "FC", "BERT", data_dir, "cpu") == "fp32"
    assert session.attack_precision(None, committed, "FC", "BERT", data_dir, "smoke") == "fp32"


def test_a_new_study_grid_is_found_by_its_own_key_without_a_change_to_the_library(data_dir, tmp_path, monkeypatch):
    """A study is one grid file with ``commits_victims``: the highest number wins over the studies before it, and
    the number says the order, not the file's name."""
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    newer = (tmp_path / NEWEST).read_text().replace("name: study\n", "name: next\n").replace(
        "results/study", "results/next").replace("commits_victims: 3", "commits_victims: 4")
    (tmp_path / "parameters" / "grid_aardvark.yaml").write_text(newer)
    _committed(tmp_path, "FC-BiLSTM", _study_training(data_dir, "BiLSTM"))
    assert [spec.name for spec in session.committing_grids()] == ["next", "study"]  # grid_demo commits nothing
    assert session.study_victim("FC", "BiLSTM", data_dir, "cpu", 0).grid == NEWEST  # the newest has not trained it
    next_t0 = _trained(tmp_path / "results" / "next" / "models" / "FC-BiLSTM", _study_training(data_dir, "BiLSTM"))
    found = session.study_victim("FC", "BiLSTM", data_dir, "cpu", 0)
    assert (found.grid, found.folder) == ("parameters/grid_aardvark.yaml", next_t0)


def test_two_studies_of_one_number_are_refused(data_dir, tmp_path, monkeypatch):
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    (tmp_path / OLDER).write_text((tmp_path / NEWEST).read_text().replace("name: study\n", "name: older\n"))
    with pytest.raises(BodegaError, match=r"grid_study.yaml: commits_victims: 3 is also another grid's"):
        session.study_victim("FC", "BiLSTM", data_dir, "cpu", 0)


def test_the_project_names_its_committing_grids_in_parameters():
    """The shipped studies say in their grid files that they commit their victims, newest (v4) first."""
    assert [spec.name for spec in session.committing_grids()] == ["study-v4", "study-v3", "study"]


def test_a_notebook_run_spelling_the_victim_bert_attacks_the_committed_fc_bert(data_dir, tmp_path, monkeypatch):
    """``-p task fc -p victim bert``: the names are made canonical before anything looks for the victim, so the run
    attacks the study's committed FC-BERT in the study's precision and names its folder canonically; nothing is
    trained into an ``FC-bert`` folder."""
    _study(tmp_path)
    monkeypatch.setattr(session, "project_root", lambda start=".": tmp_path)
    write_tsv(data_dir / "attack.tsv", [Example(1, "a", "claim ~ evidence")])
    committed = _committed(tmp_path, "FC-BERT", _study_training(data_dir, "BERT"))
    monkeypatch.setattr("bodega.victims.train_victim", _no_training)
    run = session.prepare_run("fc", "bert", "bert_attack", False, 2, 0, "native", "CPU", data_dir=str(data_dir))
    assert (run.task, run.victim, run.attacker, run.profile) == ("FC", "BERT", "BERT-ATTACK", "cpu")
    assert (run.victim_dir, run.precision) == (committed, "bf16")
    assert run.out_dir == tmp_path / "results" / "notebook-runs" / "FC-BERT-BERT-ATTACK-U-cpu-n2-s0-native-bf16"
    with pytest.raises(BodegaError, match="unknown victim kind 'bertt'; choose one of BiLSTM, "):
        session.prepare_run("FC", "bertt", "PWWS", False, 2, 0, "native", data_dir=str(data_dir))


def test_the_committed_study_fc_bert_is_found_under_any_spelling():
    """The project's own committed FC-BERT (study v4's, copied in from study v3 with the same weights), as the
    mission notebook's session finds it."""
    data = session.project_root() / "data" / "FC"
    if not (data / "train.tsv").is_file():
        pytest.skip("prepared data absent: bodega data prepare-missing --raw-root ../shared/data/raw --out-root data")
    from bodega.names import victim_name

    found = session.study_victim("FC", victim_name("bert"), data, "cpu", 0)
    assert found.folder == session.project_root() / "results" / "study-v4" / "models" / "FC-BERT"
    assert session.committed_problem(found) is None
