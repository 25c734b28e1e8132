"""Data and tiny models for the victims tests (not a test module itself)."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from bodega.data import Example, write_tsv

NEUTRAL = ("the council met on tuesday to discuss the budget for schools roads and parks while "
           "residents asked questions about local services and the weather").split()
LOADED = "traitors destroy lies corrupt evil enemies disgrace shameful".split()


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    """One torch thread, set before the module's training fixtures: on a shared machine two
    spinning OpenMP threads per process slow training down by an order of magnitude."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def _text(rng: random.Random, label: int, pair: bool) -> str:
    words = rng.choices(NEUTRAL, k=rng.randint(4, 14))
    if label:
        for word in rng.sample(LOADED, 2):
            words.insert(rng.randrange(len(words) + 1), word)
    text = " ".join(words)
    return f"{' '.join(rng.choices(NEUTRAL, k=6))} ~ {text}" if pair else text


def write_task_data(folder: Path, n_train: int = 400, n_eval: int = 40, pair: bool = False,
                    seed: int = 0) -> Path:
    """train/attack/dev TSVs where label 1 rows carry two 'loaded' words: learnable in a few steps."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    for split, n in (("train", n_train), ("attack", n_eval), ("dev", n_eval)):
        rows = [Example(i % 2, f"{split}-{i}", _text(rng, i % 2, pair)) for i in range(n)]
        write_tsv(folder / f"{split}.tsv", rows)
    return folder


def mixed_texts() -> list[str]:
    """Short, empty, long (> 512 tokens) and ordinary texts, for batch-independence checks."""
    return ["evil traitors", "", "the council met " * 300, "residents asked about the weather and parks",
            "x", "corrupt lies destroy the budget"]


def assert_batch_independent(victim, texts: list[str], tolerance: float = 1e-5) -> None:
    together = victim.predict_proba(texts)
    alone = np.stack([victim.predict_proba([text])[0] for text in texts])
    shuffled_order = list(reversed(range(len(texts))))
    shuffled = victim.predict_proba([texts[i] for i in shuffled_order])[np.argsort(shuffled_order)]
    assert together.shape == (len(texts), 2)
    np.testing.assert_allclose(together.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(together, alone, atol=tolerance, rtol=0)
    np.testing.assert_allclose(together, shuffled, atol=tolerance, rtol=0)


def tiny_bert_dir(folder: Path) -> Path:
    """A randomly initialised 2-layer BERT with the MiniLM WordPiece tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    from bodega.resources import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=512)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_gemma_dir(folder: Path, seed: int = 0) -> Path:
    """A randomly initialised 2-layer Gemma (dimensions multiple of 64, as 4-bit blocks need)."""
    import torch
    from transformers import AutoTokenizer, GemmaConfig, GemmaForCausalLM

    from bodega.resources import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    torch.manual_seed(seed)
    config = GemmaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                         pad_token_id=tokenizer.pad_token_id)
    GemmaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_mpnet_dir(folder: Path) -> Path:
    """A randomly initialised 2-layer MPNet (the cpu profile's BERT-role class) with the mpnet tokenizer."""
    import torch
    from transformers import AutoTokenizer, MPNetConfig, MPNetForSequenceClassification

    from bodega.resources import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("mpnet").location)
    torch.manual_seed(0)
    config = MPNetConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=514, num_labels=2)
    MPNetForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
