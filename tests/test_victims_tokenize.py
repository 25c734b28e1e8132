"""The victims' direct Rust tokenising gives exactly the tensors of the Hugging Face wrapper."""
from __future__ import annotations

from pathlib import Path

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
