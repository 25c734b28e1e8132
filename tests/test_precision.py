"""The precision setting: how ``auto`` decides, bf16 victims and what records and keys name the precision."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from bodega.errors import BodegaError
from bodega.precision import (
    FP32,
    Precision,
    attack_precision,
    cpu_flags,
    resolve_precision,
    using_precision,
)
from bodega.victims import load_victim, train_victim
from victims_fixtures import one_thread, tiny_bert_dir, tiny_gemma_dir, write_task_data  # noqa: F401

AMX = {"avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "amx_int8"}
NO_AMX = {"avx2", "avx512f", "avx512_bf16"}
TEXTS = ["evil traitors destroy the budget", "the council met on tuesday", "", "parks " * 40,
         "residents asked about the weather and roads"]


def test_auto_picks_fp32_without_amx_and_bf16_with_it():
    assert resolve_precision("auto", flags=NO_AMX, gpu_bf16=False) == FP32
    assert resolve_precision("auto", flags=set(), gpu_bf16=False) == FP32
    assert resolve_precision("auto", flags=AMX, gpu_bf16=False) == Precision("bf16", "amx-bf16")
    assert resolve_precision("auto", flags=set(), gpu_bf16=True) == Precision("bf16", "cuda-bf16")
    assert resolve_precision(None) == resolve_precision("fp32") == FP32


def test_bf16_without_amx_warns_that_it_is_slower(caplog):
    from bodega.precision import _warn_slow_bf16

    _warn_slow_bf16.cache_clear()  # said once per process: an earlier test may have said it
    with caplog.at_level(logging.WARNING, logger="bodega.precision"):
        chosen = resolve_precision("bf16", flags=NO_AMX, gpu_bf16=False)
    assert chosen == Precision("bf16", "avx512-bf16")
    assert "slower than fp32" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="bodega.precision"):
        resolve_precision("bf16", flags=AMX, gpu_bf16=False)
    assert caplog.text == ""


def test_unknown_precision_names_the_option():
    with pytest.raises(BodegaError, match="--precision"):
        resolve_precision("fp16")


def test_cpu_flags_are_read_from_cpuinfo(tmp_path):
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx512_bf16 amx_bf16\n\nprocessor\t: 1\nflags\t: fpu\n")
    assert cpu_flags(info) == {"fpu", "sse2", "avx512_bf16", "amx_bf16"}
    assert cpu_flags(tmp_path / "absent") == frozenset()


def test_attack_models_take_the_precision_only_inside_the_block():
    bf16 = Precision("bf16", "amx-bf16")
    assert attack_precision() == FP32
    with using_precision(bf16):
        assert attack_precision() == bf16
    assert attack_precision() == FP32


@pytest.fixture(scope="module")
def bert_victim_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("precision")
    data = write_task_data(root / "data", n_train=32, n_eval=8)
    return train_victim("PR2", "BERT", data, root / "bert", profile="paper", epochs=1,
                        base_model=tiny_bert_dir(root / "tiny-bert"), progress=False)


def test_tiny_bert_runs_in_bf16_close_to_fp32(bert_victim_dir):
    import torch

    fp32 = load_victim(bert_victim_dir)
    bf16 = load_victim(bert_victim_dir, precision=Precision("bf16", "avx512-bf16"))
    assert (fp32.precision, bf16.precision) == ("fp32", "bf16")
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    assert next(fp32.model.parameters()).dtype == torch.float32
    expected, got = fp32.predict_proba(TEXTS), bf16.predict_proba(TEXTS)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(got, expected, atol=0.02)
    assert not np.array_equal(got, expected)  # bf16 really ran: its rounding shows


def test_bf16_and_fp32_victims_never_share_cache_entries(bert_victim_dir, tmp_path):
    from bodega.victims.accounting import QueryAccountant
    from bodega.victims.cache import ProbabilityCache

    fp32 = load_victim(bert_victim_dir)
    bf16 = load_victim(bert_victim_dir, precision=Precision("bf16", "avx512-bf16"))
    assert fp32.weights_hash == bf16.weights_hash  # the same weights ...
    assert (fp32.precision, bf16.precision) == ("fp32", "bf16")  # ... but not the same victim
    with ProbabilityCache(tmp_path / "cache.sqlite") as cache:
        QueryAccountant(fp32, cache=cache).predict_proba(TEXTS)
        second = QueryAccountant(bf16, cache=cache)
        got = second.predict_proba(TEXTS)
        assert second.forwards == len(set(TEXTS))  # nothing came from the fp32 rows
        np.testing.assert_array_equal(got, bf16.predict_proba(TEXTS))
        assert len(cache) == 2 * len(set(TEXTS))


def test_bilstm_stays_fp32_at_bf16(tmp_path):
    data = write_task_data(tmp_path / "data", n_train=32, n_eval=8)
    out = train_victim("PR2", "BiLSTM", data, tmp_path / "bilstm", profile="smoke", epochs=1, progress=False,
                       precision=Precision("bf16", "amx-bf16"))
    info = json.loads((out / "victim.json").read_text())
    assert (info["precision"], info["kernels"]) == ("fp32", "fp32")
    assert info["training"]["precision"] == "fp32"  # the same model as an fp32 training
    victim = load_victim(out, precision=Precision("bf16", "amx-bf16"))
    assert victim.precision == "fp32"


def test_bert_training_in_bf16_is_recorded_and_fingerprinted(tmp_path):
    data = write_task_data(tmp_path / "data", n_train=32, n_eval=8)
    base = tiny_bert_dir(tmp_path / "tiny-bert")
    out = train_victim("PR2", "BERT", data, tmp_path / "bert", profile="paper", epochs=1, base_model=base,
                       progress=False, precision=Precision("bf16", "avx512-bf16"))
    info = json.loads((out / "victim.json").read_text())
    metrics = json.loads((out / "metrics.json").read_text())
    assert (info["precision"], info["kernels"], metrics["precision"]) == ("bf16", "avx512-bf16", "bf16")
    assert info["training"]["precision"] == "bf16"
    assert 0.0 <= metrics["dev"]["f1"] <= 1.0


def test_gemma_bf16_merges_lora_and_stays_close(tmp_path):
    import torch

    data = write_task_data(tmp_path / "data", n_train=16, n_eval=8)
    out = train_victim("PR2", "GEMMA2B", data, tmp_path / "gemma", profile="cpu", epochs=1, max_train=16,
                       base_model=tiny_gemma_dir(tmp_path / "tiny-gemma"), quantize=False, progress=False)
    fp32 = load_victim(out)
    bf16 = load_victim(out, precision=Precision("bf16", "amx-bf16"))
    assert not hasattr(bf16.model, "peft_config")  # LoRA merged into the base weights
    assert next(bf16.model.parameters()).dtype == torch.bfloat16
    assert (bf16.precision, bf16.kernels) == ("bf16", "amx-bf16")
    np.testing.assert_allclose(bf16.predict_proba(TEXTS), fp32.predict_proba(TEXTS), atol=0.05)


def test_attack_summaries_name_their_precision(bert_victim_dir, tmp_path):
    from bodega.attacks import run_attack
    from bodega.scoring.semantic import CharacterModel

    data = bert_victim_dir.parent / "data"
    common = dict(n_examples=2, profile="smoke", semantic=CharacterModel(), progress=False)
    fp32 = run_attack("PR2", bert_victim_dir, data, "DeepWordBug", tmp_path / "fp32", **common).run
    bf16 = run_attack("PR2", bert_victim_dir, data, "DeepWordBug", tmp_path / "bf16",
                      precision=Precision("bf16", "avx512-bf16"), **common).run
    assert (fp32.config.precision, fp32.config.kernels) == ("fp32", "fp32")
    assert (bf16.config.precision, bf16.config.kernels, bf16.config.attack_precision) == ("bf16", "avx512-bf16", "bf16")
    saved = json.loads((tmp_path / "bf16" / "summary.json").read_text())
    assert saved["precision"] == "bf16"
    with pytest.raises(BodegaError, match="different settings"):  # a bf16 run never resumes an fp32 one
        run_attack("PR2", bert_victim_dir, data, "DeepWordBug", tmp_path / "fp32",
                   precision=Precision("bf16", "avx512-bf16"), **common)


def _grid(tmp_path: Path, **changes):
    from bodega.experiments import parse_grid

    data = tmp_path / "data" / "PR2"
    data.mkdir(parents=True, exist_ok=True)
    for split in ("train", "attack", "dev"):
        (data / f"{split}.tsv").write_text(f"1\tid-{split}\tsome {split} text\n")
    raw = {"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM", "BERT"],
           "attackers": ["PWWS"], "scenarios": ["untargeted"], "results": str(tmp_path / "results"),
           "data_root": str(tmp_path / "data"), **changes}
    return parse_grid(raw, "test-grid.yaml")


def test_grid_cell_keys_and_parameters_include_the_precision(tmp_path):
    from bodega.experiments import GridError
    from bodega.experiments.cells import attack_cells, victim_cells
    from bodega.experiments.hashing import HashCache

    declared = {"task", "victim", "attacker", "targeted", "n_examples", "query_budget", "seed", "profile",
                "backend", "out_dir", "victim_dir", "data_dir", "max_train", "epochs", "precision"}
    hashes = HashCache()
    fp32, bf16 = _grid(tmp_path), _grid(tmp_path, precision="bf16")
    assert (fp32.precision, bf16.precision) == ("fp32", "bf16")
    assert _grid(tmp_path, precision="auto").precision == "auto"
    with pytest.raises(GridError, match="precision"):
        _grid(tmp_path, precision="fp16")
    victims = {spec.precision: {c.name: c for c in victim_cells(spec, hashes, declared)} for spec in (fp32, bf16)}
    # BERT trains under autocast at bf16 (another model); the BiLSTM trains the same either way.
    assert victims["fp32"]["PR2-BiLSTM"].key == victims["bf16"]["PR2-BiLSTM"].key
    assert victims["bf16"]["PR2-BERT"].parameters["precision"] == "bf16"
    assert victims["fp32"]["PR2-BERT"].key != victims["bf16"]["PR2-BERT"].key
    for name in ("PR2-BiLSTM", "PR2-BERT"):
        Path(victims["fp32"][name].out_dir).mkdir(parents=True, exist_ok=True)  # the trained victim's folder
        plain = attack_cells(fp32, victims["fp32"][name], hashes, declared)[0]
        low = attack_cells(bf16, victims["bf16"][name], hashes, declared)[0]
        assert plain.key != low.key and low.inputs["precision"] == low.parameters["precision"] == "bf16"
        assert "precision" not in plain.parameters  # fp32 cells keep the keys they had
    with pytest.raises(BodegaError, match="lacks precision"):
        victim_cells(bf16, hashes, declared - {"precision"})


def test_auto_grid_cells_are_keyed_by_what_the_machine_runs(tmp_path, monkeypatch):
    from bodega import precision
    from bodega.experiments.cells import victim_cells
    from bodega.experiments.hashing import HashCache

    monkeypatch.setattr(precision, "cpu_flags", lambda path=None: frozenset(NO_AMX))
    monkeypatch.setattr(precision, "cuda_bf16", lambda: False)
    auto = {c.name: c.key for c in victim_cells(_grid(tmp_path, precision="auto"), HashCache())}
    fp32 = {c.name: c.key for c in victim_cells(_grid(tmp_path), HashCache())}
    assert auto == fp32  # no AMX: auto is fp32, and its cells are the fp32 cells


def test_shipped_notebooks_take_a_precision_parameter():
    from bodega.experiments.runner import notebook_parameters

    root = Path(__file__).resolve().parents[1] / "notebooks"
    for name in ("train_victim.ipynb", "attack.ipynb"):
        assert "precision" in notebook_parameters(root / name), name


def test_deviations_name_bf16_where_a_grid_uses_it(tmp_path):
    from bodega_book.study_tables import grid_deviations

    assert "numeric precision" not in set(grid_deviations(_grid(tmp_path))["choice"])
    table = grid_deviations(_grid(tmp_path, precision="bf16"))
    row = table[table["choice"] == "numeric precision"].iloc[0]
    assert row["here"].startswith("bf16") and "BiLSTM" in row["cells"]


def test_performance_tables_compute_speed_ups_and_intervals():
    from bodega_book.performance import attack_table, bf16_effect, throughput_table, verdict_line

    run = {"kernels": "amx-bf16", "examples": 4, "attack_seconds": 2.0, "wall_seconds": 3.0, "success": 0.5,
           "queries_per_example": 10.0}
    measured = {
        "throughput": {"MiniLM": [{"variant": "fp32", "batch_1": 10.0, "batch_8": 20.0, "batch_32": 40.0},
                                  {"variant": "bf16", "batch_1": 15.0, "batch_8": 40.0, "batch_32": 120.0}]},
        "attack_cells": {"cells": {"MiniLM": {
            "fp32": {**run, "kernels": "fp32", "attack_cpu_seconds": 8.0},
            "bf16": {**run, "attack_cpu_seconds": 4.0, "bodega": 0.28},
            "bodega_intervals": {"fp32": [0.3, 0.1, 0.5], "bf16": [0.28, 0.1, 0.45],
                                 "bf16_minus_fp32": [-0.02, -0.05, 0.0]}}}},
        "batch_dependence": {"MiniLM": {"fp32": {"max_probability_change": 1e-7},
                                        "bf16": {"max_probability_change": 0.003}}}}
    speed = throughput_table(measured).set_index("variant")
    assert list(speed.loc["bf16", ["x fp32, batch 1", "x fp32, batch 8", "x fp32, batch 32"]]) == [1.5, 2.0, 3.0]
    attacks = attack_table(measured).set_index("precision")
    assert attacks.loc["bf16", "CPU speed-up"] == 2.0
    assert attacks.loc["bf16 - fp32 (paired)", "BODEGA 95% interval"] == "[-0.050, 0.000]"
    assert "-0.020" in bf16_effect(measured) and "0.0030" in bf16_effect(measured)
    assert "2.00x faster" in verdict_line(measured) and "inside fp32's interval" in verdict_line(measured)


def test_semantic_scores_stay_fp32_unless_bf16_is_asked_for():
    import torch

    from bodega.scoring.semantic import build_semantic_model

    pairs = [("the council met on tuesday", "the council met on monday"),
             ("evil traitors destroy the budget", "residents asked about the weather")]
    exact = build_semantic_model("sbert-cosine")
    lowered = build_semantic_model("sbert-cosine", precision=Precision("bf16", "amx-bf16"))
    assert next(exact.encoder._model.parameters()).dtype == torch.float32
    assert next(lowered.encoder._model.parameters()).dtype == torch.bfloat16
    np.testing.assert_allclose(lowered.score(pairs), exact.score(pairs), atol=0.02)
    with pytest.raises(BodegaError, match="bleurt-20 runs in fp32"):
        build_semantic_model("bleurt-20", precision=Precision("bf16", "amx-bf16"))


def test_commands_take_precision():
    from bodega.cli import build_parser

    parser = build_parser()
    common = {"attack": ["--task", "PR2", "--victim", "v", "--data", "d", "--attacker", "PWWS", "--out", "o"],
              "train": ["--task", "PR2", "--victim", "BERT", "--data", "d", "--out", "o"],
              "score": ["--task", "PR2", "--input", "i", "--out", "o"]}
    for command, options in common.items():
        assert parser.parse_args([command, *options]).precision == "fp32"
        assert parser.parse_args([command, *options, "--precision", "auto"]).precision == "auto"
    assert parser.parse_args(["grid", "run", "g.yaml", "--precision", "bf16"]).precision == "bf16"
    with pytest.raises(SystemExit):
        parser.parse_args(["attack", *common["attack"], "--precision", "fp16"])


def test_the_slow_bf16_warning_is_said_once_per_process(caplog):
    """A command resolves its precision for each model it loads: the same line ten times hid the lines that
    differ (the grid filtered its own repeats; `bodega attack` and the API did not)."""
    from bodega import precision

    precision._warn_slow_bf16.cache_clear()
    caplog.set_level(logging.WARNING, logger="bodega.precision")
    for _ in range(10):
        precision.resolve_precision("bf16", flags=NO_AMX, gpu_bf16=False)
    assert len(caplog.records) == 1
