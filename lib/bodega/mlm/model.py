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

from bodega.errors import BodegaError
from bodega.text import TokenizedText


@dataclass(frozen=True)
class Candidate:
    """A filler the model proposes for a masked word, with its logit."""

    token: str
    score: float  # the masked LM's logit


def profile_model(profile: str, role_key: str, path: str | Path | None, option: str, label: str) -> str:
    """``path`` when given, else where the profile's ``role_key`` model is (a folder, or a hub id where allowed)."""
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    if path is not None:
        return str(path)
    chosen = get_profile(profile)
    role = chosen.models.get(role_key)
    if role is None:
        raise BodegaError(f"profile {profile!r} has no {label}; pass {option}=<folder>")
    return resolve(role, allow_hub=chosen.allow_hub).location


def resolve_masked_lm(profile: str = "cpu", path: str | Path | None = None) -> str:
    """The masked-LM folder (or hub id) of a profile: ``minilm-mlm`` on cpu, ``bert-base-uncased`` on paper."""
    return profile_model(profile, "masked-lm", path, "mlm_path", "masked LM")


def load_masked_lm(path: str | Path, openattack_classes: bool = False, threads: int | None = None):
    """``(torch, tokenizer, model)`` of a masked-LM folder or hub id, the model in eval mode: the package's one loader.

    ``openattack_classes`` loads BERT's slow lower-casing ``BertTokenizer`` and
    ``BertForMaskedLM``, the classes OpenAttack 2.1.1's BERT-ATTACK and BAE load (so word
    pieces and token ids are the ones that ran); otherwise the Auto classes, with the
    fast tokenizer where the folder has one, cast to the attack's precision (OpenAttack's classes stay
    fp32, as they ran). ``threads`` sets torch's thread count first.
    """
    import torch

    if threads:
        torch.set_num_threads(threads)
    if openattack_classes:
        from transformers import BertForMaskedLM, BertTokenizer

        return torch, BertTokenizer.from_pretrained(str(path), do_lower_case=True), \
            BertForMaskedLM.from_pretrained(str(path)).eval()
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from bodega.precision import cast_model

    # in the attack's precision
    model = cast_model(AutoModelForMaskedLM.from_pretrained(str(path), trust_remote_code=False).eval())
    return torch, AutoTokenizer.from_pretrained(str(path), trust_remote_code=False), model


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
            loaded = load_masked_lm(self.path, threads=self.threads)
            if not loaded[1].is_fast:
                raise BodegaError(f"{self.path}: a fast tokenizer (tokenizer.json) is needed for word offsets")
            self._loaded = loaded
        return self._loaded

    def warm_up(self) -> None:
        """Load the masked LM now, so that the first example is not charged for it."""
        self._load()

    @property
    def mask_token(self) -> str:
        """The tokenizer's mask token (``[MASK]`` for BERT-class models)."""
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
