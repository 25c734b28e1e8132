"""Reliability of `bodega attack`: no false successes, no mixed inputs, no blocked reruns, the cache."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from attack_fakes import SENTENCES, KeywordVictim
from bodega.errors import BodegaError
from bodega.attacks import run_attack
from bodega.attacks.runner import AttackOptions
from bodega.cli import main
from bodega.data import Example, write_tsv
from bodega.io import read_jsonl
from bodega.victims.accounting import InvalidPredictions, QueryAccountant
from bodega.victims.cache import ProbabilityCache


class OnesSemantic:
    name = "ones"

    def score(self, pairs):
        return np.ones(len(pairs))


def _data(folder: Path, sentences=SENTENCES) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    victim = KeywordVictim()
    write_tsv(folder / "attack.tsv", [Example(int(victim.predict([s])[0]), f"doc-{i}", s)
                                      for i, s in enumerate(sentences)])
    return folder


def _run(victim, data, out, **options):
    return run_attack("PR2", victim, data, "DeepWordBug", out, semantic=OnesSemantic(), progress=False, **options)


class BrokenOnChanges(KeywordVictim):
    """Answers its attack set's texts, and ``bad`` for every other text (what damaged weights give on some words)."""

    name = "broken"

    def __init__(self, bad):
        super().__init__()
        self.bad, self.known = np.asarray(bad, dtype=float), set(SENTENCES)

    def predict_proba(self, texts):
        probs = super().predict_proba(texts)
        probs[[t not in self.known for t in texts]] = self.bad
        return probs


@pytest.mark.parametrize("bad", [[np.nan, np.nan], [-5.0, 7.0], [0.7, 0.7], [np.inf, 0.0]])
def test_invalid_outputs_are_errors_naming_the_victim_never_successes(tmp_path, bad):
    summary = _run(BrokenOnChanges(bad), _data(tmp_path / "data"), tmp_path / "run").run
    records = list(read_jsonl(tmp_path / "run" / "records.jsonl"))
    assert summary.scores.success_score == 0.0 and summary.bodega_score == 0.0
    assert summary.errors == len(records) == len(SENTENCES)
    assert all("victim broken returned" in r["error"] for r in records)


def test_a_victim_with_invalid_outputs_on_its_attack_set_is_refused_at_load(tmp_path):
    class AllNaN(KeywordVictim):
        name = "all-nan"

        def predict_proba(self, texts):
            return np.full((len(texts), 2), np.nan)

    with pytest.raises(BodegaError, match="victim all-nan returned .*refusing to attack"):
        _run(AllNaN(), _data(tmp_path / "data"), tmp_path / "run")
    assert not (tmp_path / "run" / "run.json").exists() and not (tmp_path / "run" / "records.jsonl").exists()


def test_a_victim_raising_on_its_attack_set_is_one_line_naming_it_at_load(tmp_path, capsys):
    """A py: victim whose predict_proba raised (CUDA out of memory, a bug) ended `bodega attack` in a traceback."""
    class Raising(KeywordVictim):
        name = "raising"

        def predict_proba(self, texts):
            raise RuntimeError("CUDA out of memory")

    with pytest.raises(BodegaError, match=r"victim raising raised RuntimeError on the first rows .*CUDA out of memory"):
        _run(Raising(), _data(tmp_path / "data"), tmp_path / "run")
    assert not (tmp_path / "run" / "run.json").exists()
    plugin = tmp_path / "raising.py"
    plugin.write_text("class V:\n    version = 'v1'\n\n    def predict_proba(self, texts):\n"
                      "        raise RuntimeError('CUDA out of memory')\n\n\ndef build(**options):\n    return V()\n")
    code = main(["attack", "--task", "PR2", "--victim", f"py:{plugin}:build", "--data", str(tmp_path / "data"),
                 "--attacker", "DeepWordBug", "--out", str(tmp_path / "cli"), "--n", "1", "--cache", "off"])
    err = capsys.readouterr().err
    assert code == 2 and "raised RuntimeError on the first rows" in err and "Traceback" not in err


def test_the_accountant_checks_rows_and_caches_no_invalid_one(tmp_path):
    cache = ProbabilityCache(tmp_path / "c.sqlite")
    accountant = QueryAccountant(BrokenOnChanges([np.nan, np.nan]), cache=cache)
    with pytest.raises(InvalidPredictions, match="broken"):
        accountant.predict_proba(["a changed text"])
    assert len(cache) == 0


def test_resuming_with_another_data_folder_is_refused(tmp_path):
    out = tmp_path / "run"
    _run(KeywordVictim(), _data(tmp_path / "a"), out, n_examples=3)
    other = _data(tmp_path / "b", [s.upper() for s in SENTENCES])
    before = (out / "records.jsonl").read_text()
    with pytest.raises(BodegaError, match="another attack.tsv .*mix records of two data sets"):
        _run(KeywordVictim(), other, out, n_examples=3)
    assert (out / "records.jsonl").read_text() == before
    assert json.loads((out / "run.json").read_text())["data"]["attack_sha256"]


