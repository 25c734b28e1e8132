"""The 512-token cut against a literal transcription of BODEGA's ``trim`` (victims/transformer.py, 2dda5a6).

BODEGA's reader calls ``trim`` on each column with the victim's pretrained tokenizer
(bert-base-uncased's WordPiece for BERT and the BiLSTM; here the same uncased vocabulary
as MiniLM ships it); FC evidence and claim are separate columns, trimmed apart and joined
with `` ~ `` afterwards.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from attack_fakes import OnesSemantic
from bodega.data import Example, read_tsv, write_tsv
from bodega.io import read_jsonl
from bodega.tasks import PAIR_SEPARATOR
from bodega.victims.trimming import Trimmer

DATA = Path(__file__).resolve().parents[1] / "data"
MAX_LEN = 512


def bodega_trim(text: str, tokenizer) -> str:
    """BODEGA's ``trim``, line for line."""
    offsets = tokenizer(text, truncation=True, max_length=MAX_LEN + 10, return_offsets_mapping=True)['offset_mapping']
    limit = len(text)
    if len(offsets) > MAX_LEN:
        limit = offsets[512][1]
    return text[:limit]


def bodega_row(text: str, tokenizer, pair: bool) -> str:
    """What BODEGA's reader and ``dataset_mapping_pairs`` make of one row."""
    if not pair:
        return bodega_trim(text, tokenizer)
    evidence, claim = text.split(PAIR_SEPARATOR, 1)
    return bodega_trim(evidence, tokenizer) + PAIR_SEPARATOR + bodega_trim(claim, tokenizer)


@pytest.fixture(scope="module")
def wordpiece():
    from bodega.resources import resolve
    from bodega.victims.bilstm import wordpiece_tokenizer

    return wordpiece_tokenizer(resolve("wordpiece-vocab").path)


def _rows(task: str, n: int) -> list[str]:
    path = DATA / task / "attack.tsv"
    if not path.exists():
        pytest.skip(f"{path} not prepared (bodega data prepare)")
    rows = [r.text for r in read_tsv(path)]
    return sorted(rows, key=len, reverse=True)[:n] + rows[:n]  # the longest (trimmed) and ordinary rows


@pytest.mark.parametrize("task", ["HN", "RD", "FC", "PR2"])
def test_real_rows_are_cut_where_bodega_cuts_them(task, wordpiece):
    texts = _rows(task, 25)
    ours = Trimmer(wordpiece, "bert-base-uncased WordPiece").trim(texts, task)
    expected = [bodega_row(t, wordpiece, task == "FC") for t in texts]
    assert [t.text for t in ours] == expected
    assert [t.trimmed for t in ours] == [e != t for e, t in zip(expected, texts)]
    if task == "HN":
        assert sum(t.trimmed for t in ours) >= 20  # the longest news articles exceed 512 pieces


def test_token_counts_and_the_cut_point(wordpiece):
    words = [f"word{i}" for i in range(700)]  # "word123" -> several pieces
    text = " ".join(words)
    cut = Trimmer(wordpiece, "wp").trim([text], "PR2")[0]
    pieces = wordpiece.tokenize(text)
    assert cut.tokens == len(pieces) and cut.trimmed
    assert len(wordpiece.tokenize(cut.text)) == MAX_LEN  # kept exactly 512 pieces
    assert text.startswith(cut.text) and cut.text == bodega_trim(text, wordpiece)


def test_bodegas_511_piece_quirk_is_reproduced(wordpiece):
    """At exactly 511 pieces entry 512 is [SEP] with end offset 0: BODEGA's text becomes empty."""
    text = " ".join(["credible"] * 511)
    assert len(wordpiece.tokenize(text)) == 511
    assert bodega_trim(text, wordpiece) == ""
    cut = Trimmer(wordpiece, "wp").trim([text, text + " more"], "PR2")
    assert cut[0].text == "" and cut[0].trimmed
    assert cut[1].text == text + " more"  # 512 pieces: cut after the last one, nothing lost
    assert not cut[1].trimmed


def test_gemma_tokenizer_cuts_as_bodega_with_its_bos():
    from transformers import AutoTokenizer

    from bodega.resources import resolve

    folder = Path(resolve("gemma3-270m").location)
    if not (folder / "tokenizer.json").exists():
        pytest.skip("Gemma-3-270M tokenizer not converted (bodega resources check)")
    tokenizer = AutoTokenizer.from_pretrained(folder)
    texts = _rows("HN", 10)
    ours = Trimmer(tokenizer, "gemma").trim(texts, "HN")
    assert [t.text for t in ours] == [bodega_trim(t, tokenizer) for t in texts]
    assert any(t.trimmed for t in ours)


class _TrimmingKeywordVictim:
    """A keyword victim that declares the WordPiece tokenizer as its trimming tokenizer."""

    name, task, weights_hash = "kw-trim", "HN", "kw-trim-v1"

    def __init__(self, tokenizer):
        self.trim_tokenizer = tokenizer
        self.trim_tokenizer_name = "bert-base-uncased WordPiece"
        self.longest = 0

    def predict_proba(self, texts):
        self.longest = max([self.longest, *(len(t) for t in texts)])
        p1 = np.array([0.9 if "evil" in t else 0.1 for t in texts])
        return np.stack([1 - p1, p1], axis=1)

    def predict(self, texts):
        return self.predict_proba(texts).argmax(axis=1)


def test_runner_attacks_and_scores_the_trimmed_text(tmp_path, wordpiece):
    from bodega.attacks import run_attack

    long_text = "the evil plan " + " ".join(["news"] * 600) + " tail words never seen"
    data = tmp_path / "data"
    data.mkdir()
    write_tsv(data / "attack.tsv", [Example(1, "long", long_text), Example(1, "short", "an evil plan")])
    victim = _TrimmingKeywordVictim(wordpiece)
    summary = run_attack("HN", victim, data, "DeepWordBug", tmp_path / "run", semantic=OnesSemantic(),
                         progress=False).run
    records = list(read_jsonl(tmp_path / "run" / "records.jsonl"))
    trimmed = bodega_trim(long_text, wordpiece)
    assert records[0]["trimmed"] and records[0]["original"] == trimmed and "tail" not in trimmed
    assert records[0]["original_tokens"] == len(wordpiece.tokenize(long_text))
    assert not records[1]["trimmed"] and records[1]["original"] == "an evil plan"
    assert victim.longest <= len(trimmed) + 20  # no query carried the words beyond the cut
    assert summary.trimmed == 1 and summary.trim.startswith("first 512 tokens")


def test_trimming_command_counts_cut_rows_per_task_and_tokenizer(tmp_path, capsys):
    import json

    from bodega.cli import main

    folder = tmp_path / "data" / "HN"
    folder.mkdir(parents=True)
    write_tsv(folder / "attack.tsv", [Example(1, "long", " ".join(["news"] * 600)), Example(0, "short", "a text"),
                                      Example(0, "quirk", " ".join(["credible"] * 511))])
    out = tmp_path / "trimming.json"
    assert main(["trimming", "--data", str(tmp_path / "data"), "--tasks", "HN", "--out", str(out)]) == 0
    counts = json.loads(out.read_text())["tokenizers"]["bert-base-uncased WordPiece"]["tasks"]["HN"]
    assert counts == {"rows": 3, "trimmed": 2, "emptied": 1, "max_tokens": 600}
    capsys.readouterr()
