"""PR2 reproduces BODEGA's split row for row (../shared/data/README.md), and the CLI writes it."""
from __future__ import annotations

from pathlib import Path

import pytest

from bodega.cli import main
from bodega.data.converters.common import RawDataError
from bodega.data.converters.pr2 import convert
from bodega.data.tsv import Example, read_tsv

RAW = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "raw" / "PR2"
needs_raw = pytest.mark.skipif(not RAW.exists(), reason=f"SemEval-2020 Task 11 corpus not present at {RAW}")


def _readme_rows(raw: Path) -> tuple[list[Example], list[Example]]:
    """The README's rule, written out independently: (train rows, pool rows in pool order)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for line in (raw / "train-task1-SI.labels").read_text(encoding="utf-8").splitlines():
        if line.strip():
            article, begin, end = line.split("\t")
            spans.setdefault(article, []).append((int(begin), int(end)))
    keyed = []
    for article in spans:
        text = (raw / "train-articles" / f"article{article}.txt").read_text(encoding="utf-8")
        start = 0
        for line in text.split("\n"):
            if line:
                label = int(any(b < start + len(line) and e > start for b, e in spans[article]))
                keyed.append(((-label, article, start), Example(label, f"SemEval2020T11-{article}",
                                                                line.replace("\t", ""))))
            start += len(line) + 1
    ordered = [row for _, row in sorted(keyed, key=lambda pair: pair[0])]
    test = [row for row in ordered if row.id[-1] in "49"]
    train = [row for row in ordered if row.id[-1] not in "49"]
    return train, test


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    out = tmp_path_factory.mktemp("PR2")
    assert main(["data", "prepare", "--task", "PR2", "--raw", str(RAW), "--out", str(out)]) == 0
    return {name: read_tsv(out / f"{name}.tsv") for name in ("train", "attack", "dev")}


@needs_raw
def test_sizes_match_the_paper(prepared):
    sizes = {name: (len(rows), sum(r.label for r in rows)) for name, rows in prepared.items()}
    assert sizes == {"train": (12_675, 3_654), "attack": (416, 123), "dev": (3_320, 976)}


@needs_raw
def test_same_rows_as_the_readme_rule(prepared):
    train, pool = _readme_rows(RAW)
    assert len(pool) == 3_736 and len(pool) // 400 == 9
    assert prepared["train"] == train
    assert prepared["attack"] == pool[::9]
    for i, row in enumerate(prepared["attack"]):
        assert row == pool[i * 9]
    assert prepared["dev"] == [row for i, row in enumerate(pool) if i % 9]


@needs_raw
def test_test_articles_end_in_4_or_9(prepared):
    assert all(r.id[-1] not in "49" for r in prepared["train"])
    assert all(r.id[-1] in "49" for r in prepared["attack"] + prepared["dev"])
    assert len({r.id for rows in prepared.values() for r in rows}) == 357


def _write_corpus(raw: Path, articles: dict[str, str], labels: list[tuple[str, int, int]]) -> None:
    (raw / "train-articles").mkdir(parents=True)
    for article, text in articles.items():
        (raw / "train-articles" / f"article{article}.txt").write_text(text, encoding="utf-8")
    (raw / "train-task1-SI.labels").write_text("".join(f"{a}\t{b}\t{e}\n" for a, b, e in labels),
                                              encoding="utf-8")


def test_overlap_rule_and_unlabelled_articles(tmp_path):
    text = "First line.\n\nSecond\tline here.\nThird line."
    _write_corpus(tmp_path, {"1001": text, "1002": "Not labelled at all.", "1004": "Test line."},
                  [("1001", 13, 16), ("1004", 0, 1)])  # span inside "Second"
    splits = convert(tmp_path)
    assert [(r.label, r.text) for r in splits.train] == [(1, "Secondline here."), (0, "First line."),
                                                         (0, "Third line.")]
    assert [r.id for r in splits.attack + splits.dev] == ["SemEval2020T11-1004"]


def test_span_touching_a_line_end_does_not_overlap(tmp_path):
    _write_corpus(tmp_path, {"7": "abc\ndef"}, [("7", 3, 4)])  # covers only the newline
    assert [r.label for r in convert(tmp_path).train] == [0, 0]


def test_labelled_article_without_text_is_an_error(tmp_path):
    _write_corpus(tmp_path, {}, [("55", 0, 3)])
    with pytest.raises(RawDataError, match="article 55 is labelled"):
        convert(tmp_path)


def test_malformed_label_line_names_file_and_line(tmp_path):
    _write_corpus(tmp_path, {"1": "x"}, [("1", 0, 1)])
    with open(tmp_path / "train-task1-SI.labels", "a", encoding="utf-8") as handle:
        handle.write("1\tzero\tone\n")
    with pytest.raises(RawDataError, match=r"train-task1-SI.labels:2"):
        convert(tmp_path)


def test_missing_corpus_says_where_it_is_published(tmp_path, capsys):
    assert main(["data", "prepare", "--task", "PR2", "--raw", str(tmp_path / "nope"),
                 "--out", str(tmp_path / "out")]) == 2
    message = capsys.readouterr().err
    assert "SemEval-2020 Task 11" in message and "propaganda.qcri.org" in message
