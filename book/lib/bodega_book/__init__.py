"""The book's page builders and one study's bookkeeping, outside the installed ``bodega`` core.

Each module turns finished results, or a data file a benchmark wrote into ``book/data/``, into the tables and
facts of one book page (``*_page``, :mod:`bodega_book.findings_html`, :mod:`bodega_book.tables`), or keeps the
bookkeeping of the studies the book reports (:mod:`bodega_book.findings`, :mod:`bodega_book.cost`). It only
reads; nothing here trains, attacks or scores, so a book build cannot change a number.
"""
