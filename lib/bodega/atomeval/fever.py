"""Refuted FEVER claims with their evidence, from the prepared FC task split (``evidence ~ claim``)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bodega.data import read_tsv
from bodega.errors import BodegaError, MissingFileError
from bodega.tasks import split_pair


@dataclass(frozen=True)
class Claim:
    """One FEVER row: its id, the claim and its evidence."""

    id: str
    claim: str
    evidence: str


def refuted_claims(data_dir: str | Path, split: str = "attack", n: int | None = None) -> list[Claim]:
    """The label-1 (REFUTES) rows of ``<data_dir>/<split>.tsv`` in file order, at most ``n`` (None: all)."""
    if n is not None and n < 1:
        raise BodegaError(f"--n-claims {n}: give a number of claims >= 1, or 0 for every refuted claim")
    path = Path(data_dir) / f"{split}.tsv"
    if not path.exists():
        raise MissingFileError(f"{path} not found; prepare the FC task first: "
                               f"bodega data prepare --task FC --raw RAW_ROOT/FC --out {data_dir}")
    out = []
    for example in read_tsv(path):
        if example.label != 1:
            continue
        evidence, claim = split_pair(example.text)
        if not evidence:
            raise BodegaError(f"{path}: row {example.id} has no ' ~ ' separator between evidence and claim")
        out.append(Claim(example.id, claim, evidence))
        if n is not None and len(out) >= n:
            break
    return out
