"""Report: read a finished results folder into tables (:mod:`bodega.report.results`), with the statistics
(:mod:`bodega.report.uncertainty`) and the views the stage notebooks and the command line show.

Report code only reads finished results; it never trains, attacks or scores. The book's page builders and the
studies' bookkeeping (findings, cost ledger) are the separate ``bodega_book`` package under ``book/lib``.
"""
from bodega.report.results import Results, load_results

__all__ = ["Results", "load_results"]
