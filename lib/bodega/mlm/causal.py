"""Word candidates from a causal LM's left context: one forward pass gives every position's.

Why: the packaged Gemma-3-270M predicts a masked word from its left context better than
the fitted MiniLM head predicts it from both sides (``book/data/mlm_recovery.csv``). A
causal LM's output at token ``j - 1`` is its distribution over token ``j``, so a single
forward pass over the text proposes candidates for every word at once. Candidates are
whole-word tokens of two or more ASCII letters: SentencePiece pieces ``▁`` + letters for a
word after a space, letters alone for a word at the start or right after punctuation (the
piece kind the word itself begins with) that are English words (a stopword, or known to
WordNet with its inflections; :func:`english_word`). A word that does not begin at a token
boundary gets no candidates; the first word is predicted from the beginning-of-text token.

The GGUF-converted Gemma tokenizer in the resource folder is a Unigram model whose
scores are BPE merge ranks, so it cuts common words into pieces ("▁ev" "il");
:func:`bodega.gguf_tokenizer.bpe_tokenizer_json` rebuilds the BPE merges from those ranks,
which restores the model's own segmentation ("▁evil"). The rebuilt tokenizer is cached
under the project cache, keyed by the original's sha256.

The candidates of every text are kept in the persistent :mod:`bodega.mlm.substitute_cache`:
every victim, training and scenario of a task attacks the same texts, and a cell whose texts
are all there loads neither the LM nor WordNet.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Sequence

from bodega import gguf_tokenizer
from bodega.gguf_tokenizer import BPE_VERSION, TOKENIZER_REPAIRED, bpe_tokenizer_json, is_rank_scored_unigram
from bodega.mlm.model import Candidate
from bodega.mlm.substitute_cache import SubstituteCache, default_substitute_cache
from bodega.text import TokenizedText

WORD_START = "▁"
"""SentencePiece's mark of a piece that begins after a space (GPT-2's byte-level BPE uses "Ġ")."""


def load_causal_tokenizer(model_dir: str | Path, cache: str | Path | None = None):
    """The model folder's fast tokenizer, with a rank-scored Unigram model rebuilt as BPE (cached)."""
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    model_dir = Path(model_dir)
    original = AutoTokenizer.from_pretrained(model_dir, trust_remote_code=False)
    if (model_dir / TOKENIZER_REPAIRED).exists():  # rebuilt in place already: no 15 MB of JSON to read again
        return original
    spec = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    if not is_rank_scored_unigram(spec):
        return original
    from bodega.io import atomic_write_json, file_sha256
    from bodega.resources import cache_dir

    key = file_sha256(model_dir / "tokenizer.json")[:16] + "-v" + BPE_VERSION
    folder = Path(cache) if cache else cache_dir() / "bpe-tokenizers" / key
    path = folder / "tokenizer.json"
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, bpe_tokenizer_json(spec))
    return PreTrainedTokenizerFast(tokenizer_file=str(path), bos_token=original.bos_token,
                                   eos_token=original.eos_token, pad_token=original.pad_token,
                                   unk_token=original.unk_token)


def word_token_positions(text: TokenizedText, offsets: list[tuple[int, int]], tokens: list[str],
                         marker: str = WORD_START) -> list[int | None]:
    """For each word, the index of the token the word begins with, or None when it begins mid-token."""
    by_start: dict[int, int] = {}
    for j, ((start, end), token) in enumerate(zip(offsets, tokens)):
        if end <= start:
            continue
        word_start = start + 1 if token.startswith(marker) and text.text[start:start + 1].isspace() else start
        by_start.setdefault(word_start, j)
    return [by_start.get(w.start) for w in text.words]


def english_word() -> Callable[[str], bool]:
    """Whether a word is English: a stopword, or a lower-case WordNet lemma of three or more letters or
    an inflection of one.

    A SentencePiece piece after a space is not always a word ("▁te" begins "text"); this
    keeps fragments out of the substitutes.
    """
    from functools import lru_cache

    from bodega.text import default_stopwords
    from bodega.wordnet import english_wordnet

    stopwords = default_stopwords()

    @lru_cache(maxsize=None)
    def known(word: str) -> bool:
        lower = word.lower()
        if lower in stopwords:
            return True
        if len(lower) < 3:  # two-letter WordNet entries are mostly notes and symbols ("te", "la")
            return False
        wordnet = english_wordnet()
        base = wordnet.morphy(lower)
        # a lower-case lemma: abbreviations and symbols ("ENE", "Na", "Te") and names do not count
        return base is not None and any(lemma.name() == base for synset in wordnet.synsets(base)
                                        for lemma in synset.lemmas())

    return known


