"""SCPN (Iyyer et al. 2018): syntactically controlled paraphrases as adversarial texts.

The published SCPN model files are not served by any registry this project can reach;
the user gives their folder with ``scpn_dir=`` (or ``BODEGA_SCPN``). Without them the
attacker stops at construction with an error naming every file and where it is
published. With them, :mod:`bodega.attacks.scpn` loads both networks (safely: see
:mod:`bodega.attacks.scpn.files`) and paraphrases each text under the ten default
templates; all paraphrases go to the victim in one batch and the first that reaches the
goal, in template order, is the adversarial text (as OpenAttack 2.1.1's SCPN attacker).
SCPN needs a constituency parse of the input: the published pipeline uses the Stanford
parser (Java); give yours with ``parser=`` (a callable or a command line reading the
sentence on stdin and printing PTB brackets). Without it a parse derived from spaCy's
dependencies is used, which only approximates the Stanford parser's trees.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bodega.attacks.base import register_attacker
from bodega.attacks.goal import Goal
from bodega.attacks.result import AttackResult
from bodega.attacks.scpn.paraphraser import DEFAULT_TEMPLATES, Paraphraser, UnknownParseLabel
from bodega.attacks.scpn.parse import Parser
from bodega.errors import MissingFileError

SCPN_FILES = ("scpn.pt", "parse_generator.pt", "parse_vocab.pkl", "bpe.codes", "vocab.txt", "ptb_tagset.pkl")
"""What OpenAttack 2.1.1's SCPN attacker loads (``AttackAssist.SCPN``)."""
SCPN_URL = "https://data.thunlp.org/TAADToolbox/scpn.zip"
"""Where OpenAttack downloads those six files from (one zip, about 150 MB)."""
SCPN_ORIGIN = "https://github.com/miyyer/scpn"
PARSER_URL = "https://data.thunlp.org/TAADToolbox/stanford_parser_small.zip"
"""OpenAttack's Stanford constituency parser package (``TProcess.StanfordParser``; needs Java)."""
ENV = "BODEGA_SCPN"


class MissingSCPNFiles(MissingFileError):
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


@dataclass
class SCPNAttacker:
    """Paraphrase under every template, ask the victim once, keep the first success."""

    paraphraser: Paraphraser
    name: str = "SCPN"

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        """The first paraphrase (in template order) that reaches the goal; a parse label SCPN lacks is an error."""
        try:
            candidates = self.paraphraser.paraphrase(text)
        except UnknownParseLabel as error:
            return AttackResult(None, False, str(error))
        distinct = list(dict.fromkeys(c for c in candidates if c and c != text))
        if not distinct:
            return AttackResult.failure()
        reached = goal.reached(victim.predict_proba(distinct))
        for candidate, ok in zip(distinct, reached):
            if ok:
                return AttackResult(candidate, True)
        return AttackResult.failure()


def scpn(profile: str = "cpu", scpn_dir: str | None = None, parser: Parser | str | None = None,
         templates: tuple[str, ...] | None = None, beam: int = 3, **options) -> SCPNAttacker:
    """SCPN with the published files in ``scpn_dir`` (any profile: there is no other paraphrase model)."""
    if options:
        raise TypeError(f"SCPN got unknown options {sorted(options)}; it takes scpn_dir, parser, templates, beam")
    folder = check_scpn_dir(scpn_dir)
    from bodega.attacks.scpn.paraphraser import load_scpn_model

    model = load_scpn_model(folder)
    return SCPNAttacker(Paraphraser(model, parser, tuple(templates or DEFAULT_TEMPLATES), beam))


register_attacker("SCPN", scpn)
