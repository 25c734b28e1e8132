"""The thread policy: what it decides, and that every entry point applies it before torch loads.

Entry points are checked in fresh processes, since OpenMP reads its settings only when torch
is first imported: the child reports the variables its command sees, that torch is not loaded
yet, and (where asked) ``torch.get_num_threads()`` once it is.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from bodega.errors import BodegaError
from bodega.experiments import parse_grid
from bodega.experiments.cells import victim_cells
from bodega.experiments.execute import run_cell
from bodega.experiments.hashing import HashCache
from bodega.threads import default_threads, resolve_policy, thread_environment

LIB = str(Path(__file__).resolve().parents[1] / "lib")
RUNTIME = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY")

# Replaces a command's function by one that reports what the command would run under.
REPORTER = """
import json, os, sys
import bodega.commands.{module} as command
def report(args):
    seen = {{"torch_before": "torch" in sys.modules, "env": {{k: os.environ.get(k) for k in {runtime!r}}}}}
    if {with_torch!r}:
        import torch
        seen["threads"] = torch.get_num_threads()
    print(json.dumps(seen))
    return 0
command.{function} = report
from bodega.cli import main
sys.exit(main({argv!r}))
"""


def _clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in RUNTIME}
    return {**env, "PYTHONPATH": LIB, **extra}


def _run_cli(module: str, function: str, argv: list[str], with_torch: bool = False, **env: str) -> dict:
    code = REPORTER.format(module=module, function=function, argv=argv, runtime=RUNTIME, with_torch=with_torch)
    out = subprocess.run([sys.executable, "-c", code], env=_clean_env(**env), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


TRAIN = ["train", "--task", "PR2", "--victim", "BiLSTM", "--data", "d", "--out", "o"]
ATTACK = ["attack", "--task", "PR2", "--victim", "v", "--data", "d", "--attacker", "PWWS", "--out", "o"]
SCORE = ["score", "--task", "PR2", "--input", "i", "--out", "o"]


def test_the_policy_sets_counts_and_a_passive_wait():
    env = resolve_policy(3, {}).environment()
    assert env == {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "3", "OPENBLAS_NUM_THREADS": "3",
                   "OMP_WAIT_POLICY": "PASSIVE"}
    assert resolve_policy(None, {}).threads == default_threads() >= 1


def test_an_exported_count_is_kept_unless_threads_are_given():
    exported = {"OMP_NUM_THREADS": "4"}
    assert resolve_policy(None, exported).threads == 4
    assert resolve_policy(2, exported).threads == 2
    assert resolve_policy(None, {"OMP_NUM_THREADS": "many"}).threads == default_threads()


def test_a_non_positive_count_is_refused_with_the_option_named():
    with pytest.raises(BodegaError, match="--threads 0"):
        resolve_policy(0, {})


def test_child_environment_keeps_the_rest_of_the_base():
    env = thread_environment(2, {"PATH": "/bin", "OMP_NUM_THREADS": "8"})
    assert env["PATH"] == "/bin" and env["OMP_NUM_THREADS"] == "2" and env["OMP_WAIT_POLICY"] == "PASSIVE"


def test_a_policy_applied_after_torch_still_sets_the_count_and_warns():
    code = ("import logging, os, torch; logging.basicConfig(); from bodega.threads import apply_thread_policy; "
            "apply_thread_policy(1); print(torch.get_num_threads(), os.environ['OMP_WAIT_POLICY'])")
    out = subprocess.run([sys.executable, "-c", code], env=_clean_env(), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "PASSIVE"]
    assert "torch was imported before the thread policy" in out.stderr


def test_building_the_command_line_does_not_import_torch():
    code = "import sys; from bodega.cli import build_parser; build_parser(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], env=_clean_env(), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("module,function,argv", [("train", "_train", TRAIN), ("attack", "_attack", ATTACK),
                                                  ("score", "_score", SCORE)])
def test_commands_run_under_the_default_policy(module, function, argv):
    seen = _run_cli(module, function, argv)
    assert not seen["torch_before"]
    assert seen["env"] == {"OMP_NUM_THREADS": str(default_threads()), "MKL_NUM_THREADS": str(default_threads()),
                           "OPENBLAS_NUM_THREADS": str(default_threads()), "OMP_WAIT_POLICY": "PASSIVE"}


def test_threads_option_overrides_the_exported_count_and_reaches_torch():
    seen = _run_cli("train", "_train", TRAIN + ["--threads", "1"], with_torch=True, OMP_NUM_THREADS="2")
    assert not seen["torch_before"] and seen["threads"] == 1
    assert seen["env"]["OMP_NUM_THREADS"] == "1" and seen["env"]["OMP_WAIT_POLICY"] == "PASSIVE"


def test_an_exported_count_is_honoured_by_a_command_without_threads():
    seen = _run_cli("attack", "_attack", ATTACK, OMP_NUM_THREADS="1")
    assert seen["env"]["OMP_NUM_THREADS"] == "1" and seen["env"]["OMP_WAIT_POLICY"] == "PASSIVE"


REPORT_NOTEBOOK = """import json, os, pathlib, torch
out = pathlib.Path(results_root) / "models" / f"{task}-{victim}"; out.mkdir(parents=True, exist_ok=True)
for name in ("weights.bin", "victim.json", "metrics.json"):
    (out / name).write_text("{}")
(out / "seen.json").write_text(json.dumps({"threads": torch.get_num_threads(),
                                           "wait": os.environ.get("OMP_WAIT_POLICY")}))"""
PARAMS = 'task = "PR2"\nvictim = "BiLSTM"\ndata_root = ""\nresults_root = ""\nprofile = "smoke"\n' \
         'max_train = 0\nepochs = None\nseed = 0'


def test_grid_cells_run_their_notebook_under_the_policy(tmp_path):
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell(PARAMS)
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell(REPORT_NOTEBOOK)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(tmp_path / "victim.ipynb"))
    (tmp_path / "data" / "PR2").mkdir(parents=True)
    for split in ("train", "attack", "dev"):
        (tmp_path / "data" / "PR2" / f"{split}.tsv").write_text(f"1\tid-{split}\tsome text\n")
    spec = parse_grid({"name": "t", "profile": "smoke", "tasks": ["PR2"], "victims": ["BiLSTM"],
                       "attackers": ["DeepWordBug"], "scenarios": ["untargeted"], "examples": 1,
                       "threads_per_cell": 1, "results": str(tmp_path / "results"),
                       "data_root": str(tmp_path / "data"), "generated": str(tmp_path / "generated"),
                       "notebooks": {"victim": str(tmp_path / "victim.ipynb"), "attack": "absent",
                                     "data": "absent"}}, "test-grid")
    cell = victim_cells(spec, HashCache())[0]
    assert run_cell(cell).status == "done"
    seen = json.loads((Path(cell.out_dir) / "seen.json").read_text())
    assert seen == {"threads": 1, "wait": "PASSIVE"}
