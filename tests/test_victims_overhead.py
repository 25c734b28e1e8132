"""Overhead cuts in the victims change no number: direct tokenising, unpacked BiLSTM, padding-aware batches."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from victims_fixtures import mixed_texts, one_thread, tiny_bert_dir  # noqa: F401

from bodega.victims.bert import BertVictim
from bodega.victims.bilstm import BiLSTMClassifier, BiLSTMVictim, wordpiece_tokenizer

RAW = Path(__file__).resolve().parents[2] / "shared" / "data" / "raw"
ODD = ["", " ", "a ~ b", "ｆｕｌｌ ｗｉｄｔｈ café 中文 \t\n x", "don't STOP", "~", "evidence only ~ "]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, list[str]]:
    """Real PR2 sentences and FC evidence ~ claim pairs (the first 150 attack rows of each)."""
    raw = {"PR2": RAW / "PR2", "FC": RAW / "FC" / "FeverSymmetric"}
    if not all(folder.exists() for folder in raw.values()):
        pytest.skip(f"{RAW} lacks PR2 or FC/FeverSymmetric: no corpus to compare tokenisations on")
    from bodega.data import read_tsv
    from bodega.data.prepare import prepare

    out = tmp_path_factory.mktemp("tok-data")
    texts = {}
    for task in ("PR2", "FC"):
        prepare(task, raw[task], out / task)
        texts[task] = [row.text for row in read_tsv(out / task / "attack.tsv")][:150] + mixed_texts() + ODD
    return texts


def _victims(task: str, tmp_path: Path):
    from bodega.resources import resolve
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    wordpiece = wordpiece_tokenizer(resolve("wordpiece-vocab").path)
    yield BiLSTMVictim(BiLSTMClassifier(len(wordpiece), pad_id=wordpiece.pad_token_id), wordpiece, task, "bilstm")
    base = tiny_bert_dir(tmp_path / "tiny-bert")
    yield BertVictim(AutoModelForSequenceClassification.from_pretrained(base, num_labels=2),
                     AutoTokenizer.from_pretrained(base), task, "bert")


@pytest.mark.parametrize("task", ["PR2", "FC"])
def test_direct_tokenising_equals_the_wrapper(corpus, task, tmp_path):
    for victim in _victims(task, tmp_path):
        assert victim.direct_tokenizer
        texts = corpus[task]
        for size in (1, 5, 64):
            for start in range(0, len(texts), size):
                part = texts[start:start + size]
                direct = victim.tokenize(part)
                victim.direct_tokenizer = False
                wrapped = victim.tokenize(part)
                victim.direct_tokenizer = True
                assert set(direct) == set(wrapped), victim.name
                for key, tensor in wrapped.items():
                    assert direct[key].dtype == tensor.dtype and torch.equal(direct[key], tensor), \
                        (victim.name, task, key, part)


def test_direct_tokenising_truncates_to_512_tokens(tmp_path):
    victim = next(_victims("PR2", tmp_path))
    encoded = victim.tokenize(["word " * 2000, "short"])
    assert encoded["input_ids"].shape == (2, 512)
    assert encoded["attention_mask"].sum(dim=1).tolist() == [512, 3]


def test_unpadded_bilstm_batches_skip_packing_with_bit_identical_logits():
    from torch.nn.utils.rnn import pack_padded_sequence

    torch.manual_seed(0)
    model = BiLSTMClassifier(500).eval()
    generator = torch.Generator().manual_seed(0)
    with torch.inference_mode():
        for batch, length in ((1, 1), (1, 37), (4, 12), (16, 300)):
            ids = torch.randint(1, 500, (batch, length), generator=generator)
            lengths = torch.full((batch,), length)
            packed = pack_padded_sequence(model.embedding(ids), lengths, batch_first=True, enforce_sorted=False)
            _, (final, _) = model.lstm(packed)
            assert torch.equal(model(ids, lengths), model.linear(torch.cat([final[-2], final[-1]], dim=1)))


def test_encoder_batches_are_cut_by_padding_and_rows_stay_in_place(tmp_path):
    victim = list(_victims("PR2", tmp_path))[1]
    assert victim.max_padding is not None
    # Character order differs from token order here: one long word is few tokens, spaced letters many.
    texts = ["a b c d e f g h i j k l m n o p", "internationalisation", "x", "q r s t u v w",
             "the council met on tuesday " * 8, "", "notwithstanding"] * 3
    shapes = []
    original = victim.logits
    victim.logits = lambda batch: shapes.append(tuple(batch["input_ids"].shape)) or original(batch)
    together = victim.predict_proba(texts)
    victim.logits = original
    alone = np.stack([victim.predict_proba([text])[0] for text in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    lengths = victim.tokenize(texts)["attention_mask"].sum(dim=1).tolist()
    assert len(shapes) > 1 and sum(rows for rows, _ in shapes) == len(texts)
    assert sum(rows * width for rows, width in shapes) <= (1 + victim.max_padding) * sum(lengths) + max(lengths)
