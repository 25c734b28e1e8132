"""A victim the package did not train is cached under what it runs, never under the name it is given."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from bodega.cli import main
from bodega.data import Example, write_tsv
from bodega.errors import BodegaError
from bodega.victims.external import open_victim

PLUGIN = textwrap.dedent('''
    import numpy as np

    class Constant:
        def predict_proba(self, texts):
            return np.tile([[{credible}, {non_credible}]], (len(texts), 1))

    def build():
        return Constant()
''')


def _plugin_folder(root: Path, name: str, non_credible: float) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "victim.py").write_text(PLUGIN.format(credible=1 - non_credible, non_credible=non_credible))
    write_tsv(folder / "attack.tsv", [Example(1, f"id-{i}", f"an evil plan number {i} to deceive") for i in range(3)])
    return folder


def test_two_plugin_files_of_one_spec_never_share_cached_predictions(tmp_path, monkeypatch, capsys):
    one = _plugin_folder(tmp_path, "one", 0.9)
    other = _plugin_folder(tmp_path, "other", 0.1)
    monkeypatch.chdir(one)
    first = open_victim("py:victim.py:build", "PR2", version="1").weights_hash
    summaries = []
    for folder in (one, other):
        monkeypatch.chdir(folder)
        assert main(["attack", "--task", "PR2", "--victim", "py:victim.py:build", "--victim-version", "1",
                     "--data", ".", "--attacker", "DeepWordBug", "--n", "3", "--profile", "smoke",
                     "--out", "out"]) == 0
        summaries.append(json.loads((folder / "out" / "summary.json").read_text()))
    assert first and open_victim("py:victim.py:build", "PR2", version="1").weights_hash != first
    assert summaries[1]["forwards"] > 0  # the second model was asked, not answered with the first's output


def test_two_functions_of_one_name_and_version_never_share_an_identity():
    import bodega

    always_fake = bodega.wrap(lambda texts: [[0.1, 0.9]] * len(texts), "PR2", version="1")
    always_real = bodega.wrap(lambda texts: [[0.9, 0.1]] * len(texts), "PR2", version="1")
    assert always_fake.weights_hash and always_real.weights_hash
    assert always_fake.weights_hash != always_real.weights_hash
    assert bodega.wrap(lambda texts: [[0.1, 0.9]] * len(texts), "PR2", version="1").weights_hash \
        != always_fake.weights_hash  # another line of source: another function


def _closure(value):
    return lambda texts: [[1 - value, value]] * len(texts)


def test_closures_are_told_apart_by_the_values_they_capture():
    import bodega

    assert bodega.wrap(_closure(0.9), "PR2", version="1").weights_hash \
        != bodega.wrap(_closure(0.1), "PR2", version="1").weights_hash
    assert bodega.wrap(_closure(0.9), "PR2", version="1").weights_hash \
        == bodega.wrap(_closure(0.9), "PR2", version="1").weights_hash


def test_a_function_whose_source_cannot_be_read_is_not_cached(tmp_path):
    import bodega
    from bodega.victims.accounting import QueryAccountant
    from bodega.victims.cache import ProbabilityCache

    namespace: dict = {}
    exec("def made_up(texts):\n    return [[0.5, 0.5]] * len(texts)\n", namespace)  # noqa: S102 - no source file
    victim = bodega.wrap(namespace["made_up"], "PR2", version="1")
    assert victim.weights_hash == ""
    with pytest.raises(BodegaError, match="no identity"):
        QueryAccountant(victim, cache=ProbabilityCache(tmp_path / "cache.sqlite"))
    assert np.allclose(victim.predict_proba(["a"]), [[0.5, 0.5]])


def test_functions_of_one_source_reading_other_global_values_are_told_apart():
    """Two scripts with the same function but another module-level value it reads are two models."""
    import bodega

    hashes = [bodega.wrap(_reads_global(value), "PR2", version="1").weights_hash for value in (0.9, 0.1, 0.9)]
    assert hashes[0] != hashes[1] and hashes[0] == hashes[2] and "" not in hashes


PROBABILITY = 0.5


def _reads_global(value: float):
    global PROBABILITY
    PROBABILITY = value
    return _predict_from_global


def _predict_from_global(texts):
    return [[1 - PROBABILITY, PROBABILITY]] * len(texts)


def _load_as(path: Path, name: str):
    """Import ``path`` as module ``name`` (as two runs of two scripts both see ``__main__``), replacing any
    module of that name loaded before."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _two_scripts(tmp_path: Path, template: str, values: tuple[str, str], name: str) -> list[str]:
    """The wrapped victims' identities of one script written with each of two values, loaded in turn under one
    module name."""
    import bodega

    hashes = []
    for n, value in enumerate(values):
        path = tmp_path / f"run{n}" / f"{name}.py"
        path.parent.mkdir()
        path.write_text(textwrap.dedent(template).replace("VALUE", value))
        module = _load_as(path, name)
        hashes.append(bodega.wrap(module.victim(), "PR2", version="1").weights_hash)
    return hashes


def test_a_class_calling_a_module_level_helper_is_told_apart_by_the_helper(tmp_path):
    hashes = _two_scripts(tmp_path, '''
        def helper(n):
            return [[1 - VALUE, VALUE]] * n

        class Model:
            def predict_proba(self, texts):
                return helper(len(texts))

        def victim():
            return Model()
        ''', ("0.9", "0.1"), "probe_helper")
    assert "" not in hashes and hashes[0] != hashes[1]


