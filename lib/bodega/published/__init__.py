"""Data files shipped with the package: ``bodega.yaml`` and ``atomeval.yaml``, the numbers the BODEGA and AtomEval
papers publish (with sources).

A copy of the project's shared published-values file, so that an installed package or a clone
without the shared data folder renders the study beside the paper's values.
"""
from pathlib import Path

BODEGA_YAML = Path(__file__).resolve().parent / "bodega.yaml"
"""The BODEGA paper's published values (Tables 1 and 3, and what its text states about Tables 4-6)."""

ATOMEVAL_YAML = Path(__file__).resolve().parent / "atomeval.yaml"
"""The AtomEval paper's published values (Tables 1-8 as far as the available copy shows them)."""