class CausalLMCandidates:
    """Whole-word candidates for every word of a text from a causal LM's left context.

    Offers the masked LM's two calls (``word_predictions`` for BERT-ATTACK,
    ``masked_predictions`` for BAE); both give the same left-context predictions, which
    never see the word they replace.
    """

    def __init__(self, path: str | Path, max_length: int = 1024, threads: int | None = None,
                 tokenizer_cache: str | Path | None = None, lexicon: Callable[[str], bool] | None = None,
                 cache: "SubstituteCache | bool" = True):
        self.path = str(path)
        self.lexicon = lexicon  # default: english_word(), made on first use
        self.max_length = max_length
        self.threads = threads
        self.tokenizer_cache = tokenizer_cache
        # the persistent candidates (True: the default file); a caller's own lexicon has no identity to key them by
        self._cache = cache if lexicon is None else False
        self._cache_identity: list | None = None
        self._loaded = None

    def _load(self):
        if self._loaded is None:
            import torch
            from transformers import AutoModelForCausalLM

            if self.threads:
                torch.set_num_threads(self.threads)
            tokenizer = load_causal_tokenizer(self.path, self.tokenizer_cache)
            from bodega.precision import attack_precision

            model = AutoModelForCausalLM.from_pretrained(self.path, dtype=attack_precision().dtype,
                                                         trust_remote_code=False).eval()
            vocab = tokenizer.get_vocab()
            marker = WORD_START if sum(t.startswith(WORD_START) for t in vocab) else "Ġ"
            spaced, bare = [], []
            for token, i in vocab.items():
                if i >= model.config.vocab_size:
                    continue
                if token.startswith(marker) and len(token) > 2 and token[1:].isalpha() and token[1:].isascii():
                    spaced.append(i)
                elif len(token) > 1 and token.isalpha() and token.isascii():
                    bare.append(i)
            kinds = {True: torch.tensor(sorted(spaced)), False: torch.tensor(sorted(bare))}
            if self.lexicon is None:
                self.lexicon = english_word()
            self._loaded = (torch, tokenizer, model, kinds, marker)
        return self._loaded

    def warm_up(self) -> None:
        """Load the causal LM and its word-token tables now, so that the first example is not charged for it;
        with the persistent cache, they load on the first text the cache lacks (a cell of cached texts never
        loads them)."""
        if self._substitute_cache() is None:
            self._load()

    def _substitute_cache(self) -> SubstituteCache | None:
        """The persistent candidate cache, opened on first use; None when off."""
        if self._cache is True:
            self._cache = default_substitute_cache() or False
        return self._cache or None

    def _cache_key(self, cache: SubstituteCache, text: TokenizedText, k: int) -> bytes:
        """What the candidates depend on: the model, the word list (stopwords, WordNet), this code, the
        libraries, the precision and the settings; and the text with its word spans."""
        if self._cache_identity is None:
            from importlib.metadata import version

            from bodega.io import file_sha256
            from bodega.resources import nltk_data_dir
            from bodega.text import default_stopwords

            code = [file_sha256(source) for source in (Path(__file__), Path(gguf_tokenizer.__file__))]
            self._cache_identity = [
                "causal-lm", cache.folder_identity(self.path),
                cache.folder_identity(nltk_data_dir() / "corpora" / "wordnet"),
                sorted(default_stopwords()), code, BPE_VERSION,
                [version(name) for name in ("torch", "transformers", "tokenizers", "nltk")]]
        from bodega.precision import attack_precision

        identity = [*self._cache_identity, attack_precision().name, self.max_length, k]
        return cache.key(identity, text.text, [(w.start, w.end) for w in text.words])

    def word_predictions(self, text: TokenizedText, k: int) -> list[list[Candidate]]:
        """Up to ``k`` distinct (case-insensitive) whole-word candidates per word, by log-probability (from the
        persistent cache where it holds them)."""
        cache = self._substitute_cache()
        if cache is None:
            return self._predict(text, k)
        key = self._cache_key(cache, text, k)
        found = cache.get(key)
        if found is None:
            found = self._predict(text, k)
            cache.put(key, found)
        return found

    def _predict(self, text: TokenizedText, k: int) -> list[list[Candidate]]:
        torch, tokenizer, model, kinds, marker = self._load()
        encoded = tokenizer(text.text, truncation=True, max_length=self.max_length, return_offsets_mapping=True,
                            return_tensors="pt")
        offsets = [tuple(o) for o in encoded.pop("offset_mapping")[0].tolist()]
        tokens = tokenizer.convert_ids_to_tokens(encoded["input_ids"][0].tolist())
        starts = word_token_positions(text, offsets, tokens, marker)
        wanted = [(w, j) for w, j in enumerate(starts) if j is not None and j > 0]
        out: list[list[Candidate]] = [[] for _ in text.words]
        if not wanted:
            return out
        with torch.inference_mode():
            keep = torch.tensor([j - 1 for _, j in wanted])
            logits = model(**encoded, logits_to_keep=keep).logits[0].float()
            logprobs = logits.log_softmax(-1)
        for row, (w, j) in enumerate(wanted):
            allowed = kinds[tokens[j].startswith(marker)]
            scores, order = logprobs[row, allowed].topk(min(len(allowed), 4 * k))
            found: list[Candidate] = []
            seen: set[str] = set()
            for token, score in zip(tokenizer.convert_ids_to_tokens(allowed[order].tolist()), scores.tolist()):
                word = token[1:] if token.startswith(marker) else token
                if word.lower() in seen or not self.lexicon(word):
                    continue
                seen.add(word.lower())
                found.append(Candidate(word, score))
                if len(found) == k:
                    break
            out[w] = found
        return out

    def masked_predictions(self, text: TokenizedText, positions: Sequence[int], k: int) -> dict[int, list[Candidate]]:
        """The same left-context candidates, for the words in ``positions`` (one forward pass)."""
        predictions = self.word_predictions(text, k)
        return {i: predictions[i] for i in positions if predictions[i]}
