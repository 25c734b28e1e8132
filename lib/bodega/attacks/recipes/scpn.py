"""SCPN (Iyyer et al. 2018): syntactically controlled paraphrases as adversarial texts.

The ``paper`` profile needs the published SCPN model files, which no registry
reachable from this project's machines serves; the user gives their folder with
``scpn_dir=`` (or ``BODEGA_SCPN``). Without them the attacker stops at construction
with an error naming every file and where it is published. SCPN also parses each
input into a constituency tree; OpenAttack does that with the Stanford parser (Java),
which is not installable here either. The paraphrase network itself is not
reimplemented in this project yet, so even with the files the attacker stops with
an error that says so (no silent fallback to another attack).
"""
from __future__ import annotations

import os
from pathlib import Path

from bodega.attacks.base import register_attacker

SCPN_FILES = ("scpn.pt", "parse_generator.pt", "parse_vocab.pkl", "bpe.codes", "vocab.txt", "ptb_tagset.pkl")
"""What OpenAttack 2.1.1's SCPN attacker loads (``AttackAssist.SCPN``)."""
SCPN_URL = "https://data.thunlp.org/TAADToolbox/scpn.zip"
"""Where OpenAttack downloads those six files from (one zip, about 150 MB)."""
SCPN_ORIGIN = "https://github.com/miyyer/scpn"
PARSER_URL = "https://data.thunlp.org/TAADToolbox/stanford_parser_small.zip"
"""OpenAttack's Stanford constituency parser package (``TProcess.StanfordParser``; needs Java)."""
ENV = "BODEGA_SCPN"


class MissingSCPNFiles(FileNotFoundError):
    """The SCPN model folder lacks files; the message lists them and their source."""


def check_scpn_dir(folder: str | Path | None) -> Path:
    """The SCPN folder with all six files, or an error naming exactly what is missing and where it is."""
    where = folder or os.environ.get(ENV)
    if not where:
        raise MissingSCPNFiles(
            f"SCPN needs its published model files in one folder: {', '.join(SCPN_FILES)}. "
            f"They are published as {SCPN_URL} (OpenAttack's 'AttackAssist.SCPN'; the model is from {SCPN_ORIGIN}). "
            f"Download and unzip it on a machine with access, then pass scpn_dir=<folder> or set {ENV}=<folder>. "
            f"SCPN also needs a constituency parser: OpenAttack uses the Stanford parser ({PARSER_URL}, Java).")
    path = Path(where)
    missing = [name for name in SCPN_FILES if not (path / name).is_file()]
    if missing:
        raise MissingSCPNFiles(
            f"SCPN folder {path} lacks {', '.join(missing)} (all of {', '.join(SCPN_FILES)} are needed). "
            f"They are published as {SCPN_URL} (OpenAttack's 'AttackAssist.SCPN'; model from {SCPN_ORIGIN}).")
    return path


def scpn(profile: str = "cpu", scpn_dir: str | None = None, **options):
    """SCPN as BODEGA ran it through OpenAttack (ten default templates); see the module note."""
    folder = check_scpn_dir(scpn_dir)
    raise NotImplementedError(
        f"SCPN files found in {folder}, but this project's SCPN network and the constituency parser it needs "
        "are not implemented yet; run SCPN with --backend openattack on a machine with OpenAttack's resources.")


register_attacker("SCPN", scpn)
