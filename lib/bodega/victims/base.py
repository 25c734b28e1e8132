"""What every victim shares: the protocol, input checks, weight hashing and batching.

Attack code only ever sees :class:`Victim`; the concrete classifiers live in their own
modules and are imported lazily so that ``import bodega.victims`` stays free of torch.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable, Iterator, Protocol, Sequence, runtime_checkable

import numpy as np

MAX_TOKENS = 512
"""BODEGA truncates every input to the first 512 tokens of the victim's tokenizer."""


@runtime_checkable
class Victim(Protocol):
    """A binary classifier under attack; column 1 of ``predict_proba`` is P(non-credible)."""

    name: str
    task: str
    weights_hash: str

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """One ``[P(credible), P(non-credible)]`` row per text; a text's row must not depend on the others."""
        ...

    def predict(self, texts: list[str]) -> np.ndarray:
        """The decision (0 or 1) per text."""
        ...


def check_texts(texts: Sequence[object]) -> list[str]:
    """Return ``texts`` as a list of str; a non-string raises TypeError naming its position."""
    if isinstance(texts, str):
        raise TypeError("predict_proba expects a list of strings, got a single str; wrap it in a list")
    checked = list(texts)
    for position, text in enumerate(checked):
        if not isinstance(text, str):
            raise TypeError(f"text at position {position} is {type(text).__name__}, expected str")
    return checked


def chunks(items: Sequence, size: int) -> Iterator[Sequence]:
    """Consecutive slices of ``items`` of at most ``size``."""
    for start in range(0, len(items), size):
        yield items[start:start + size]


def hash_files(paths: Iterable[Path], extra: str = "") -> str:
    """sha256 over (name, content) of weight files in name order, plus an optional extra string.

    The hash names cached predictions, so any change of weights (retraining into the same
    folder included) gives a new key and stale probabilities are never served.
    """
    digest = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        digest.update(path.name.encode("utf-8") + b"\0")
        with open(path, "rb") as handle:
            while block := handle.read(1 << 20):
                digest.update(block)
        digest.update(b"\0")
    digest.update(extra.encode("utf-8"))
    return digest.hexdigest()


def argmax_predictions(probabilities: np.ndarray) -> np.ndarray:
    """Decisions (class index as int) from a probability matrix."""
    return np.asarray(probabilities).argmax(axis=1).astype(int)
