"""Semantic models: BLEURT code on a tiny random BLEURT, encoders on a tiny random BERT, the cpu default."""
from __future__ import annotations

import numpy as np
import pytest

from bodega.resources import MissingResourceError, resolve

PAIRS = [("the cat sat on the mat", "the cat sat on the mat"),
         ("the cat sat on the mat", "a dog stood on the rug"),
         ("short", "a much longer candidate sentence with many more words in it"),
         ("the cat sat on the mat", "the cat sat on the mat")]


def _vocab():
    try:
        return resolve("wordpiece-vocab").path / "vocab.txt"
    except MissingResourceError as error:
        pytest.skip(f"MiniLM package (WordPiece vocabulary) not installed: {error}")


@pytest.fixture(scope="module")
def tiny_bleurt(tmp_path_factory):
    import torch
    from bleurt_pytorch import BleurtConfig, BleurtForSequenceClassification, BleurtTokenizer

    vocab = _vocab()
    folder = tmp_path_factory.mktemp("tiny-bleurt")
    torch.manual_seed(0)
    config = BleurtConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=128)
    BleurtForSequenceClassification(config).save_pretrained(folder)
    BleurtTokenizer(vocab_file=str(vocab)).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory):
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    vocab = _vocab()
    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=6, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=128)
    BertModel(config).save_pretrained(folder)
    BertTokenizerFast(vocab_file=str(vocab)).save_pretrained(folder)
    return folder


def test_paper_profile_loads_bleurt_and_batching_does_not_change_scores(tiny_bleurt):
    from bodega.scoring import load_semantic_model
    from bodega.scoring.semantic import Bleurt

    model = load_semantic_model("paper", path=tiny_bleurt)
    assert isinstance(model, Bleurt) and model.name == "bleurt-20"
    together = model.score(PAIRS)
    one_by_one = np.concatenate([model.score([pair]) for pair in PAIRS])
    assert together.shape == (4,) and np.isfinite(together).all()
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)
    assert together[0] == together[3]  # duplicates are scored once


def test_bleurt_batches_by_length():
    from bodega.scoring.semantic import length_batches

    texts = ["aa", "a", "aaaa", "aaa", "aaaaa"]
    assert length_batches(texts, 2) == [[4, 2], [3, 0], [1]]


def test_encoder_models_on_a_tiny_bert(tiny_bert):
    from bodega.scoring.semantic import BertScoreF1, Encoder, SbertCosine

    encoder = Encoder(tiny_bert, batch_size=2)
    for model in (SbertCosine(encoder), BertScoreF1(encoder, layer=5)):
        scores = model.score(PAIRS)
        assert scores[0] == pytest.approx(1.0, abs=1e-5)  # identical texts
        assert (scores[1:3] < 0.9999).all()
        np.testing.assert_allclose(scores, np.concatenate([model.score([p]) for p in PAIRS]), atol=1e-5)


def test_cpu_default_reads_homoglyphs_as_letters():
    from bodega.scoring import load_semantic_model, semantic_model_name

    try:
        model = load_semantic_model("cpu")
    except MissingResourceError as error:
        pytest.skip(f"MPNet not installed: {error}")
    assert model.name == semantic_model_name("cpu") == "mpnet-cosine-folded"
    plain = "b. r. ambedkar was alive in 1990."
    scores = model.score([(plain, "b. r. ambedkar wɑs ɑⅼіvе іn 1990."), (plain, plain),
                          (plain, "the burj khalifa is in exile.")])
    assert scores[0] == pytest.approx(1.0, abs=1e-5)
    assert scores[1] == pytest.approx(1.0, abs=1e-5)
    assert scores[2] < 0.5


def test_unknown_model_name_is_rejected():
    from bodega.scoring.semantic import build_semantic_model

    with pytest.raises(KeyError, match="unknown semantic model"):
        build_semantic_model("bleurt-tiny")


def test_missing_bleurt_checkpoint_says_what_to_do(tmp_path):
    from bodega.scoring import load_semantic_model

    with pytest.raises(MissingResourceError, match="BODEGA_BLEURT_20"):
        load_semantic_model("paper", path=tmp_path)


def test_mpnet_candidates_read_their_own_encoder(tiny_bert, monkeypatch):
    """score-agreement's new candidates: the MPNet cosine takes the mpnet role, the others MiniLM's."""
    from bodega.scoring import semantic
    from bodega.report.semantic_agreement import DEFAULT_CANDIDATES

    assert {"mpnet-cosine", "mpnet-cosine-folded"} <= set(DEFAULT_CANDIDATES)
    assert [semantic.encoder_role(n) for n in ("mpnet-cosine-folded", "sbert-cosine", "bertscore-f1",
                                               "character", "bleurt-20")] == ["mpnet", "minilm", "minilm", None, None]
    asked = []
    monkeypatch.setenv("BODEGA_MPNET", str(tiny_bert))  # a tiny encoder stands in for the 110M one
    import bodega.resources as resources

    original = resources.resolve
    monkeypatch.setattr(resources, "resolve", lambda role, **kw: asked.append(role) or original(role, **kw))
    model = semantic.build_semantic_model("mpnet-cosine-folded")
    # an encoder other than the package's pinned one is named by its source and content in every output
    assert asked == ["mpnet"] and model.name.startswith("mpnet-cosine-folded@environment:")
    scores = model.score(PAIRS)
    assert scores[0] == pytest.approx(1.0, abs=1e-5) and scores[1] < 0.9999
