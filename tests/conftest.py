"""Fixtures shared by several test modules (pytest finds them here; modules do not import them)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from attack_fakes import SENTENCES, KeywordVictim
from bodega.data import Example, write_tsv


@pytest.fixture()
def keyword_attack_set(tmp_path: Path) -> Callable[..., Path]:
    """Writes ``<tmp>/data/attack.tsv``: the fake sentences, each labelled as :class:`KeywordVictim` predicts
    it, so every example starts correctly classified and can be attacked. The list is repeated ``copies``
    times, and ``copies`` consecutive rows share an id (sentences of one document)."""

    def write(copies: int = 1) -> Path:
        folder = tmp_path / "data"
        folder.mkdir()
        victim = KeywordVictim()
        write_tsv(folder / "attack.tsv", [Example(int(victim.predict([text])[0]), f"doc-{i // copies}", text)
                                          for i, text in enumerate(SENTENCES * copies)])
        return folder

    return write


@pytest.fixture()
def grid_data(tmp_path: Path) -> Path:
    """``<tmp>/data``: a PR2 task of one row per split, for grids whose stage notebooks are fakes."""
    data = tmp_path / "data" / "PR2"
    data.mkdir(parents=True)
    for split in ("train", "attack", "dev"):
        (data / f"{split}.tsv").write_text(f"1\tid-{split}\tsome {split} text\n")
    return data.parent


@pytest.fixture(scope="module")
def gate():
    """AtomEval's gate with the offline spaCy extractor (loading spaCy once per module)."""
    from bodega.atomeval.extract_spacy import SpacyExtractor
    from bodega.atomeval.gate import Gate

    return Gate(SpacyExtractor())


@pytest.fixture(autouse=True)
def own_prediction_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own persistent prediction cache: runs default to the user's cache file
    (``bodega.victims.cache.default_cache_path``), which tests must neither fill nor read, and two
    tests' fake victims may share a weights hash while answering differently. The substitute LM's
    candidate cache (``bodega.mlm.substitute_cache``) is the test's own too."""
    folder = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("BODEGA_PREDICTION_CACHE", str(folder / "predictions.sqlite"))
    monkeypatch.setenv("BODEGA_SUBSTITUTE_CACHE", str(folder / "substitutes.sqlite"))
