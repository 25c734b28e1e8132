"""Repair of GGUF-converted tokenizers: a Unigram vocabulary scored by BPE merge rank, rebuilt as BPE.

transformers converts the Gemma-3 GGUF vocabulary into a Unigram model whose scores are
really BPE merge ranks, so it cuts common words into pieces ("government" -> "g", "ov",
"ern", "ment"). Rebuilt as BPE (the SentencePiece-BPE rule: the adjacent pair whose join
ranks best merges first) it tokenizes as Gemma does. Model loading (:mod:`bodega.resources`)
repairs a converted folder once; :mod:`bodega.mlm.causal` rebuilds any other folder's
tokenizer into the cache. Pure JSON work: no torch, no transformers.
"""
from __future__ import annotations

import json
from pathlib import Path

from bodega.io import atomic_write_text

BPE_VERSION = "3"
"""Part of the cache key of a rebuilt tokenizer: a change to the rebuild must not reuse an old file."""
TOKENIZER_REPAIRED = "bodega-tokenizer-repaired"
"""Marker file of a folder whose ``tokenizer.json`` was checked (and rebuilt where needed)."""


def bpe_tokenizer_json(unigram: dict) -> dict:
    """A ``tokenizer.json`` with a BPE model rebuilt from a Unigram vocabulary scored by merge rank.

    Every split of a token into two vocabulary pieces becomes a merge ranked by the
    token's score (higher first), as SentencePiece's BPE applies them. Control, unused and byte tokens
    (``<...>`` names scored -1000 or 0) are never merged into.
    """
    vocab = unigram["model"]["vocab"]
    ids = {token: i for i, (token, _) in enumerate(vocab)}
    special = {a["content"] for a in unigram.get("added_tokens", [])}
    merges = []
    for i, (token, score) in enumerate(vocab):
        if len(token) < 2 or token in special or _control(token, score):
            continue
        for cut in range(1, len(token)):
            left, right = token[:cut], token[cut:]
            if left in ids and right in ids:
                merges.append((-score, i, ids[left], left, right))
    merges.sort()
    out = dict(unigram)
    out["model"] = dict(type="BPE", dropout=None, unk_token=vocab[unigram["model"].get("unk_id", 0)][0],
                        continuing_subword_prefix=None, end_of_word_suffix=None, fuse_unk=True,
                        byte_fallback=unigram["model"].get("byte_fallback", False), ignore_merges=False,
                        vocab=ids, merges=[[left, right] for *_, left, right in merges])
    return out


def is_rank_scored_unigram(spec: dict) -> bool:
    """Whether a ``tokenizer.json`` holds a Unigram model whose scores are BPE merge ranks."""
    return spec["model"]["type"] == "Unigram" and _rank_scored(spec["model"]["vocab"])


def _control(token: str, score: float) -> bool:
    """The GGUF's control, unused and byte tokens: ``<...>`` names scored -1000 or 0."""
    return token.startswith("<") and token.endswith(">") and score in (-1000.0, 0.0)


def _rank_scored(vocab: list) -> bool:
    """Scores that fall by one per id over most ordinary tokens: merge ranks, not log-probabilities.

    The GGUF gives byte tokens 0 and control and unused tokens -1000; ordinary tokens fall by one per id.
    """
    scores = [s for t, s in vocab if not _control(t, s) and s != 0.0][:1000]
    steps = [a - b == 1.0 for a, b in zip(scores, scores[1:])]
    return len(steps) > 0 and sum(steps) >= 0.9 * len(steps)


def repair_rank_scored_tokenizer(folder: Path) -> None:
    """Rewrite a GGUF-converted ``tokenizer.json`` whose Unigram scores are really BPE merge ranks as BPE.

    transformers converts the Gemma-3 GGUF vocabulary into a Unigram model scored by merge rank,
    which splits common words into fragments ("government" -> "g", "ov", "ern", "ment"); rebuilt
    as BPE it tokenizes as Gemma does. Done once per folder (a marker file records it).
    """
    marker = folder / TOKENIZER_REPAIRED
    if marker.exists() or not (folder / "tokenizer.json").exists():
        return
    spec = json.loads((folder / "tokenizer.json").read_text(encoding="utf-8"))
    if is_rank_scored_unigram(spec):
        atomic_write_text(folder / "tokenizer.json", json.dumps(bpe_tokenizer_json(spec), ensure_ascii=False))
    atomic_write_text(marker, "tokenizer.json checked (rank-scored Unigram rebuilt as BPE where found)\n")
