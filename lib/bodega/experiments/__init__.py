"""Experiment grids: specs read from ``parameters/*.yaml``, cells keyed by content hashes, engines."""
from bodega.experiments.spec import GridError, GridSpec, load_grid, parse_grid

__all__ = ["GridError", "GridSpec", "load_grid", "parse_grid"]
