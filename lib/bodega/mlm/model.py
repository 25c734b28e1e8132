"""Candidate words from a masked LM, for word spans of a text, batched over positions.

BERT-ATTACK reads the masked LM's predictions at every word of the *unmasked* text
(one forward pass for all positions); BAE masks one word at a time. Both use only
words that are a single WordPiece: a word split into several pieces gets no
candidates (BODEGA ran BERT-ATTACK without sub-word combinations), and only
candidates that are whole words (no ``##`` piece) are returned.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from bodega.text import TokenizedText


@dataclass(frozen=True)
class Candidate:
    token: str
    score: float  # the masked LM's logit


def resolve_masked_lm(profile: str = "cpu", path: str | Path | None = None) -> str:
    """The masked-LM folder (or hub id) of a profile: ``minilm-mlm`` on cpu, ``bert-base-uncased`` on paper."""
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    if path is not None:
        return str(path)
    chosen = get_profile(profile)
    role = chosen.models.get("masked-lm")
    if role is None:
        raise ValueError(f"profile {profile!r} has no masked LM; pass mlm_path=<folder>")
    return resolve(role, allow_hub=chosen.allow_hub).location


class MaskedLM:
    """A BERT-class masked LM, loaded on first use."""

    def __init__(self, path: str | Path, batch_size: int = 32, max_length: int = 512, threads: int | None = None):
        self.path = str(path)
        self.batch_size = batch_size
        self.max_length = max_length
        self.threads = threads
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            import torch
            from transformers import AutoModelForMaskedLM, AutoTokenizer

            if self.threads:
                torch.set_num_threads(self.threads)
            tokenizer = AutoTokenizer.from_pretrained(self.path)
            if not tokenizer.is_fast:
                raise ValueError(f"{self.path}: a fast tokenizer (tokenizer.json) is needed for word offsets")
            from bodega.precision import cast_model

            model = cast_model(AutoModelForMaskedLM.from_pretrained(self.path).eval())  # the attack's precision
            self._loaded = (torch, tokenizer, model)
        return self._loaded

    def warm_up(self) -> None:
        self._load()

    @property
    def mask_token(self) -> str:
        return self._load()[1].mask_token

    def _top(self, logits, k: int, tokenizer) -> list[Candidate]:
        scores, ids = logits.topk(k)
        return [Candidate(t, float(s)) for t, s in zip(tokenizer.convert_ids_to_tokens(ids.tolist()), scores)]

    def word_predictions(self, text: TokenizedText, k: int) -> list[list[Candidate]]:
        """Top-``k`` tokens at each word of the unmasked text; empty for multi-piece or truncated words."""
        torch, tokenizer, model = self._load()
        encoded = tokenizer(text.text, truncation=True, max_length=self.max_length, return_offsets_mapping=True,
                            return_tensors="pt")
        offsets = encoded.pop("offset_mapping")[0].tolist()
        special = set(tokenizer.all_special_ids)
        ids = encoded["input_ids"][0].tolist()
        pieces: list[list[int]] = [[] for _ in text.words]
        starts = [w.start for w in text.words]
        import bisect

        for position, ((start, end), token_id) in enumerate(zip(offsets, ids)):
            if token_id in special or end <= start:
                continue
            w = bisect.bisect_right(starts, start) - 1
            if w >= 0 and start < text.words[w].end:
                pieces[w].append(position)
        single = [(w, p[0]) for w, p in enumerate(pieces) if len(p) == 1]
        out: list[list[Candidate]] = [[] for _ in text.words]
        if not single:
            return out
        with torch.inference_mode():
            logits = model(**encoded).logits[0]
        for w, position in single:
            out[w] = self._top(logits[position], k, tokenizer)
        return out

    def masked_predictions(self, text: TokenizedText, positions: Sequence[int], k: int) -> dict[int, list[Candidate]]:
        """Top-``k`` fillers of one mask put in place of each word in ``positions``; one batch per chunk."""
        torch, tokenizer, model = self._load()
        out: dict[int, list[Candidate]] = {}
        positions = list(positions)
        with torch.inference_mode():
            for start in range(0, len(positions), self.batch_size):
                chunk = positions[start:start + self.batch_size]
                encoded = tokenizer([text.replace({i: tokenizer.mask_token}) for i in chunk], padding=True,
                                    truncation=True, max_length=self.max_length, return_tensors="pt")
                rows, cols = (encoded["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
                logits = model(**encoded).logits[rows, cols]
                for row, row_logits in zip(rows.tolist(), logits):
                    out[chunk[row]] = self._top(row_logits, k, tokenizer)
        return out
