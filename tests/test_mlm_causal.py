"""Causal-LM word candidates: the rebuilt BPE tokenizer, word-to-token mapping, a tiny random Gemma, attacks."""
from __future__ import annotations

import numpy as np
import pytest

from attack_fakes import SENTENCES, KeywordVictim
from bodega.errors import BodegaError
from bodega.attacks import Goal, get_attacker
from bodega.gguf_tokenizer import bpe_tokenizer_json
from bodega.mlm.causal import CausalLMCandidates, load_causal_tokenizer, word_token_positions
from bodega.text import tokenize
from mlm_fakes import tiny_gemma, tiny_unigram_spec


@pytest.fixture(scope="module")
def gemma_dir(tmp_path_factory):
    return tiny_gemma(tmp_path_factory.mktemp("tiny-gemma") / "hf")


@pytest.fixture(scope="module")
def candidates(gemma_dir, tmp_path_factory):
    return CausalLMCandidates(gemma_dir, tokenizer_cache=tmp_path_factory.mktemp("bpe"))


def test_rank_scored_unigram_is_rebuilt_as_bpe(gemma_dir, tmp_path):
    text = "The evil enemy will attack our great nation."
    tokenizer = load_causal_tokenizer(gemma_dir, tmp_path / "bpe")
    assert (tmp_path / "bpe" / "tokenizer.json").exists()
    encoded = tokenizer(text, return_offsets_mapping=True)
    tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"])
    assert tokens == ["<bos>", "The", "▁evil", "▁enemy", "▁will", "▁attack", "▁our", "▁great", "▁nation", "."]
    assert encoded["offset_mapping"][2] == (3, 8)
    merges = bpe_tokenizer_json(tiny_unigram_spec())["model"]["merges"]
    assert not any("<" in left + right for left, right in merges)  # control and byte tokens never merge
    assert ["▁", "e"] in merges and merges.index(["▁", "e"]) < merges.index(["▁e", "v"])


def test_word_token_positions_only_at_token_starts():
    text = tokenize("The evil enemies attack.")
    tokens = ["<bos>", "The", "▁evil", "▁enem", "ies", "▁att", "ack", "."]
    offsets = [(0, 0), (0, 3), (3, 8), (8, 13), (13, 16), (16, 20), (20, 23), (23, 24)]
    assert word_token_positions(text, offsets, tokens) == [1, 2, 3, 5]
    glued = tokenize("(evil) plan")  # "evil" begins inside the token "(e"
    assert word_token_positions(glued, [(0, 0), (0, 2), (2, 5), (5, 6), (6, 11)],
                                ["<bos>", "(e", "vil", ")", "▁plan"]) == [None, 4]


def test_candidates_are_distinct_whole_words_of_the_right_kind(candidates):
    text = tokenize("The evil enemy will attack our great nation.")
    predictions = candidates.word_predictions(text, 5)
    assert predictions[0] and not any(c.token.startswith("▁") for c in predictions[0])  # predicted from <bos>
    for word, found in zip(text.words, predictions):
        assert 1 <= len(found) <= 5, word.text
        words = [c.token for c in found]
        assert len({w.lower() for w in words}) == len(words) and all(w.isalpha() for w in words)
        assert not {w.lower() for w in words} & {"ev", "evi", "ene", "dest", "vill"}  # fragments are no words
        assert all(w.isascii() and len(w) > 1 for w in words)
        assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)
    masked = candidates.masked_predictions(text, [2, 4], 5)
    assert masked == {2: predictions[2], 4: predictions[4]}
    assert candidates.word_predictions(text, 5) == predictions  # deterministic


def test_candidates_come_from_the_persistent_cache_without_loading_the_model(gemma_dir, tmp_path):
    from bodega.mlm.substitute_cache import SubstituteCache

    text = tokenize("The evil enemy will attack our great nation.")
    computed = CausalLMCandidates(gemma_dir, tokenizer_cache=tmp_path / "bpe", cache=False).word_predictions(text, 5)
    cache = SubstituteCache(tmp_path / "substitutes.sqlite")
    first = CausalLMCandidates(gemma_dir, tokenizer_cache=tmp_path / "bpe", cache=cache)
    first.warm_up()
    assert first._loaded is None  # with the cache, the model waits for a text the cache lacks
    assert first.word_predictions(text, 5) == computed and first._loaded is not None
    second = CausalLMCandidates(gemma_dir, tokenizer_cache=tmp_path / "bpe", cache=cache)
    assert second.word_predictions(text, 5) == computed  # exact scores back from the file
    assert second.masked_predictions(text, [2, 4], 5) == {2: computed[2], 4: computed[4]}
    assert second._loaded is None
    second.word_predictions(text, 3)  # other settings, other rows
    assert second._loaded is not None


