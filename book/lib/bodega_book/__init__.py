"""The book's page builders and one study's bookkeeping, outside the installed ``bodega`` core.

Each module turns finished results, or a data file a benchmark wrote into ``book/data/``, into the tables and
facts of one book page (``*_page``, :mod:`bodega_book.findings_html`, :mod:`bodega_book.tables`), or keeps the
bookkeeping of the studies the book reports (:mod:`bodega_book.findings`, :mod:`bodega_book.cost`, the typed plan
:mod:`bodega_book.study_plan`). A page only reads: the one part that measures is the study's pilot
(:mod:`bodega_book.pilot_run`, timing victims and attacking a few examples to plan a grid), which only
``benchmarks/study_pilot.py`` runs, so a book build cannot change a number.
"""
