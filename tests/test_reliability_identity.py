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
