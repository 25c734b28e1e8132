"""Applies subword-nmt BPE merge codes (the format of SCPN's ``bpe.codes``/``vocab.txt``).

SCPN's vocabulary is over BPE units, so the input must be segmented exactly as at
training time: merges applied by rank, a word-final marker, and units absent from the
frequency-filtered vocabulary split back along their merges.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from bodega.errors import BodegaError

END = "</w>"


def read_codes(path: str | Path) -> tuple[tuple[int, int], dict[tuple[str, str], int]]:
    """(format version, merge pair -> rank); the first occurrence of a pair wins."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    version = (0, 1)
    if lines and lines[0].startswith("#version:"):
        number = re.sub(r"(\.0+)*$", "", lines[0].split()[-1])
        version = tuple(int(x) for x in number.split("."))
        lines = lines[1:]
    ranks: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines):
        parts = line.split()
        if len(parts) != 2:
            raise BodegaError(f"{path}: line {number + 1 + (version != (0, 1))} is not a merge pair: {line!r}")
        ranks.setdefault((parts[0], parts[1]), number)
    if version not in ((0, 1), (0, 2)):
        raise BodegaError(f"{path}: BPE codes version {version} is not supported (0.1 and 0.2 are)")
    return version, ranks


def read_vocabulary(path: str | Path, threshold: int = 50) -> set[str]:
    """Units seen at least ``threshold`` times (SCPN uses 50), from ``unit count`` lines."""
    units = set()
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            raise BodegaError(f"{path}: line {number} is not 'unit count': {line!r}")
        if int(parts[1]) >= threshold:
            units.add(parts[0])
    return units


@dataclass
class BPE:
    """Segments whitespace-tokenised text; ``separator`` marks a non-final unit."""

    version: tuple[int, int]
    ranks: dict[tuple[str, str], int]
    vocab: set[str] | None = None
    separator: str = "@@"
    _cache: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._unmerge = {a + b: (a, b) for (a, b) in self.ranks}

    @classmethod
    def from_files(cls, codes: str | Path, vocab: str | Path | None = None, threshold: int = 50) -> "BPE":
        """A segmenter from a codes file and, optionally, a vocabulary whose units counted at least ``threshold``."""
        version, ranks = read_codes(codes)
        return cls(version, ranks, read_vocabulary(vocab, threshold) if vocab else None)

    def segment(self, sentence: str) -> str:
        """The sentence's words as BPE units, each non-final unit marked with the separator."""
        out = []
        for word in sentence.split():
            units = self.word(word)
            out.extend(u + self.separator for u in units[:-1])
            out.append(units[-1])
        return " ".join(out)

    def word(self, word: str) -> list[str]:
        """One word's BPE units (remembered per word)."""
        if word not in self._cache:
            self._cache[word] = self._encode(word)
        return self._cache[word]

    def _encode(self, word: str) -> list[str]:
        symbols = list(word) + [END] if self.version == (0, 1) else list(word[:-1]) + [word[-1] + END]
        if len(symbols) < 2:
            return [word]
        while len(symbols) > 1:
            pairs = {(a, b) for a, b in zip(symbols, symbols[1:])}
            best = min(pairs, key=lambda p: self.ranks.get(p, float("inf")))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    merged.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        if symbols[-1] == END:
            symbols = symbols[:-1]
        elif symbols[-1].endswith(END):
            symbols[-1] = symbols[-1][: -len(END)]
        return self._within_vocab(symbols) if self.vocab else symbols

    def _within_vocab(self, units: list[str]) -> list[str]:
        out = []
        for unit in units[:-1]:
            out.extend([unit] if unit + self.separator in self.vocab else self._split(unit, final=False))
        last = units[-1]
        out.extend([last] if last in self.vocab else self._split(last, final=True))
        return out

    def _split(self, unit: str, final: bool) -> list[str]:
        """Undo merges until every piece is in the vocabulary or cannot be split."""
        pair = self._unmerge.get(unit + END) if final else self._unmerge.get(unit)
        if pair is None:
            return [unit]
        left, right = pair
        if final:
            right = right[: -len(END)]
        pieces = [left] if left + self.separator in self.vocab else self._split(left, False)
        right_known = right in self.vocab if final else right + self.separator in self.vocab
        return pieces + ([right] if right_known else self._split(right, final))


def join_bpe(units: list[str], separator: str = "@@") -> list[str]:
    """Words from BPE units: a unit ending in the separator continues into the next."""
    words, pending = [], ""
    for unit in units:
        if unit.endswith(separator):
            pending += unit[: -len(separator)]
        else:
            words.append(pending + unit)
            pending = ""
    if pending:
        words.append(pending)
    return words