def test_resumed_records_must_match_their_rows_by_id_and_text(tmp_path):
    """Even without run.json (an older run, or one deleted) records of other data are never appended to."""
    out = tmp_path / "run"
    _run(KeywordVictim(), _data(tmp_path / "a"), out, n_examples=3)
    (out / "run.json").unlink()
    with pytest.raises(BodegaError, match=r"records.jsonl:1: the record of example \d+ .* does not match attack.tsv"):
        _run(KeywordVictim(), _data(tmp_path / "b", [s + " Really." for s in SENTENCES]), out, n_examples=6)


def test_the_run_records_the_task_and_refuses_a_victim_of_another(tmp_path):
    data = _data(tmp_path / "data")
    with pytest.raises(BodegaError, match="trained for PR2, not --task FC.*--allow-other-task"):
        run_attack("FC", KeywordVictim(), data, "DeepWordBug", tmp_path / "run", semantic=OnesSemantic(),
                   progress=False)
    assert not (tmp_path / "run" / "run.json").exists()
    summary = run_attack("HN", KeywordVictim(), data, "DeepWordBug", tmp_path / "run", semantic=OnesSemantic(),
                         progress=False, allow_other_task=True, n_examples=2).run
    config = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (config["task"], config["victim_task"]) == ("HN", "PR2") == (summary.config.task, summary.config.victim_task)


VICTIM_MODULE = '''
import os

import numpy as np


class Victim:
    version = "v1"

    def __init__(self, task):
        self.task = task

    def predict_proba(self, texts):
        # counted in a file, not a module-level list: a value its code reads is part of the victim's identity
        with open(os.environ["REL_FORWARDS"], "a", encoding="utf-8") as log:
            log.write("".join(t.replace("\\n", " ") + "\\n" for t in texts))
        p1 = np.array([min(0.9, 0.2 + 0.1 * t.lower().count("e")) for t in texts])
        return np.stack([1 - p1, p1], axis=1)


def pr2():
    return Victim("PR2")
'''


