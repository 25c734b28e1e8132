"""SCPN: the missing-file error names every file and where it is published; broken files are named."""
from __future__ import annotations

import pytest

from bodega.errors import BodegaError
from bodega.attacks import get_attacker
from bodega.attacks.recipes.scpn import SCPN_FILES, SCPN_URL, MissingSCPNFiles, check_scpn_dir


def test_no_folder_names_all_files_and_url(monkeypatch):
    monkeypatch.delenv("BODEGA_SCPN", raising=False)
    with pytest.raises(MissingSCPNFiles) as error:
        get_attacker("SCPN", profile="paper")
    message = str(error.value)
    assert all(name in message for name in SCPN_FILES) and SCPN_URL in message and "BODEGA_SCPN" in message


def test_partial_folder_names_exactly_the_missing_files(tmp_path, monkeypatch):
    for name in ("scpn.pt", "bpe.codes", "vocab.txt"):
        (tmp_path / name).write_text("x")
    monkeypatch.setenv("BODEGA_SCPN", str(tmp_path))
    with pytest.raises(MissingSCPNFiles, match="lacks parse_generator.pt, parse_vocab.pkl, ptb_tagset.pkl \\("):
        get_attacker("SCPN", profile="paper")
    for name in SCPN_FILES:
        (tmp_path / name).write_text("x")
    assert check_scpn_dir(None) == tmp_path
    # all six present but not the real files: loading names the first unreadable one
    with pytest.raises(BodegaError, match="parse_vocab.pkl: not a readable pickle"):
        get_attacker("SCPN", profile="paper")
