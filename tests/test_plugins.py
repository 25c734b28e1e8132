"""One loader for ``py:`` plug-ins: modules and files, for victims and attackers alike, without touching sys.path."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from bodega.attacks import get_attacker
from bodega.attacks.result import AttackResult
from bodega.errors import BodegaError
from bodega.plugins import PREFIX, PluginError, build_plugin, is_plugin, load_factory
from bodega.victims.external import open_victim

PLUGIN = '''
from dataclasses import dataclass

import numpy as np


@dataclass
class Fixed:
    """A victim that calls every text non-credible; a dataclass, which needs its module registered."""
    version: str = "v1"

    def predict_proba(self, texts):
        return np.tile([0.2, 0.8], (len(texts), 1))


def victim():
    return Fixed()


class Keeper:
    name = "keeper"

    def attack(self, victim, text, goal, rng=None, **options):
        from bodega.attacks.result import AttackResult

        return AttackResult(None, False)


def attacker(**options):
    return Keeper()
'''


@pytest.fixture()
def plugin_file(tmp_path, monkeypatch):
    path = tmp_path / "plugs" / "mine.py"
    path.parent.mkdir()
    path.write_text(PLUGIN)
    monkeypatch.chdir(tmp_path)
    return path


def test_a_file_plugin_loads_for_victims_and_attackers_without_changing_sys_path(plugin_file):
    before = list(sys.path)
    victim = open_victim("py:plugs/mine.py:victim", "PR2")
    assert victim.predict_proba(["a", "b"]).tolist() == [[0.2, 0.8], [0.2, 0.8]] and victim.version == "v1"
    attacker = get_attacker("py:plugs/mine.py:attacker")  # attack(..., rng=None, **options) fits the protocol
    assert isinstance(attacker.attack(None, "text", None, np.random.default_rng(0)), AttackResult)
    assert sys.path == before and "mine" not in sys.modules
    # the same file by an absolute path is the same module, loaded once
    assert load_factory(f"py:{plugin_file}:victim") is load_factory("py:plugs/mine.py:victim")


def test_a_module_is_not_found_in_the_current_folder_unless_it_is_on_the_path(plugin_file, monkeypatch):
    monkeypatch.chdir(plugin_file.parent)
    with pytest.raises(PluginError, match="cannot import 'mine'.*PYTHONPATH.*py:path/to/file.py:factory"):
        open_victim("py:mine:victim", "PR2")
    monkeypatch.syspath_prepend(str(plugin_file.parent))
    try:
        assert open_victim("py:mine:victim", "PR2").predict_proba(["x"]).shape == (1, 2)
    finally:
        sys.modules.pop("mine", None)


@pytest.mark.parametrize("spec, message", [
    ("py:plugs/mine.py", "expected py:module:factory"),
    ("py:plugs/none.py:victim", "no file plugs/none.py"),
    ("py:plugs/mine.py:missing", "no callable 'missing'"),
])
def test_bad_specs_raise_the_one_error_type(plugin_file, spec, message):
    with pytest.raises(PluginError, match=message) as raised:
        load_factory(spec, "victim")
    assert isinstance(raised.value, BodegaError) and str(raised.value).startswith(f"victim {spec!r}")


def test_the_product_is_checked_by_protocol(plugin_file):
    with pytest.raises(PluginError, match="returned Keeper, which has no predict_proba method"):
        open_victim("py:plugs/mine.py:attacker", "PR2")
    with pytest.raises(PluginError, match="returned Fixed, which has no attack method"):
        get_attacker("py:plugs/mine.py:victim")
    assert build_plugin("py:plugs/mine.py:victim", "victim", "predict_proba", "predict_proba(texts)").version == "v1"


def test_the_prefix_is_defined_once():
    assert PREFIX == "py:" and is_plugin("py:a:b") and not is_plugin("hf:a") and not is_plugin(3)
