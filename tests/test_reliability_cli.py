"""The command line as a user drives it: one line and exit 2 for every mistake, nothing from the current folder."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bodega.cli import main
from bodega.data import Example, write_tsv

ROOT = Path(__file__).resolve().parents[1]


def _python_m_bodega(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "bodega", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_python_m_bodega_imports_nothing_from_the_current_folder(tmp_path):
    marker = tmp_path / "ran"
    (tmp_path / "yaml.py").write_text(f"open({str(marker)!r}, 'w').write('yaml')\n")
    (tmp_path / "cwdmod.py").write_text(f"open({str(marker)!r}, 'w').write('cwdmod')\ndef build(): pass\n")
    fetched = _python_m_bodega(tmp_path, "data", "fetch", "--task", "PR2", "--from", "nowhere", "--raw-root", "r")
    assert fetched.returncode == 2 and not marker.exists(), fetched.stderr
    write_tsv(tmp_path / "attack.tsv", [Example(1, "a", "an evil plan")])
    attacked = _python_m_bodega(tmp_path, "attack", "--task", "PR2", "--victim", "py:cwdmod:build", "--data", ".",
                                "--attacker", "DeepWordBug", "--out", "out")
    assert attacked.returncode == 2 and "cannot import 'cwdmod'" in attacked.stderr and not marker.exists()
    assert attacked.stderr.strip().count("\n") == 0, attacked.stderr


PLUGINS = {
    "syntax": ("def build(:\n", "syntax error at"),
    "import": ("import a_module_nobody_has_installed\ndef build(): pass\n", "a_module_nobody_has_installed"),
    "exits": ("import sys\nsys.exit(3)\n", "called sys.exit(3)"),
    "raises": ("def build():\n    raise RuntimeError('no model here')\n", "RuntimeError: no model here"),
    "class": ("class Model:\n    def predict_proba(self, texts): pass\ndef build():\n    return Model\n",
              "returned the class Model, not an object"),
}


@pytest.mark.parametrize("kind", sorted(PLUGINS))
def test_a_broken_plugin_is_one_line_and_exit_2_and_v_adds_the_traceback(tmp_path, monkeypatch, capsys, kind):
    source, message = PLUGINS[kind]
    (tmp_path / f"{kind}.py").write_text(source)
    write_tsv(tmp_path / "attack.tsv", [Example(1, "a", "an evil plan")])
    monkeypatch.chdir(tmp_path)
    args = ["attack", "--task", "PR2", "--victim", f"py:{kind}.py:build", "--data", ".", "--attacker",
            "DeepWordBug", "--out", "out"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and f"py:{kind}.py:build" in err and err.count("\n") == 1, err
    assert main(["-v", *args]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_a_folder_asking_for_its_own_code_is_refused_in_one_line(tmp_path, capsys):
    folder = tmp_path / "custom"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "auto_map": {
        "AutoModelForSequenceClassification": "modeling_evil.EvilModel"}}))
    (folder / "model.safetensors").write_bytes(b"")
    (folder / "modeling_evil.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w')\n")
    write_tsv(tmp_path / "attack.tsv", [Example(1, "a", "an evil plan")])
    assert main(["attack", "--task", "PR2", "--victim", f"hf:{folder}", "--data", str(tmp_path), "--attacker",
                 "DeepWordBug", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "names custom code (auto_map)" in err and str(folder) in err and err.count("\n") == 1
    assert not (tmp_path / "ran").exists()


def test_every_transformers_auto_load_passes_trust_remote_code_false():
    """An Auto class is what loads a folder's own code; each call in the package says it never may."""
    missing = []
    for path in sorted((ROOT / "lib" / "bodega").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "from_pretrained" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id.startswith("Auto"):
                passed = {k.arg: k.value for k in node.keywords}
                if not (isinstance(passed.get("trust_remote_code"), ast.Constant)
                        and passed["trust_remote_code"].value is False):
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert missing == []


def test_a_damaged_prediction_cache_names_the_file_and_the_way_out(tmp_path, capsys, keyword_attack_set):
    cache = tmp_path / "cache.sqlite"
    cache.write_bytes(b"this is not an SQLite database" * 100)
    data = keyword_attack_set()
    assert main(["attack", "--task", "PR2", "--victim", "py:attack_fakes:KeywordVictim", "--victim-version", "1",
                 "--data", str(data), "--attacker", "DeepWordBug", "--n", "1", "--out", str(tmp_path / "out"),
                 "--cache", str(cache)]) == 2
    err = capsys.readouterr().err
    assert str(cache) in err and "--cache off" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("command", [
    ["score", "--task", "PR2", "--semantic", "character", "--input", "{file}", "--out", "{file}/o.jsonl"],
    ["data", "prepare", "--task", "PR2", "--raw", "{tmp}", "--out", "{file}/x", "--skip-hash-check"],
])
def test_a_path_that_cannot_be_used_is_one_line(tmp_path, capsys, command):
    file = tmp_path / "adv.tsv"
    file.write_text("succeeded\tnum_queries\toriginal_text\tmodified_text\n1\t3\ta b\ta c\n")
    (tmp_path / "train-task1-SI.labels").write_text("")
    (tmp_path / "train-articles").mkdir()
    code = main([part.format(file=file, tmp=tmp_path) for part in command])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and err.count("\n") == 1, err
    assert str(file) in err
