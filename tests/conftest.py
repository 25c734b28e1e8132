"""Fixtures every test module shares."""
from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def own_prediction_cache(tmp_path_factory, monkeypatch):
    """Each test gets its own persistent prediction cache: runs default to the user's cache file
    (``bodega.victims.cache.default_cache_path``), which tests must neither fill nor read, and two
    tests' fake victims may share a weights hash while answering differently."""
    monkeypatch.setenv("BODEGA_PREDICTION_CACHE", str(tmp_path_factory.mktemp("cache") / "predictions.sqlite"))
