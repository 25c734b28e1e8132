"""Victim GloVeBiLSTM: BODEGA's BiLSTM whose embeddings start from GloVe, trained, saved and reloaded as the BiLSTM."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import torch
from victims_fixtures import write_task_data

from bodega.profiles import get_profile
from bodega.resources import resolve
from bodega.victims import load_victim, train_victim
from bodega.victims.bilstm import BiLSTMVictim, GloveBiLSTMVictim


@pytest.fixture(scope="module")
def glove():
    try:
        folder = resolve(get_profile("smoke").models["GloVeBiLSTM"]).path
    except Exception as error:  # noqa: BLE001 - any failure to resolve means the vectors are not installed
        pytest.skip(f"GloVe vectors not installed ({error}); bodega resources install --profile cpu")
    words = pd.read_parquet(folder / "glove_6B_index.parquet")["index"].tolist()
    return {word: row for row, word in enumerate(words)}, np.load(folder / "glove_6B_50d_emb.npy", mmap_mode="r")


def test_whole_word_tokens_start_at_their_glove_vectors_and_the_rest_at_random(glove):
    rows, vectors = glove
    victim = GloveBiLSTMVictim.create("PR2", "smoke", seed=0)
    vocab = victim.tokenizer.get_vocab()
    table = victim.model.embedding.weight.detach()
    assert table.shape[1] == 50
    for word in ("the", "vaccine", "election"):
        assert torch.equal(table[vocab[word]], torch.from_numpy(np.array(vectors[rows[word]], dtype=np.float32)))
    piece = next(token for token in vocab if token.startswith("##") and token[2:] in rows)
    assert not torch.equal(table[vocab[piece]], torch.from_numpy(np.array(vectors[rows[piece[2:]]],
                                                                              dtype=np.float32)))
    assert not table[victim.tokenizer.pad_token_id].any()  # padding stays zero


def test_the_bilstm_keeps_its_random_start(glove):
    plain, started = BiLSTMVictim.create("PR2", "smoke", seed=0), GloveBiLSTMVictim.create("PR2", "smoke", seed=0)
    assert plain.model.embedding.weight.shape[1] == 32
    assert plain.model.config["embedding_dim"] == 32 and started.model.config["embedding_dim"] == 50


def test_trains_saves_and_reloads_with_its_hash(glove, tmp_path):
    data = write_task_data(tmp_path / "data", n_train=64, n_eval=12)
    out = train_victim("PR2", "GloVeBiLSTM", data, tmp_path / "victim", profile="smoke", epochs=1, progress=False)
    info = json.loads((out / "victim.json").read_text())
    assert info["kind"] == "GloVeBiLSTM" and info["name"] == "PR2-GloVeBiLSTM"
    assert info["training"]["base_role"] == "glove-6b-50d" and "GloVe" in info["embeddings"]
    victim = load_victim(out, profile="smoke")
    assert victim.weights_hash == info["weights_hash"]
    assert victim.model.embedding.weight.shape[1] == 50