def test_the_cache_key_follows_the_model_files_and_the_words(tmp_path):
    import os

    from bodega.mlm.substitute_cache import SubstituteCache

    cache = SubstituteCache(tmp_path / "substitutes.sqlite")
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "weights").write_bytes(b"one")
    before = cache.folder_identity(folder)
    assert cache.folder_identity(folder) == before
    (folder / "weights").write_bytes(b"two")
    os.utime(folder / "weights", ns=(1, 1))
    assert cache.folder_identity(folder) != before  # rehashed: its size and time changed
    assert SubstituteCache.key(["m"], "a b", [(0, 1), (2, 3)]) != SubstituteCache.key(["m"], "a b", [(0, 3)])
    assert SubstituteCache.key(["m"], "a b", [(0, 3)]) != SubstituteCache.key(["n"], "a b", [(0, 3)])


def test_english_word_lexicon():
    from bodega.mlm.causal import english_word

    known = english_word()
    assert known("phones") and known("Destroyed") and known("the")
    assert not known("te") and not known("vill")


def test_candidate_source_follows_the_profile():
    from bodega.attacks.recipes.masked_lm import CPU_CANDIDATES, candidate_source

    assert candidate_source("paper") == "masked-lm"
    assert candidate_source("cpu") == CPU_CANDIDATES
    assert candidate_source("paper", "causal-lm") == "causal-lm"
    with pytest.raises(BodegaError, match="candidates="):
        candidate_source("cpu", "wordnet")
    assert get_attacker("BERT-ATTACK", candidates="masked-lm", mlm_path="unused").options["candidates"] == "masked-lm"


@pytest.mark.parametrize("name", ["BERT-ATTACK", "BAE"])
def test_attackers_run_on_tiny_random_gemma(name, gemma_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("BODEGA_CACHE", str(tmp_path))
    # Short sentences: BODEGA's cap of 20% of the words would allow one change only.
    options = dict(candidates="causal-lm", causal_path=str(gemma_dir), max_change_rate=0.5)
    if name == "BAE":
        from mlm_fakes import tiny_bert

        options.update(encoder_path=str(tiny_bert(tmp_path / "enc", masked_lm=False)), similarity_threshold=0.0)
    attacker = get_attacker(name, **options)
    assert attacker.options["candidates"] == "causal-lm"
    victim = KeywordVictim()
    flipped = 0
    for i, text in enumerate(SENTENCES[:2]):
        decision = int(victim.predict([text])[0])
        result = attacker.attack(victim, text, Goal.untargeted(decision), np.random.default_rng(i))
        if result.success:
            flipped += 1
            assert int(victim.predict([result.adversarial])[0]) != decision
            assert len(tokenize(result.adversarial)) == len(tokenize(text))
    assert flipped >= 1


def test_the_converted_gemma_folder_is_repaired_in_place(gemma_dir, tmp_path):
    """bodega.resources rewrites a rank-scored Unigram tokenizer.json once, so every user of the folder
    (victims, perplexity, candidates) tokenizes whole words."""
    import json
    import shutil

    from transformers import AutoTokenizer

    from bodega.gguf_tokenizer import TOKENIZER_REPAIRED, repair_rank_scored_tokenizer

    folder = tmp_path / "hf"
    shutil.copytree(gemma_dir, folder)

    def model_type():
        return json.loads((folder / "tokenizer.json").read_text())["model"]["type"]

    assert model_type() == "Unigram"
    repair_rank_scored_tokenizer(folder)
    assert (folder / TOKENIZER_REPAIRED).exists() and model_type() == "BPE"
    assert AutoTokenizer.from_pretrained(folder).tokenize("The evil enemy") == ["The", "▁evil", "▁enemy"]
    before = (folder / "tokenizer.json").read_bytes()
    repair_rank_scored_tokenizer(folder)  # idempotent
    assert (folder / "tokenizer.json").read_bytes() == before
