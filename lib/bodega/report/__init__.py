"""Report: read a results folder and build BODEGA's tables, figures and manual-analysis sample.

Report code only reads finished results (see :mod:`bodega.report.results`); it never trains,
attacks or scores, so a book build cannot change a number.
"""
from bodega.report.results import Results, load_results

__all__ = ["Results", "load_results"]
