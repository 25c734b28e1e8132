"""PR2 from the SemEval-2020 Task 11 release (Propaganda Techniques Corpus), with BODEGA's rules.

A sentence is a non-empty line of an article; it is positive when it overlaps any
propaganda span. Only articles named in the labels file are used. Articles whose id
ends in 4 or 9 form the test pool, ordered positives first, then negatives, each by
(article id, start offset); the reference iterated over Python sets, whose order is
not reproducible, so this order is the documented one.
"""
from __future__ import annotations

from pathlib import Path

from bodega.data.converters.common import RawDataError, require_files
from bodega.data.splits import Splits, split_attack_dev
from bodega.data.tsv import Example

CORPUS = ("SemEval-2020 Task 11 (Propaganda Techniques Corpus) training set: train-articles/ and "
          "train-task1-SI.labels, published at https://propaganda.qcri.org/semeval2020-task11/")
LABELS_FILE = "train-task1-SI.labels"


def _read_spans(path: Path) -> dict[str, list[tuple[int, int]]]:
    spans: dict[str, list[tuple[int, int]]] = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            try:
                article, begin, end = parts[0], int(parts[-2]), int(parts[-1])
            except (ValueError, IndexError) as error:
                raise RawDataError(f"{path}:{number}: expected 'article<TAB>begin<TAB>end', "
                                   f"found {line.strip()!r}") from error
            spans.setdefault(article, []).append((begin, end))
    return spans


def _article_sentences(text: str) -> list[tuple[int, int, str]]:
    sentences, offset = [], 0
    for line in text.split("\n"):
        if line:
            sentences.append((offset, offset + len(line), line))
        offset += len(line) + 1
    return sentences


def convert(raw: Path) -> Splits:
    """PR2 from SemEval-2020 Task 11: each sentence of the training articles, positive when a propaganda span
    overlaps it.
    """
    raw = Path(raw)
    require_files(raw, [LABELS_FILE, "train-articles"], CORPUS)
    spans = _read_spans(raw / LABELS_FILE)
    positives: list[tuple[str, int, Example]] = []
    negatives: list[tuple[str, int, Example]] = []
    for article, article_spans in spans.items():
        path = raw / "train-articles" / f"article{article}.txt"
        if not path.exists():
            raise RawDataError(f"{raw / LABELS_FILE}: article {article} is labelled but {path} is missing")
        text = path.read_text(encoding="utf-8")
        for begin, end, sentence in _article_sentences(text):
            propaganda = any(not (s_begin >= end or s_end <= begin) for s_begin, s_end in article_spans)
            example = Example(int(propaganda), f"SemEval2020T11-{article}", sentence.replace("\t", ""))
            (positives if propaganda else negatives).append((article, begin, example))
    ordered = sorted(positives, key=lambda r: r[:2]) + sorted(negatives, key=lambda r: r[:2])
    train = [ex for article, _, ex in ordered if article[-1] not in "49"]
    pool = [ex for article, _, ex in ordered if article[-1] in "49"]
    attack, dev, note = split_attack_dev(pool)
    return Splits(train, attack, dev, [f"{len(spans)} labelled articles; " + note])
