"""The gate without one of its two stages, for the paper's Table 4 ablation against people.

- **Without the atom extractor** (the paper's "w/o SROM Extractor"): the claim is not split into atoms; the
  whole sentence is one slot, compared word by word with the whole rewrite by the same matcher (synonyms,
  specialisation, the reordering rule), so a rewrite is valid when it says everything the claim says.
- **Without the matching step** (the paper's "w/o BinaryGate/NLI"): the atoms are extracted, but an atom
  counts as preserved only when the rewrite has the identical atom (the gold set's atom equality, every slot
  equal after normalisation); no synonyms, specialisation, reordering or NLI.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from bodega.atomeval.atoms import Atom
from bodega.atomeval.gate import Gate
from bodega.atomeval.gold import atoms_match


class SentenceExtractor:
    """One pseudo-atom per text: the whole sentence as its subject (no extraction)."""

    def extract(self, claim: str) -> list[Atom]:
        """The sentence as a single atom with an empty relation and object."""
        return [Atom(subject=claim, relation="", span=claim)]


@dataclass
class ExactVerdict:
    """What :func:`bodega.atomeval.human.gate_agreement` reads of a verdict."""

    valid: bool
    score: float
    diagnostics: list = field(default_factory=list)


class ExactAtomGate:
    """The gate's extractor without its matcher: an atom is kept only when the rewrite has the same atom."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate

    def rewrite_text(self, claim: str, rewrite: str) -> str:
        """The rewrite as the wrapped gate reads it."""
        return self.gate.rewrite_text(claim, rewrite)

    def judge(self, claim: str, rewrite: str, evidence: str = "") -> ExactVerdict:
        """Valid when every atom of ``claim`` is among the atoms of ``rewrite``; the score is the kept share."""
        atoms = self.gate.atoms(claim)
        rewrite_atoms = self.gate.atoms(self.rewrite_text(claim, rewrite))
        kept = [any(atoms_match(atom, other) for other in rewrite_atoms) for atom in atoms]
        return ExactVerdict(bool(kept) and all(kept), sum(kept) / len(kept) if kept else 0.0)
