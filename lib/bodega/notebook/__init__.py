"""The first call of every notebook: progress on the terminal, full tables in the page.

Why: an executed notebook is a page of the book. Progress bars, log lines and library warnings
written into it become pages of carriage-return spam and name the folders of the machine that
ran it (a tqdm warning quotes the virtual environment's path), while the person who started
``papermill`` saw nothing but "Executing 1/10 cells" for as long as a victim trained. Sending the
kernel's standard error to the kernel process's own terminal fixes both: papermill (and
``jupyter``) inherit it, so bars and logs stream live there and never reach the page. Errors
still reach the page: an exception is reported to the notebook by the kernel, not through stderr.
"""
from __future__ import annotations

import logging
import sys
import warnings

TABLE_OPTIONS = {"display.max_rows": 500, "display.max_columns": None, "display.max_colwidth": None,
                 "display.width": None}
"""pandas display options: tables of a report page are shown whole (up to 500 rows), never cut to ``...``."""


def setup_notebook(level: int = logging.INFO) -> None:
    """Route stderr, logging and progress bars to the terminal; show tables in full."""
    if sys.__stderr__ is not None:
        sys.stderr = sys.__stderr__
    warnings.filterwarnings("ignore", message="IProgress not found")
    import pandas as pd
    import tqdm.auto
    import tqdm.std

    # tqdm.auto would draw widget bars into the page (or warn that ipywidgets is missing).
    tqdm.auto.tqdm = tqdm.std.tqdm
    logging.basicConfig(level=level, stream=sys.stderr, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    for option, value in TABLE_OPTIONS.items():
        pd.set_option(option, value)
