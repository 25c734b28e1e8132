"""How well a masked LM recovers a masked whole word: top-1 and top-k on held-out sentences.

One word per sentence is replaced by a single mask token (BAE's and BERT-ATTACK's use
of a masked LM: one token proposed per word) and the model's k best tokens are compared
with the word, case-insensitively. Only words that are one WordPiece can be recovered by
one token, so items are drawn from those; stopwords are left out by default, since an
attack never replaces them. The same items are given to every model compared.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from bodega.text import tokenize


@dataclass(frozen=True)
class MaskedItem:
    """A sentence with word ``word`` at ``start:end`` to be recovered."""

    text: str
    start: int
    end: int
    word: str

    def masked(self, mask: str) -> str:
        """The sentence with the word replaced by ``mask``."""
        return self.text[:self.start] + mask + self.text[self.end:]


def draw_items(sentences: Sequence[str], vocabulary: set[str], n: int, rng: np.random.Generator,
               stopwords: frozenset[str] = frozenset(), max_words: int = 60) -> list[MaskedItem]:
    """Up to ``n`` items, at most one per sentence, from sentences of 5..``max_words`` words."""
    order = rng.permutation(len(sentences))
    items: list[MaskedItem] = []
    for k in order:
        words = tokenize(sentences[k]).words
        if not 5 <= len(words) <= max_words:
            continue
        eligible = [w for w in words if w.text.isalpha() and w.text.lower() in vocabulary
                    and w.text.lower() not in stopwords]
        if not eligible:
            continue
        word = eligible[int(rng.integers(len(eligible)))]
        items.append(MaskedItem(sentences[k], word.start, word.end, word.text.lower()))
        if len(items) == n:
            break
    return items


def masked_lm_ranker(model_dir_or_model, tokenizer=None,
                     batch_size: int = 32) -> Callable[[list[MaskedItem], int], list[list[str]]]:
    """A function giving each item's ``k`` best single-token fillers from a BERT-class masked LM.

    The prediction head runs on the mask positions only.
    """
    import torch

    if isinstance(model_dir_or_model, str) or hasattr(model_dir_or_model, "__fspath__"):
        from bodega.mlm.model import load_masked_lm

        _, loaded_tokenizer, model = load_masked_lm(model_dir_or_model)
        tokenizer = tokenizer or loaded_tokenizer
    else:
        model = model_dir_or_model.eval()

    def rank(items: list[MaskedItem], k: int) -> list[list[str]]:
        out: list[list[str]] = []
        with torch.inference_mode():
            for i in range(0, len(items), batch_size):
                chunk = items[i:i + batch_size]
                encoded = tokenizer([it.masked(tokenizer.mask_token) for it in chunk], padding=True,
                                    truncation=True, max_length=256, return_tensors="pt")
                rows, cols = (encoded["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
                hidden = model.bert(**encoded).last_hidden_state[rows, cols]
                logits = model.cls(hidden)
                top = logits.topk(k, dim=-1).indices.tolist()
                tokens = {int(r): tokenizer.convert_ids_to_tokens(ids) for r, ids in zip(rows, top)}
                out.extend(tokens.get(j, []) for j in range(len(chunk)))
        return out

    return rank


def recovery(rank: Callable[[list[MaskedItem], int], list[list[str]]], items: list[MaskedItem],
             ks: tuple[int, ...] = (1, 10)) -> dict[str, float]:
    """Share of items whose word is among the top ``k`` fillers, for each ``k``."""
    if not items:
        raise ValueError("no items to measure recovery on")
    fillers = rank(items, max(ks))
    return {f"top{k}": float(np.mean([it.word in [f.lower() for f in found[:k]]
                                      for it, found in zip(items, fillers)])) for k in ks}


def tiny_random_ranker(vocab_dir, seed: int = 0):
    """The floor: a randomly initialised 2-layer, 32-wide ``BertForMaskedLM`` with the same vocabulary."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    tokenizer = AutoTokenizer.from_pretrained(vocab_dir, trust_remote_code=False)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64)
    return masked_lm_ranker(BertForMaskedLM(config), tokenizer)
