"""What a built book's HTML must not show a reader: a cell's traceback or warning, a "nan" where a number should
be, a glue reference left unrendered, or a command that cannot be copied as typed (a typographic dash in code).

Why a scan of the HTML: every page of the book is built from committed files, and a page that lost one of them,
or that divides by an empty count, still builds; only its HTML shows the reader the damage. Run on a build:
``python -m bodega_book.html_check book/_build/html`` (exit 1 and one line per problem).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"
"""Hyphen, non-breaking hyphen, figure dash, en dash, em dash, horizontal bar, minus sign: a shell reads none of
them as ``-``."""
OPTION_DASH = re.compile(f"(?:^|\\s)[{DASHES}]+-?[A-Za-z][\\w-]*")
"""A typographic dash where a command's option starts (``–victim``): typed, the option is not recognised."""
TEXT_PROBLEMS = {
    "a traceback": re.compile(r"Traceback \(most recent call last\)"),
    "a warning": re.compile(r"\b\w*Warning: "),
    "unrendered glue": re.compile(r"\{glue(?::\w+)?\}|\{glue:"),
}
"""Looked for in all of a page's text, code and cell outputs included."""
PROSE_PROBLEMS = {"nan": re.compile(r"(?<![\w.])(?<!score: )[+-]?nan(?:%|\b)(?![\w-])")}
"""Looked for in the text outside code: in prose and tables a "nan" stands where a number should, while code says
``float("nan")``; BODEGA's own report line, which a stage notebook shows as BODEGA prints it, reads
``Semantic score: nan`` for a mean over no successful example."""
SKIPPED = {"script", "style"}
CODE = {"code", "pre", "kbd", "samp"}
OUTPUT_CLASSES = ("output traceback", "output error")
"""myst-nb's classes for a cell's error output (its stderr stream holds logs too: a warning there is found by its
text)."""


@dataclass(frozen=True)
class Problem:
    """One thing a reader would see go wrong, with the page and the text around it so it can be found."""

    page: str
    what: str
    context: str

    def line(self) -> str:
        """The problem as one report line (page, what, context), as the command prints it."""
        return f"{self.page}: {self.what}: {self.context!r}"


def typographic_dashes(command: str) -> list[str]:
    """The options of ``command`` that start with a typographic dash (a command copied from the page fails)."""
    return [match.group().strip() for match in OPTION_DASH.finditer(command)]


class _Text(HTMLParser):
    """The visible text of a page and, apart, the text of each code element; the classes of every element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.prose: list[str] = []
        self.code: list[str] = []
        self.classes: list[str] = []
        self._skip = 0
        self._code = 0
        self._current: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.classes.append(dict(attrs).get("class") or "")
        if tag in SKIPPED:
            self._skip += 1
        elif tag in CODE:
            self._code += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self._skip = max(0, self._skip - 1)
        elif tag in CODE and self._code:
            self._code -= 1
            if not self._code:
                self.code.append("".join(self._current))
                self._current = []

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text.append(data)
        (self._current if self._code else self.prose).append(data)


def page_problems(html: str, page: str = "") -> list[Problem]:
    """Every problem :mod:`this module <bodega_book.html_check>` looks for in one page's HTML."""
    parser = _Text()
    parser.feed(html)
    found = []
    for texts, patterns in ((parser.text, TEXT_PROBLEMS), (parser.prose, PROSE_PROBLEMS)):
        text = " ".join(" ".join(texts).split())
        found += [Problem(page, what, text[max(0, m.start() - 60):m.end() + 60])
                  for what, pattern in patterns.items() for m in pattern.finditer(text)]
    found += [Problem(page, "a cell's error output", name) for name in parser.classes
              if any(output in name for output in OUTPUT_CLASSES)]
    found += [Problem(page, "a command with a typographic dash", " ".join(code.split())[:160])
              for code in parser.code if typographic_dashes(code)]
    # a command glued into prose: Sphinx's smart quotes turn its "--" into an en dash
    found += [Problem(page, "an option with a typographic dash in prose", option)
              for option in typographic_dashes(" ".join(parser.prose))]
    return found


def built_pages(html_root: str | Path) -> list[Path]:
    """Every page of a built book (``_build/html``), its search and index pages and Sphinx's own folders left
    out; none raises, since a check of no page would pass."""
    root = Path(html_root)
    pages = sorted(p for p in root.rglob("*.html") if not p.relative_to(root).parts[0].startswith("_")
                   and p.name not in {"search.html", "genindex.html", "py-modindex.html"})
    if not pages:
        raise FileNotFoundError(f"{root}: no built pages (run jupyter-book build book/ first)")
    return pages


def book_problems(html_root: str | Path) -> list[Problem]:
    """The problems of every page of a built book."""
    root = Path(html_root)
    return [problem for page in built_pages(root)
            for problem in page_problems(page.read_text(encoding="utf-8"), str(page.relative_to(root)))]


def main(argv: list[str] | None = None) -> int:
    """The command line: one line per problem and exit 1 on any, so a build with damage fails CI."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("html", help="the built book's HTML folder (book/_build/html)")
    args = parser.parse_args(argv)
    problems = book_problems(args.html)
    for problem in problems:
        print(problem.line(), file=sys.stderr)
    print(f"{len(problems)} problems in {args.html}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
