"""Clear errors: one line naming the file or the victim, exit 2, for a full disk and a classifier's wrong answers."""
from __future__ import annotations

import errno

import pytest

from bodega.cli import main
from bodega.errors import BodegaError

HEADER = "succeeded\tnum_queries\toriginal_text\tmodified_text\n"


def test_a_full_disk_is_one_line_naming_the_file(tmp_path, monkeypatch, capsys):
    """A write to an open file that fails (ENOSPC) names no file: the command ended in a traceback."""
    import bodega.io

    source = tmp_path / "adv.tsv"
    source.write_text(HEADER + "1\t3\tThe council met.\tThe counsel met.\n", encoding="utf-8")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(bodega.io.os, "fsync", full)
    out = tmp_path / "scores.jsonl"
    code = main(["score", "--task", "PR2", "--semantic", "character", "--input", str(source), "--out", str(out)])
    error = capsys.readouterr().err
    assert code == 2 and error.count("\n") == 1
    assert "No space left on device" in error and "scores.jsonl" in error and "Traceback" not in error


def test_a_classifier_returning_strings_is_one_error_naming_the_victim():
    import bodega

    def returns_words(texts):
        return [["credible", "fake"]] * len(texts)

    victim = bodega.wrap(returns_words, "PR2")
    with pytest.raises(BodegaError, match=r"returns_words: predict_proba returned list that is not numbers"):
        victim.predict_proba(["a text"])
    with pytest.raises(BodegaError, match="returns_words"):
        bodega.attack(returns_words, ["an evil plan"], [1], task="PR2", attacker="DeepWordBug")


def test_loading_a_committed_victim_prints_no_warning_that_does_not_concern_the_user():
    """Attacking a committed BERT-role victim printed "Some weights of MPNetForSequenceClassification were not
    initialized ... You should probably TRAIN this model" (the adapter's saved head replaces them next) and
    bitsandbytes' note about an optional kernels package."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    victim = root / "results" / "study-v3" / "models" / "PR2-BERT"
    code = ("import logging; logging.basicConfig(level=logging.INFO)\n"
            "from bodega.victims.modeldir import load_victim\n"
            f"print(load_victim({str(victim)!r}).name)")
    env = {**os.environ, "PYTHONPATH": str(root / "lib"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "PR2-BERT" in result.stdout
    assert "TRAIN this model" not in result.stderr and "newly initialized" not in result.stderr
    assert "kernels-community" not in result.stderr

