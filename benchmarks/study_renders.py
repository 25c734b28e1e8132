"""The verdicts of each complete render of the study, read from git: every commit listed in
``book/data/study_renders.yaml`` gives the verdicts its ``book/generated/study.ipynb`` glued, written with the
label and cause to ``book/data/study_renders.json`` for the plan page's list of flipped verdicts.

    .venv/bin/python benchmarks/study_renders.py
"""
from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import yaml

from bodega_book.page_data import write_page_data
from bodega_book.study_changes import notebook_verdicts

NOTEBOOK = "book/generated/study.ipynb"


def renders(listing: Path, notebook: str = NOTEBOOK) -> list[dict]:
    """Each listed render with the verdicts its commit's study notebook glued."""
    out = []
    for entry in yaml.safe_load(listing.read_text(encoding="utf-8")):
        text = subprocess.run(["git", "show", f"{entry['commit']}:{notebook}"], capture_output=True, text=True,
                              check=True).stdout
        out.append({**entry, "verdicts": notebook_verdicts(json.loads(text))})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--listing", type=Path, default=Path("book/data/study_renders.yaml"))
    parser.add_argument("--out", type=Path, default=Path("book/data/study_renders.json"))
    args = parser.parse_args(argv)
    found = renders(args.listing)
    write_page_data("study_renders", args.out, found)
    print(f"{len(found)} renders -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
