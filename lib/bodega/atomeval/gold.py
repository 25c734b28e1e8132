"""The hand-checked gold atoms and extractor accuracy on them (see ``gold/README.md``)."""
from __future__ import annotations

import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Protocol

from bodega.atomeval.atoms import Atom
from bodega.errors import BodegaError
from bodega.atomeval.normalise import normalise

GOLD_PATH = Path(__file__).parent / "gold" / "fever_refutes_atoms.jsonl"
SLOTS = ("subject", "relation", "object", "modifiers", "polarity")


class Extractor(Protocol):
    """What the gold evaluation needs from an extractor: a ``name`` and ``extract(claim)`` to atoms."""

    name: str

    def extract(self, claim: str) -> list[Atom]:
        """The atoms of ``claim``."""
        ...


@dataclass(frozen=True)
class GoldClaim:
    """One gold row: a claim with its split, evidence and hand-written atoms."""

    id: str
    split: str
    claim: str
    evidence: str
    atoms: tuple[Atom, ...]


def load_gold(path: str | Path = GOLD_PATH) -> list[GoldClaim]:
    """The gold claims of a JSON-lines file; a bad row raises ValueError naming its line."""
    claims = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            atoms = tuple(Atom.from_dict(a) for a in row["atoms"])
        except (ValueError, KeyError, BodegaError) as error:
            raise BodegaError(f"{path}:{number}: bad gold row: {error}") from error
        claims.append(GoldClaim(row["id"], row["split"], row["claim"], row["evidence"], atoms))
    return claims


def first_per_split(gold: list[GoldClaim], n: int) -> list[GoldClaim]:
    """The first ``n`` claims of each split (file order): a stated subset when extraction is slow."""
    taken: Counter = Counter()
    out = []
    for item in gold:
        if taken[item.split] < n:
            taken[item.split] += 1
            out.append(item)
    return out


def slot_key(atom: Atom, slot: str):
    """The normalised value of one slot, as compared for a gold match."""
    if slot == "relation":
        return normalise(atom.relation, relation=True)
    if slot == "modifiers":
        return tuple(sorted(Counter(normalise(m.value) for m in atom.modifiers).items()))
    if slot == "polarity":
        return atom.polarity
    return normalise(getattr(atom, slot))


def atoms_match(a: Atom, b: Atom) -> bool:
    """True when every slot of the two atoms agrees after normalisation."""
    return all(slot_key(a, s) == slot_key(b, s) for s in SLOTS)


def extraction_correct(predicted: Iterable[Atom], gold: Iterable[Atom]) -> bool:
    """True when the two lists pair one to one with every pair matching."""
    predicted, gold = list(predicted), list(gold)
    if len(predicted) != len(gold):
        return False
    if len(gold) > 6:  # claims have few atoms; a greedy pairing is exact enough beyond that
        remaining = list(predicted)
        for g in gold:
            hit = next((p for p in remaining if atoms_match(p, g)), None)
            if hit is None:
                return False
            remaining.remove(hit)
        return True
    return any(all(atoms_match(p, g) for p, g in zip(order, gold))
               for order in itertools.permutations(predicted))


@dataclass
class ExtractionReport:
    """An extractor's result on the gold set: counts and correct claims per split, slot agreement, errors."""

    extractor: str
    n: dict[str, int] = field(default_factory=dict)
    correct: dict[str, int] = field(default_factory=dict)
    slot_agreement: dict[str, float] = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)
    llm: dict[str, int] = field(default_factory=dict)  # an LLM extractor's calls, retries, invalid answers

    def accuracy(self, split: str = "all") -> float:
        """The share of claims of ``split`` extracted correctly (NaN when it has none)."""
        return self.correct.get(split, 0) / self.n[split] if self.n.get(split) else float("nan")

    def to_dict(self) -> dict:
        """The report as a JSON-ready dict, accuracy per split included."""
        return {"extractor": self.extractor, "n": self.n, "correct": self.correct,
                "accuracy": {s: self.accuracy(s) for s in self.n}, "slot_agreement": self.slot_agreement,
                **({"llm": self.llm} if self.llm else {}), "errors": self.errors}


def _predictions(extractor: Extractor, claims: list[str], progress: bool, chunk: int = 24):
    """(atoms, error text) per claim; an extractor with ``extract_many`` gets chunks of claims at once."""
    many = getattr(extractor, "extract_many", None)
    starts = range(0, len(claims), chunk if many else 1)
    if progress:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=f"extract ({extractor.name})", unit="chunk" if many else "claim")
    for start in starts:
        if many is not None:
            for result in many(claims[start:start + chunk]):
                if isinstance(result, Exception):
                    yield [], f"{type(result).__name__}: {result}"
                else:
                    yield result, None
            continue
        try:
            yield extractor.extract(claims[start]), None
        except Exception as exc:  # a failed extraction counts as wrong and is recorded, not hidden
            yield [], f"{type(exc).__name__}: {exc}"


def evaluate_extractor(extractor: Extractor, gold: list[GoldClaim] | None = None,
                       progress: bool = False) -> ExtractionReport:
    """Accuracy per split (dev, test, all) and per-slot agreement of single-atom claims."""
    gold = load_gold() if gold is None else gold
    report = ExtractionReport(extractor.name)
    slot_hits: Counter = Counter()
    single = 0
    predictions = _predictions(extractor, [item.claim for item in gold], progress)
    for item, (predicted, error) in zip(gold, predictions):
        ok = extraction_correct(predicted, item.atoms)
        for split in (item.split, "all"):
            report.n[split] = report.n.get(split, 0) + 1
            report.correct[split] = report.correct.get(split, 0) + int(ok)
        if len(item.atoms) == 1 and len(predicted) >= 1:
            single += 1
            for slot in SLOTS:
                slot_hits[slot] += slot_key(predicted[0], slot) == slot_key(item.atoms[0], slot)
        elif len(item.atoms) == 1:
            single += 1
        if not ok:
            report.errors.append({"id": item.id, "split": item.split, "claim": item.claim, "error": error,
                                  "gold": [a.text() for a in item.atoms],
                                  "predicted": [a.text() for a in predicted]})
    report.slot_agreement = {s: slot_hits[s] / single for s in SLOTS} if single else {}
    if hasattr(extractor, "stats"):
        report.llm = extractor.stats()
    return report
