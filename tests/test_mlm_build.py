"""The offline masked LM: training text, corruption, a build on tiny data, the recovery measure."""
from __future__ import annotations

import json

import numpy as np
import pytest

from bodega.data import Example, write_tsv
from bodega.mlm.corpus import example_sentences, split_sentences, task_sentences
from bodega.mlm.recovery import MaskedItem, draw_items, recovery
from mlm_fakes import tiny_bert

PR2_ROWS = ["The evil enemy will attack our great nation.", "Corrupt traitors lie to destroy us!",
            "The weather was mild and the market opened calmly.", "They say the plan would ruin the village.",
            "Officials said the report was released on Monday.", "Nobody believes the lies of the press anymore."]


def _data(root):
    write_tsv(root / "PR2" / "train.tsv", [Example(i % 2, f"a{i}", t) for i, t in enumerate(PR2_ROWS * 4)])
    write_tsv(root / "PR2" / "dev.tsv", [Example(0, "d", t) for t in PR2_ROWS])
    write_tsv(root / "FC" / "train.tsv", [Example(1, "f", "Paris is in France. ~ Paris is in Spain.")])
    return root


def test_sentences_per_task(tmp_path):
    corpus = task_sentences(_data(tmp_path), "train")
    assert sorted(corpus) == ["FC", "PR2"]
    assert corpus["FC"] == ["Paris is in France.", "Paris is in Spain."]  # a pair gives its two sides
    assert len(corpus["PR2"]) == 24
    with pytest.raises(FileNotFoundError, match="bodega data prepare"):
        task_sentences(tmp_path / "nothing", "train")


def test_long_texts_are_cut_at_sentence_ends():
    text = " ".join(["This is sentence number one of a long article."] * 12) + "\nA new line starts here."
    parts = split_sentences(text)
    assert len(parts) == 13 and parts[-1] == "A new line starts here."
    assert example_sentences("HN", text) == parts
    assert example_sentences("PR2", "Short one.") == ["Short one."]


def test_mask_tokens_never_touches_special_positions():
    import torch

    from bodega.mlm.build import mask_tokens

    ids = torch.arange(1000, 1400).reshape(4, 100)
    special = torch.zeros_like(ids, dtype=torch.bool)
    special[:, 0] = special[:, -1] = True
    corrupted, chosen = mask_tokens(ids, special, 0.5, 103, 30522, torch.Generator().manual_seed(0))
    assert not chosen[special].any()
    assert torch.equal(corrupted[~chosen], ids[~chosen])
    masked = (corrupted == 103) & chosen
    assert 0.7 < masked.sum() / chosen.sum() < 0.9  # about 80% of the chosen become [MASK]


def test_build_writes_a_loadable_masked_lm(tmp_path, monkeypatch):
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from bodega.mlm import MLMConfig, build_mlm
    from bodega.resources import resolve

    monkeypatch.setenv("BODEGA_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("BODEGA_MINILM_MLM", raising=False)
    encoder = tiny_bert(tmp_path / "encoder", masked_lm=False)
    config = MLMConfig(sentences_per_task=30, mask_probability=0.5, epochs=10, batch_size=8, learning_rate=1e-2)
    out = build_mlm(_data(tmp_path / "data"), None, config, encoder_dir=encoder, progress=False)
    assert resolve("minilm-mlm").path == out  # the default output is where resolve looks
    info = json.loads((out / "build.json").read_text())
    assert info["sentences"] == {"FC": 2, "PR2": 24} and info["masked_positions"] > 0
    assert info["final_loss"] < info["first_loss"]
    model = AutoModelForMaskedLM.from_pretrained(out)
    bias = model.cls.predictions.bias.detach()
    assert torch.equal(model.cls.predictions.decoder.weight, model.bert.embeddings.word_embeddings.weight)
    # a WordPiece never seen in the text keeps its add-one log frequency, far below seen ones
    tokenizer = AutoTokenizer.from_pretrained(out)
    unseen, seen = tokenizer.convert_tokens_to_ids(["zebra", "the"])
    assert bias[unseen] == pytest.approx(bias[tokenizer.convert_tokens_to_ids("giraffe")])
    assert bias[unseen] < bias[seen] - 3
    assert not list(tmp_path.glob("cache/*.tmp"))


def test_draw_items_follows_the_rules():
    sentences = ["Too short here.", "The quick brown fox jumps over the lazy dog today."]
    items = draw_items(sentences, {"quick", "brown", "fox", "the", "lazy", "dog"}, 5, np.random.default_rng(0),
                       stopwords=frozenset({"the", "over"}))
    assert len(items) == 1
    item = items[0]
    assert item.word in {"quick", "brown", "fox", "lazy", "dog"}
    assert item.text[item.start:item.end].lower() == item.word
    assert item.masked("[MASK]").count("[MASK]") == 1


def test_recovery_counts_top_k():
    items = [MaskedItem("a cat sat", 2, 5, "cat"), MaskedItem("a dog ran", 2, 5, "dog")]

    def ranker(batch, k):
        return [["Cat"] + ["x"] * (k - 1), ["x"] * 5 + ["dog"] + ["y"] * (k - 6)]

    assert recovery(ranker, items) == {"top1": 0.5, "top10": 1.0}
    with pytest.raises(ValueError):
        recovery(ranker, [])


def test_tuning_changes_only_the_top_layers_and_the_head(tmp_path):
    import torch
    from transformers import AutoModelForMaskedLM

    from bodega.mlm.tune import TuneConfig, tune_mlm

    start = tiny_bert(tmp_path / "start")
    config = TuneConfig(tune_layers=1, sentences_per_task=30, mask_probability=0.5, batch_size=8, epochs=3,
                        head_learning_rate=1e-2, layer_learning_rate=1e-2, threads=1)
    out = tune_mlm(start, _data(tmp_path / "data"), tmp_path / "tuned", config, progress=False)
    info = json.loads((out / "build.json").read_text())
    assert info["stage"] == "tune" and info["steps"] > 0 and not info["stopped_at_time_box"]
    before, after = AutoModelForMaskedLM.from_pretrained(start), AutoModelForMaskedLM.from_pretrained(out)

    def weights(model, prefix):
        return torch.cat([p.flatten() for n, p in model.named_parameters() if n.startswith(prefix)])

    assert torch.equal(weights(before, "bert.encoder.layer.0."), weights(after, "bert.encoder.layer.0."))
    assert torch.equal(weights(before, "bert.embeddings."), weights(after, "bert.embeddings."))
    assert not torch.equal(weights(before, "bert.encoder.layer.1."), weights(after, "bert.encoder.layer.1."))
    assert not torch.equal(weights(before, "cls.predictions.transform."), weights(after, "cls.predictions.transform."))
