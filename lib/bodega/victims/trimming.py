"""Cut every text after its 512th token of the victim's tokenizer, as BODEGA does before attacking.

BODEGA's ``trim`` (``victims/transformer.py``) tokenises a text with the victim's
pretrained tokenizer, special tokens included, and when the encoding has more than 512
entries keeps the characters up to the end offset of entry 512. Entry 0 is the leading
special token ([CLS] for BERT's WordPiece, <bos> for Gemma), so entry 512 is the 512th
word piece and the cut falls right after it. The same arithmetic has one quirk that is
kept here because it is what ran: a WordPiece text of exactly 511 pieces has [SEP] (end
offset 0) at entry 512, so it is cut to the empty string. FC rows are trimmed part by
part (evidence, then claim) and joined again with `` ~ ``, as BODEGA trims its two
columns. This module encodes each text once without truncation through the tokenizer's
Rust backend, so it also reports how many tokens the untrimmed text had.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from bodega.errors import BodegaError
from bodega.tasks import PAIR_SEPARATOR, get_task, join_pair, split_pair
from bodega.victims.base import MAX_TOKENS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Trimmed:
    """A text as it is attacked and scored; ``tokens`` counts the untrimmed text (pairs: both parts; None where
    texts are cut by characters)."""

    text: str
    trimmed: bool
    tokens: int | None


class Trimmer:
    """BODEGA's 512-token cut with one pretrained (fast) tokenizer; ``name`` says which, for records."""

    def __init__(self, tokenizer, name: str, max_tokens: int = MAX_TOKENS):
        from tokenizers import Tokenizer

        if not getattr(tokenizer, "is_fast", False):
            raise BodegaError(f"trimming needs a fast (Rust) tokenizer for offsets; {name!r} is not one")
        backend = Tokenizer.from_str(tokenizer.backend_tokenizer.to_str())
        backend.no_truncation()
        backend.no_padding()
        self._backend = backend
        self.name = name
        self.max_tokens = max_tokens
        # What the cut depends on, whatever path the tokenizer was loaded from: its serialised vocabulary,
        # normaliser and pre-tokeniser (truncation and padding, set per call by transformers, are off).
        self.tokenizer_sha256 = hashlib.sha256(backend.to_str().encode("utf-8")).hexdigest()

    def describe(self) -> str:
        """The cut in words, for summaries and tables."""
        return f"first {self.max_tokens} tokens of {self.name}"

    def identity(self) -> dict:
        """The cut as a resumed run compares it: the token limit and the tokenizer's content hash."""
        return {"max_tokens": self.max_tokens, "tokenizer_sha256": self.tokenizer_sha256}

    def _cut(self, texts: list[str]) -> list[tuple[str, bool, int]]:
        out = []
        for text, encoding in zip(texts, self._backend.encode_batch(texts)):
            offsets, special = encoding.offsets, encoding.special_tokens_mask
            tokens = len(offsets) - sum(special)
            if len(offsets) > self.max_tokens:
                cut = text[:offsets[self.max_tokens][1]]
                out.append((cut, cut != text, tokens))
            else:
                out.append((text, False, tokens))
        return out

    def trim(self, texts: list[str], task: str) -> list[Trimmed]:
        """Each text as BODEGA attacks it; pair tasks trim evidence and claim apart."""
        if not get_task(task).pair:
            return [Trimmed(*cut) for cut in self._cut(texts)]
        pairs = [split_pair(text) for text in texts]
        evidence = self._cut([e for e, _ in pairs])
        claims = self._cut([c for _, c in pairs])
        result = []
        for text, (e_cut, e_trim, e_n), (c_cut, c_trim, c_n) in zip(texts, evidence, claims):
            joined = join_pair(e_cut, c_cut) if PAIR_SEPARATOR in text else c_cut
            result.append(Trimmed(joined, e_trim or c_trim, e_n + c_n))
        return result


MAX_CHARACTERS = 20_000
"""Where a text is cut for a victim without a trimming tokenizer (a ``py:`` victim without ``--trim-tokenizer``,
a wrapped function): far beyond 512 tokens (some 2,500 characters of English), and short enough that attacking and
scoring it stay within memory (an untrimmed text of 65 KB needed 2.3 GB, one of 1 MB more than 23 GB)."""


class CharacterTrimmer:
    """The cut of a victim without a trimming tokenizer: each text (pair tasks: each part) after
    :data:`MAX_CHARACTERS` characters, with one warning line saying how many were cut."""

    def __init__(self, name: str, max_characters: int = MAX_CHARACTERS):
        self.name = name
        self.max_characters = max_characters

    def describe(self) -> str:
        """The cut in words, for summaries and tables."""
        return f"first {self.max_characters:,} characters ({self.name} has no trimming tokenizer)"

    def identity(self) -> dict:
        """The cut as a resumed run compares it."""
        return {"max_characters": self.max_characters}

    def trim(self, texts: list[str], task: str) -> list[Trimmed]:
        """Each text cut after :attr:`max_characters` characters (pair tasks: evidence and claim apart)."""
        pair = get_task(task).pair
        result = []
        for text in texts:
            parts = split_pair(text) if pair and PAIR_SEPARATOR in text else (text,)
            cut = [part[:self.max_characters] for part in parts]
            joined = join_pair(*cut) if len(cut) == 2 else cut[0]
            result.append(Trimmed(joined, joined != text, None))
        cut_count = sum(t.trimmed for t in result)
        if cut_count:
            log.warning("%d of %d texts are longer than %s characters and are cut there: %s has no trimming "
                        "tokenizer (give one with --trim-tokenizer or trim_tokenizer=)", cut_count, len(texts),
                        f"{self.max_characters:,}", self.name)
        return result


def trimmer_for(victim) -> Trimmer | CharacterTrimmer:
    """The victim's trimming tokenizer (attribute ``trim_tokenizer``: a fast tokenizer), else the cut after
    :data:`MAX_CHARACTERS` characters: no victim is given a text of unbounded length."""
    tokenizer = getattr(victim, "trim_tokenizer", None)
    if tokenizer is None:
        return CharacterTrimmer(str(getattr(victim, "name", None) or type(victim).__name__))
    return Trimmer(tokenizer, getattr(victim, "trim_tokenizer_name", type(tokenizer).__name__))


def trimming_counts(texts: list[str], task: str, trimmer: Trimmer) -> dict[str, int]:
    """How many of ``texts`` BODEGA's cut shortens, and how many it empties (the 511-piece quirk)."""
    cuts = trimmer.trim(texts, task)
    return {"rows": len(texts), "trimmed": sum(c.trimmed for c in cuts),
            "emptied": sum(c.trimmed and not c.text.replace(PAIR_SEPARATOR, "").strip() for c in cuts),
            "max_tokens": max((c.tokens for c in cuts), default=0)}
