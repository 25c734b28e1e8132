"""HN from the SemEval-2019 Task 4 (hyperpartisan news) XML, with BODEGA's rules.

An article's text is its title, a newline, then every character inside the
``<article>`` element with the markup removed (paragraph and link tags dropped, their
text kept, whitespace between them kept), as BODEGA's SAX handler does; tabs are removed.
The row id is the article URL from the ground truth; label 1 = hyperpartisan.
Rows keep the ground-truth file's order.

* ``bypublisher`` (BODEGA's source): train = training articles whose numeric id is a
  multiple of 10; the test pool = all test articles; attack = every ``len(pool)//400``-th.
* ``byarticle`` (the part this project's corpora hold): train = the 645 training articles, less any
  whose text is also a test article's (the same article under another URL); the test pool =
  the 628 test articles, which is under 800 rows, so the small-pool rule of
  :func:`bodega.data.splits.split_attack_dev` applies.
"""
from __future__ import annotations

import xml.sax
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tqdm import tqdm

from bodega.data.converters.common import RawDataError, drop_tabs, require_files
from bodega.data.splits import Splits, split_attack_dev
from bodega.data.tsv import Example

PUBLISHED_AT = "https://zenodo.org/record/1489920 (SemEval-2019 Task 4, CC BY 4.0)"
BYARTICLE = {
    "train": ("articles-training-byarticle-20181122.xml", "ground-truth-training-byarticle-20181122.xml"),
    "test": ("articles-test-byarticle-20181207.xml", "ground-truth-test-byarticle-20181207.xml"),
}
BYPUBLISHER = {
    "train": ("articles-training-bypublisher-20181122.xml", "ground-truth-training-bypublisher-20181122.xml"),
    "test": ("articles-test-bypublisher-20181212.xml", "ground-truth-test-bypublisher-20181212.xml"),
}
EVERY_N_IN_TRAINING = 10
"""BODEGA keeps every by-publisher training article whose id is a multiple of this."""


@dataclass(frozen=True)
class _Truth:
    label: int
    url: str


class _Handler(xml.sax.handler.ContentHandler):
    """Collects ``<article>`` elements, failing with file:line on a malformed one."""

    def __init__(self, path: Path, keep: Callable[[str], bool], texts: bool):
        super().__init__()
        self.path, self.keep, self.texts = path, keep, texts
        self.locator: xml.sax.xmlreader.Locator | None = None
        self.truth: dict[str, _Truth] = {}
        self.articles: dict[str, str] = {}
        self._current: str | None = None
        self._chunks: list[str] = []

    def setDocumentLocator(self, locator):  # noqa: N802 (SAX API name)
        self.locator = locator

    def _where(self) -> str:
        return f"{self.path}:{self.locator.getLineNumber() if self.locator else '?'}"

    def _attr(self, attrs, name: str) -> str:
        if name not in attrs:
            raise RawDataError(f"{self._where()}: <article> lacks the {name!r} attribute")
        return attrs[name]

    def startElement(self, name, attrs):  # noqa: N802
        if name != "article" or self._current is not None:
            return
        ident = self._attr(attrs, "id")
        if not ident.isdigit():
            raise RawDataError(f"{self._where()}: article id {ident!r} is not a number")
        if not self.keep(ident):
            return
        if self.texts:
            self._current = ident
            self._chunks = [self._attr(attrs, "title"), "\n"]
            return
        flag = self._attr(attrs, "hyperpartisan").lower()
        if flag not in ("true", "false"):
            raise RawDataError(f"{self._where()}: hyperpartisan={flag!r}, expected true or false")
        self.truth[ident] = _Truth(int(flag == "true"), self._attr(attrs, "url"))

    def endElement(self, name):  # noqa: N802
        if name == "article" and self._current is not None:
            self.articles[self._current] = "".join(self._chunks)
            self._current = None

    def characters(self, content):
        if self._current is not None:
            self._chunks.append(content)


def _parse(path: Path, keep: Callable[[str], bool], texts: bool) -> _Handler:
    handler = _Handler(path, keep, texts)
    parser = xml.sax.make_parser()
    parser.setContentHandler(handler)
    handler.setDocumentLocator(parser)  # expat's reader is its own locator; feed() does not set one
    size = path.stat().st_size
    try:
        with open(path, "rb") as handle, tqdm(total=size, unit="B", unit_scale=True, desc=path.name,
                                               disable=size < 50_000_000) as progress:
            while block := handle.read(1 << 20):
                parser.feed(block)
                progress.update(len(block))
            parser.close()
    except xml.sax.SAXParseException as error:
        raise RawDataError(f"{path}:{error.getLineNumber()}: malformed XML ({error.getMessage()})") from error
    return handler


def _rows(raw: Path, articles_file: str, truth_file: str, keep: Callable[[str], bool]) -> list[Example]:
    truth = _parse(raw / truth_file, keep, texts=False).truth
    articles = _parse(raw / articles_file, lambda ident: ident in truth, texts=True).articles
    missing = [ident for ident in truth if ident not in articles]
    if missing:
        raise RawDataError(f"{raw / articles_file}: {len(missing)} labelled articles have no text "
                           f"(first id {missing[0]}); the articles and ground-truth files do not match")
    return [Example(t.label, t.url, drop_tabs(articles[ident])) for ident, t in truth.items()]


def _corpus(part: str, files: dict[str, tuple[str, str]]) -> str:
    names = ", ".join(name for pair in files.values() for name in pair)
    return f"SemEval-2019 Task 4 hyperpartisan news, {part} part ({names}), published at {PUBLISHED_AT}"


def convert_byarticle(raw: Path) -> Splits:
    """HN from the by-article part: train from its training articles (less texts of the pool), pool from its test
    articles.
    """
    raw = Path(raw)
    require_files(raw, [n for pair in BYARTICLE.values() for n in pair], _corpus("by-article", BYARTICLE))
    candidates = _rows(raw, *BYARTICLE["train"], keep=lambda ident: True)
    pool = _rows(raw, *BYARTICLE["test"], keep=lambda ident: True)
    pool_texts = {row.text for row in pool}
    train = [row for row in candidates if row.text not in pool_texts]
    attack, dev, note = split_attack_dev(pool)
    return Splits(train, attack, dev, [
        f"by-article part: train = the {len(candidates)} training articles less {len(candidates) - len(train)} "
        f"whose text is also a test article's; pool = the {len(pool)} test articles", note])


def convert_bypublisher(raw: Path) -> Splits:
    """HN from the by-publisher part: every tenth training article (by id) for train, the test articles as the pool."""
    raw = Path(raw)
    require_files(raw, [n for pair in BYPUBLISHER.values() for n in pair], _corpus("by-publisher", BYPUBLISHER))
    train = _rows(raw, *BYPUBLISHER["train"], keep=lambda ident: int(ident) % EVERY_N_IN_TRAINING == 0)
    pool = _rows(raw, *BYPUBLISHER["test"], keep=lambda ident: True)
    attack, dev, note = split_attack_dev(pool)
    return Splits(train, attack, dev, [
        f"by-publisher part: train = the {len(train)} training articles whose id is a multiple of "
        f"{EVERY_N_IN_TRAINING}; pool = the {len(pool)} test articles", note])
