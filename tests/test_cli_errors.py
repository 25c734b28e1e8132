"""User mistakes are one line naming the fix; bugs keep their traceback; ``-v`` shows both."""
from __future__ import annotations

import pytest

import bodega.commands.attack as attack_command
from bodega.cli import main
from bodega.errors import BodegaError, MissingFileError, UnknownNameError

ARGS = ["attack", "--task", "PR2", "--victim", "v", "--data", "d", "--attacker", "PWWS", "--out", "o"]


def test_a_user_mistake_is_one_line_without_traceback(tmp_path, capsys):
    code = main(["attack", "--task", "XX", "--victim", str(tmp_path), "--data", str(tmp_path),
                 "--attacker", "PWWS", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and err == "bodega attack: error: unknown task 'XX'; choose one of HN, PR2, FC, RD\n"


def test_a_missing_victim_folder_names_the_folder_and_the_command(tmp_path, capsys):
    (tmp_path / "attack.tsv").write_text("1\ta\ttext\n")
    code = main(["attack", "--task", "PR2", "--victim", str(tmp_path / "nope"), "--data", str(tmp_path),
                 "--attacker", "PWWS", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and "nope/victim.json not found" in err and "bodega train" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_a_bug_propagates_with_its_traceback(monkeypatch):
    def broken(args):
        raise KeyError("a bug, not a user mistake")

    monkeypatch.setattr(attack_command, "_attack", broken)
    with pytest.raises(KeyError, match="a bug"):
        main(ARGS)


def test_verbose_shows_the_traceback_of_a_user_mistake(monkeypatch, capsys):
    def mistake(args):
        raise BodegaError("--data d: no attack.tsv there; run bodega data prepare")

    monkeypatch.setattr(attack_command, "_attack", mistake)
    assert main(ARGS) == 2 and "Traceback" not in capsys.readouterr().err
    assert main(["-v", *ARGS]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and err.endswith("bodega attack: error: --data d: no attack.tsv there; "
                                               "run bodega data prepare\n")


def test_user_errors_are_their_own_type_and_the_specific_ones_keep_their_old_bases():
    assert not issubclass(BodegaError, ValueError)  # an `except ValueError` around a parse never swallows one
    assert issubclass(MissingFileError, BodegaError) and issubclass(UnknownNameError, BodegaError)
    assert issubclass(MissingFileError, FileNotFoundError) and issubclass(UnknownNameError, KeyError)
    assert str(UnknownNameError("unknown task 'X'")) == "unknown task 'X'"  # not quoted as a KeyError is