def _forwards() -> int:
    """How many texts the module victim has computed."""
    import os

    path = Path(os.environ["REL_FORWARDS"])
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@pytest.fixture()
def py_victim(tmp_path, monkeypatch):
    monkeypatch.setenv("REL_FORWARDS", str(tmp_path / "forwards.txt"))
    (tmp_path / "rel_victim_mod.py").write_text(textwrap.dedent(VICTIM_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    import rel_victim_mod

    importlib.reload(rel_victim_mod)
    yield rel_victim_mod
    import sys

    sys.modules.pop("rel_victim_mod", None)


def _attack_cli(data: Path, out: Path, *extra: str) -> int:
    return main(["attack", "--task", "PR2", "--victim", "py:rel_victim_mod:pr2", "--data", str(data),
                 "--attacker", "DeepWordBug", "--out", str(out), "--profile", "smoke", *extra])


@pytest.fixture()
def ones_scoring(monkeypatch):
    """The command scores with the profile's semantic model; these tests need only the records."""
    import bodega.attacks.runner as runner

    original = runner.score_run
    monkeypatch.setattr(runner, "score_run",
                        lambda task, records, profile, semantic=None: original(task, records, profile, OnesSemantic()))


def test_bodega_attack_rerun_into_a_new_folder_computes_no_forward(tmp_path, py_victim, ones_scoring):
    import os

    data = _data(tmp_path / "data")
    assert _attack_cli(data, tmp_path / "first") == 0
    computed = _forwards()
    assert computed > 0 and Path(os.environ["BODEGA_PREDICTION_CACHE"]).is_file()
    first = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert first["prediction_cache"] and first["forwards"] > 0
    assert _attack_cli(data, tmp_path / "second") == 0
    assert _forwards() == computed  # not one text computed again
    second = json.loads((tmp_path / "second" / "summary.json").read_text())
    assert second["forwards"] == 0 and second["cache_hits"] > 0
    strip = ("forwards", "cache_hits", "seconds", "cpu_seconds")
    assert [{k: v for k, v in r.items() if k not in strip} for r in read_jsonl(tmp_path / "first" / "records.jsonl")] \
        == [{k: v for k, v in r.items() if k not in strip} for r in read_jsonl(tmp_path / "second" / "records.jsonl")]
    assert _attack_cli(data, tmp_path / "third", "--cache", "off") == 0
    assert _forwards() > computed  # the cache can be turned off


def test_the_python_entry_point_uses_the_persistent_cache(tmp_path):
    data = _data(tmp_path / "data")
    _run(KeywordVictim(), data, tmp_path / "a", targeted=True)
    again = KeywordVictim()
    summary = _run(again, data, tmp_path / "b", targeted=True).run
    assert again.calls == 0 and summary.cache_hits > 0 and summary.forwards == 0


def test_the_cache_is_keyed_by_precision(tmp_path):
    cache = ProbabilityCache(tmp_path / "c.sqlite")
    QueryAccountant(KeywordVictim(), cache=cache).predict_proba(["The evil enemy."])
    half = KeywordVictim()
    half.precision = "bf16"
    accountant = QueryAccountant(half, cache=cache)
    accountant.predict_proba(["The evil enemy."])
    assert half.calls == 1 and accountant.cache_hits == 0
    same = KeywordVictim()
    accountant = QueryAccountant(same, cache=cache)
    accountant.predict_proba(["The evil enemy."])
    assert same.calls == 0 and accountant.counts()["cache_hits"] == 1


@pytest.mark.parametrize("n", ["0", "-1"])
def test_n_below_one_is_refused_by_the_command(tmp_path, py_victim, n, capsys):
    with pytest.raises(SystemExit):
        _attack_cli(_data(tmp_path / "data"), tmp_path / "run", "--n", n)
    assert "--n: must be >= 1" in capsys.readouterr().err and not (tmp_path / "run").exists()
    with pytest.raises(BodegaError, match=r"n_examples \(--n\) must be an integer >= 1"):
        AttackOptions(n_examples=int(n))


@pytest.mark.parametrize("bad", [["--budget", "-3"], ["--seed", "-1"], ["--option", "no_such_option=3"]])
def test_a_failed_start_leaves_nothing_that_blocks_the_corrected_command(tmp_path, py_victim, bad, ones_scoring,
                                                                          capsys):
    data, out = _data(tmp_path / "data"), tmp_path / "run"
    code = _attack_cli(data, out, "--n", "2", *bad)  # an unknown option was a TypeError traceback
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and not (out / "run.json").exists()
    if bad[0] == "--option":
        assert "unexpected keyword argument 'no_such_option' (--option); it takes " in err
    assert _attack_cli(data, out, "--n", "2") == 0
    assert len(list(read_jsonl(out / "records.jsonl"))) == 2


def test_an_out_folder_holding_another_summary_is_refused_and_kept(tmp_path, capsys):
    data = _data(tmp_path / "data")
    out = tmp_path / "m"
    out.mkdir()
    (out / "summary.json").write_text('{"thesis": 1}\n')
    (out / "notes.txt").write_text("mine\n")
    with pytest.raises(BodegaError, match="holds summary.json that this run did not write"):
        _run(KeywordVictim(), data, out, n_examples=2)
    assert (out / "summary.json").read_text() == '{"thesis": 1}\n' and not (out / "run.json").exists()
    (out / "summary.json").unlink()
    _run(KeywordVictim(), data, out, n_examples=2)  # other files are written beside, never over
    assert (out / "notes.txt").read_text() == "mine\n"
    (out / "run.json").unlink()  # an earlier run of ours without its run.json still resumes
    _run(KeywordVictim(), data, out, n_examples=2)
    (out / "run.json").write_text("[1, 2]\n")
    with pytest.raises(BodegaError, match="run.json: expected a JSON object, found list"):
        _run(KeywordVictim(), data, out, n_examples=2)


def test_the_api_refuses_an_out_dir_with_foreign_files_or_that_is_a_file(tmp_path):
    import bodega

    out = tmp_path / "m"
    out.mkdir()
    (out / "scores.jsonl").write_text("precious\n")
    with pytest.raises(BodegaError, match="holds scores.jsonl that this run did not write"):
        bodega.attack(KeywordVictim(), SENTENCES[:2], [1, 0], task="PR2", attacker="DeepWordBug", out_dir=out,
                      semantic=OnesSemantic())
    assert (out / "scores.jsonl").read_text() == "precious\n"
    (tmp_path / "file").write_text("x")
    with pytest.raises(BodegaError, match="is a file, not a folder"):
        bodega.attack(KeywordVictim(), SENTENCES[:2], [1, 0], task="PR2", attacker="DeepWordBug",
                      out_dir=tmp_path / "file", semantic=OnesSemantic())


@pytest.mark.parametrize("texts, labels, message", [
    ([], [], "no texts to attack"),
    (["a text"], ["fake"], "labels must be 0"),
    (["a text"], [float("nan")], "labels must be 0"),
    (["a \ud800 text"], [1], "text 0 holds a character UTF-8 cannot write"),
])
def test_the_api_refuses_empty_or_malformed_inputs_with_one_message(tmp_path, texts, labels, message):
    import bodega
    from bodega.errors import BodegaError

    with pytest.raises(BodegaError, match=message):
        bodega.attack(KeywordVictim(), texts, labels, task="PR2", attacker="DeepWordBug", semantic=OnesSemantic())


def test_an_empty_attack_file_is_refused_not_scored_zero(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "attack.tsv").write_text("")
    with pytest.raises(BodegaError, match="has no rows to attack"):
        _run(KeywordVictim(), tmp_path / "data", tmp_path / "run")
