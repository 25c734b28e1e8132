"""The runner takes objects: a victim object, an attacker object and rows in memory; a run folder is an adapter."""
from __future__ import annotations

import pytest

import bodega
from attack_fakes import SENTENCES, FirstWordDropper, KeywordVictim, OnesSemantic
from bodega.attacks import registered_attackers, run_attack
from bodega.attacks.runner import AttackOptions, NamedAttacker, attack_examples, rows_identity
from bodega.data import Example, read_tsv
from bodega.io import file_sha256
from bodega.records import AttackReport, read_summary


def _rows() -> list[Example]:
    victim = KeywordVictim()
    return [Example(int(victim.predict([text])[0]), f"doc-{i}", text) for i, text in enumerate(SENTENCES)]


def test_examples_in_memory_are_attacked_without_a_file_or_a_registration(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = registered_attackers()
    report = attack_examples("PR2", KeywordVictim(), FirstWordDropper(), _rows(),
                             AttackOptions(semantic=OnesSemantic(), progress=False))
    assert isinstance(report, AttackReport) and report.out_dir is None
    assert [r.index for r in report.records] == list(range(len(SENTENCES))) and any(r.success for r in report.records)
    assert report.run.config.attacker == "first-word-dropper" and report.run.n_examples == len(SENTENCES)
    assert report.bodega_score == pytest.approx(sum(r.bodega for r in report.records) / len(report.records))
    bodega.attack(KeywordVictim(), SENTENCES, [r.label for r in _rows()], task="PR2", attacker=FirstWordDropper(),
                  semantic=OnesSemantic())
    assert list(tmp_path.iterdir()) == [] and registered_attackers() == before


def test_a_run_folder_holds_what_the_memory_run_returns(keyword_attack_set, tmp_path):
    data = keyword_attack_set()
    options = AttackOptions(semantic=OnesSemantic(), progress=False, targeted=True)
    rows = read_tsv(data / "attack.tsv")
    memory = attack_examples("PR2", KeywordVictim(), NamedAttacker("DeepWordBug"), rows, options)
    folder = run_attack("PR2", KeywordVictim(), data, "DeepWordBug", tmp_path / "run", options)
    assert folder.out_dir == tmp_path / "run"
    assert [(r.adversarial, r.queries) for r in memory.records] == [(r.adversarial, r.queries) for r in folder.records]
    assert read_summary(tmp_path / "run") == folder.run
    assert memory.run.config.data == folder.run.config.data  # rows in memory are named as their attack.tsv


def test_rows_are_identified_as_the_file_they_would_be_written_to(keyword_attack_set):
    data = keyword_attack_set()
    assert rows_identity(read_tsv(data / "attack.tsv")) == {"attack_sha256": file_sha256(data / "attack.tsv"),
                                                            "rows": len(SENTENCES)}


def test_a_named_attacker_is_built_only_when_an_example_needs_it(keyword_attack_set, tmp_path, monkeypatch):
    data = keyword_attack_set()
    run_attack("PR2", KeywordVictim(), data, "DeepWordBug", tmp_path / "run", semantic=OnesSemantic(), progress=False)
    built = []
    monkeypatch.setattr("bodega.attacks.runner.get_attacker", lambda *a, **k: built.append(a))
    again = run_attack("PR2", KeywordVictim(), data, "DeepWordBug", tmp_path / "run", semantic=OnesSemantic(),
                       progress=False)
    assert built == [] and again.run.n_examples == len(SENTENCES)  # a finished run resumed loads no attacker
