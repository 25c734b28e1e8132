"""Every model and corpus is checked where it is used, not only where it was first installed."""
from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from victims_fixtures import tiny_mpnet_dir

from bodega.cli import main
from bodega.errors import BodegaError

RAW_ROOT = Path(__import__("os").environ.get("BODEGA_RAW", "/work/shared/data/raw"))


def test_prepare_checks_every_shipped_hash_without_the_corpus_top_file(tmp_path, capsys):
    """FC without DATA_LICENSE and with its test file cut to 435 lines was converted to other row counts."""
    from bodega.data.corpora import load_corpora

    entry = load_corpora()["FC"]
    if not (RAW_ROOT / entry.folder).is_dir():
        pytest.skip(f"the raw FC corpus is not at {RAW_ROOT / entry.folder} (set BODEGA_RAW)")
    raw = tmp_path / "FC"
    shutil.copytree(RAW_ROOT / entry.folder, raw)
    for path in raw.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    (raw / "DATA_LICENSE").unlink()
    test = raw / "symmetric_v0.2" / "fever_symmetric_test.jsonl"
    test.write_text("".join(test.read_text().splitlines(keepends=True)[:435]))
    assert main(["data", "prepare", "--task", "FC", "--raw", str(raw), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "DATA_LICENSE" in error and "fever_symmetric_test.jsonl" in error
    assert not (tmp_path / "out" / "train.tsv").exists()


def test_a_model_file_is_hashed_again_only_when_its_size_or_time_change(tmp_path, monkeypatch):
    import os

    from bodega import resources

    monkeypatch.setenv("BODEGA_CACHE", str(tmp_path / "cache"))
    hashed = []
    monkeypatch.setattr(resources, "file_sha256", lambda path: hashed.append(path) or f"sha-{len(hashed)}")
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"one")
    assert resources.recorded_sha256(weights) == resources.recorded_sha256(weights) == "sha-1"
    weights.write_bytes(b"two")
    os.utime(weights, ns=(1, 1))
    assert resources.recorded_sha256(weights) == "sha-2" and len(hashed) == 2


def test_a_semantic_model_changed_after_it_was_unzipped_is_not_loaded(tmp_path, monkeypatch, caplog):
    """The cached all-mpnet-base-v2 folder was trusted by its marker alone: weights changed later were loaded."""
    from bodega import resources
    from bodega.resource_parts import SplitFile

    monkeypatch.setenv("BODEGA_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "mpnet" / "model"
    model.mkdir(parents=True)
    (model / ".sha256").write_text(resources.MPNET_SAFETENSORS_SHA256 + "\n")
    (model / "model.safetensors").write_bytes(b"other weights")
    monkeypatch.setattr(SplitFile, "installed", lambda self: True)

    def unzip_again(split, target):
        raise RuntimeError("unzipping the packaged model again")

    monkeypatch.setattr(resources, "_joined", unzip_again)
    with caplog.at_level(logging.WARNING), pytest.raises(RuntimeError, match="unzipping the packaged model again"):
        resources.mpnet_dir(tmp_path / "mpnet")
    assert "is not the pinned file" in caplog.text


def _other_mpnet(folder: Path) -> Path:
    """A tiny MPNet like :func:`tiny_mpnet_dir`'s with other weights."""
    import torch
    from transformers import MPNetForSequenceClassification

    tiny_mpnet_dir(folder)
    model = MPNetForSequenceClassification.from_pretrained(folder)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.5)
    model.save_pretrained(folder)
    return folder


def test_an_mpnet_override_is_recorded_in_the_name_and_never_resumed_across(tmp_path, monkeypatch):
    from bodega.scoring import load_semantic_model
    from bodega.scoring.stream import score_file

    one, other = tiny_mpnet_dir(tmp_path / "one"), _other_mpnet(tmp_path / "other")
    out = tmp_path / "scores.jsonl"
    names = []
    for folder in (one, other):
        monkeypatch.setenv("BODEGA_MPNET", str(folder))
        names.append(load_semantic_model("cpu").name)
    assert all(name.startswith("mpnet-cosine-folded@environment:") for name in names) and names[0] != names[1]

    monkeypatch.setenv("BODEGA_MPNET", str(one))
    _bodega_tsv(tmp_path / "attacked.tsv")
    score_file("PR2", tmp_path / "attacked.tsv", out, load_semantic_model("cpu"), chunk=1)
    monkeypatch.setenv("BODEGA_MPNET", str(other))
    with pytest.raises(BodegaError, match="scores of other inputs"):
        score_file("PR2", tmp_path / "attacked.tsv", out, load_semantic_model("cpu"), chunk=1)


def _bodega_tsv(target: Path) -> None:
    """An attacked-examples TSV (InCrediblAE's layout, as ``bodega score`` reads it): three changed texts."""
    header = "succeeded\tnum_queries\toriginal_text\tmodified_text\n"
    target.write_text(header + "".join(f"1\t{10 + i}\tThe council met on day {i}.\tThe counsel met on day {i}.\n"
                                       for i in range(3)), encoding="utf-8")


def test_a_swapped_metrics_file_is_refused_before_it_is_tabulated(tmp_path):
    import json

    from victims_fixtures import write_task_data

    from bodega.report.results import load_victims
    from bodega.victims import train_victim

    data = write_task_data(tmp_path / "data", n_train=40, n_eval=8)
    models = tmp_path / "results" / "models"
    for seed, name in ((0, "PR2-BiLSTM"), (1, "PR2-BiLSTM-t1")):
        train_victim("PR2", "BiLSTM", data, models / name, epochs=1, seed=seed, progress=False)
    assert len(load_victims(tmp_path / "results")) == 2
    own = (models / "PR2-BiLSTM" / "metrics.json").read_text()
    other = json.loads((models / "PR2-BiLSTM-t1" / "metrics.json").read_text())
    (models / "PR2-BiLSTM" / "metrics.json").write_text(json.dumps(other))
    with pytest.raises(BodegaError, match=r"PR2-BiLSTM/metrics.json: written for weights .* the metrics of another"):
        load_victims(tmp_path / "results")
    # a metrics file written before it recorded the hash: the attack predictions written with it vouch for it
    other.pop("weights_hash")
    other["attack"]["f1"] = json.loads(own)["attack"]["f1"] + 0.01
    (models / "PR2-BiLSTM" / "metrics.json").write_text(json.dumps(other))
    with pytest.raises(BodegaError, match="not those of this victim's attack predictions"):
        load_victims(tmp_path / "results")
    (models / "PR2-BiLSTM" / "metrics.json").write_text(own)
    assert len(load_victims(tmp_path / "results")) == 2