def test_a_partial_is_told_apart_by_the_function_it_wraps(tmp_path):
    hashes = _two_scripts(tmp_path, '''
        import functools

        def scored(scale, texts):
            return [[1 - VALUE * scale, VALUE * scale]] * len(texts)

        def victim():
            return functools.partial(scored, 1.0)
        ''', ("0.9", "0.1"), "probe_partial")
    assert "" not in hashes and hashes[0] != hashes[1]


def test_a_function_is_told_apart_by_a_module_attribute_it_reads(tmp_path):
    import bodega

    (tmp_path / "probe_settings.py").write_text("SCALE = 0.5\n")
    predictor = tmp_path / "probe_reader.py"
    predictor.write_text(textwrap.dedent('''
        import probe_settings

        def predict(texts):
            return [[1 - probe_settings.SCALE, probe_settings.SCALE]] * len(texts)
        '''))
    settings = _load_as(tmp_path / "probe_settings.py", "probe_settings")
    reader = _load_as(predictor, "probe_reader")
    hashes = []
    for value in (0.9, 0.1, 0.9):
        settings.SCALE = value  # set at run time, as a script or a notebook does
        hashes.append(bodega.wrap(reader.predict, "PR2", version="1").weights_hash)
    assert "" not in hashes and hashes[0] != hashes[1] and hashes[0] == hashes[2]


WEIGHTS_PLUGIN = textwrap.dedent('''
    import json
    from pathlib import Path

    import numpy as np

    class Loaded:
        def __init__(self, weights):
            self.weights = weights

        def predict_proba(self, texts):
            return np.tile([[1 - self.weights["p"], self.weights["p"]]], (len(texts), 1))

    def build():
        return Loaded(json.loads((Path(__file__).parent / "weights.json").read_text()))
''')


def test_a_byte_identical_plugin_loading_other_weights_is_another_model(tmp_path, monkeypatch):
    summaries, hashes = [], []
    for name, p in (("one", 0.9), ("other", 0.1)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "victim.py").write_text(WEIGHTS_PLUGIN)
        (folder / "weights.json").write_text(json.dumps({"p": p}))
        write_tsv(folder / "attack.tsv", [Example(1, f"id-{i}", f"an evil plan number {i} to deceive")
                                          for i in range(3)])
        monkeypatch.chdir(folder)
        hashes.append(open_victim("py:victim.py:build", "PR2", version="1").weights_hash)
        assert main(["attack", "--task", "PR2", "--victim", "py:victim.py:build", "--victim-version", "1",
                     "--data", ".", "--attacker", "DeepWordBug", "--n", "3", "--profile", "smoke",
                     "--out", "out"]) == 0
        summaries.append(json.loads((folder / "out" / "summary.json").read_text()))
    assert "" not in hashes and hashes[0] != hashes[1]
    assert summaries[1]["forwards"] > 0  # the second model was asked, not answered from the first's cache


def test_the_default_prediction_cache_is_the_projects_not_the_users(tmp_path, monkeypatch):
    from bodega.victims.cache import default_cache_path

    monkeypatch.delenv("BODEGA_PREDICTION_CACHE")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    paths = []
    for project in ("one", "two"):
        (tmp_path / project / "notebooks").mkdir(parents=True)
        monkeypatch.chdir(tmp_path / project)
        paths.append(default_cache_path())
    assert paths == [tmp_path / "one" / ".bodega-cache" / "predictions.sqlite",
                     tmp_path / "two" / ".bodega-cache" / "predictions.sqlite"]
    checkout = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(checkout / "notebooks")  # a notebook of a checkout uses the checkout's
    assert default_cache_path() == checkout / ".bodega-cache" / "predictions.sqlite"


CLASS_WEIGHTS_PLUGIN = textwrap.dedent('''
    import json
    from pathlib import Path

    class Shared:
        weights = None

        def predict_proba(self, texts):
            return [[1 - Shared.weights["p"], Shared.weights["p"]]] * len(texts)

    def build():
        Shared.weights = json.loads((Path(__file__).parent / "weights.json").read_text())
        return Shared()
''')


def test_weights_a_factory_reads_into_its_class_make_another_model(tmp_path, monkeypatch):
    hashes = []
    for name, p in (("one", 0.9), ("other", 0.1)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "victim.py").write_text(CLASS_WEIGHTS_PLUGIN)
        (folder / "weights.json").write_text(json.dumps({"p": p}))
        monkeypatch.chdir(folder)
        hashes.append(open_victim("py:victim.py:build", "PR2", version="1").weights_hash)
    assert "" not in hashes and hashes[0] != hashes[1]


def test_the_files_a_factory_reads_are_part_of_its_identity(tmp_path):
    from bodega.identity import files_read, read_files_identity

    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"one")
    with files_read() as read:
        weights.read_bytes()
        (tmp_path / "log.txt").write_text("written, not read")
    assert str(weights) in read and str(tmp_path / "log.txt") not in read
    before = read_files_identity(read)
    weights.write_bytes(b"two")
    assert read_files_identity(read) != before
    with files_read() as outside:
        pass
    weights.read_bytes()  # outside the block: not recorded
    assert outside == []


def test_a_plugin_loaded_twice_in_one_process_keeps_its_identity(tmp_path, monkeypatch):
    """The first load imports the plug-in's module (reading its source) and the second does not: the identity must
    not depend on which load it is, or a run cannot resume."""
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "victim.py").write_text(WEIGHTS_PLUGIN)
    (folder / "weights.json").write_text(json.dumps({"p": 0.7}))
    monkeypatch.chdir(folder)
    first = open_victim("py:victim.py:build", "PR2", version="1").weights_hash
    assert first and open_victim("py:victim.py:build", "PR2", version="1").weights_hash == first
