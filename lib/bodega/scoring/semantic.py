"""Semantic similarity models: one float per (reference, candidate) sentence pair.

``paper`` uses BLEURT-20 (through ``bleurt-pytorch``) as BODEGA does. BLEURT's
checkpoints cannot be installed offline, so ``cpu`` uses a default chosen by
agreement with human judgments of meaning preservation (see the book chapter
"Measuring meaning preservation" and :mod:`bodega.report.semantic_agreement`). Every model
deduplicates its inputs and runs them in batches of similar length; no model is
called once per pair. torch and transformers are imported only when a model loads.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

import numpy as np

from bodega.errors import BodegaError, UnknownNameError
from bodega.scoring.text import character_similarity

Pair = tuple[str, str]


class SemanticModel(Protocol):
    """Scores (reference, candidate) pairs; higher = closer in meaning (BODEGA clips to [0, 1])."""

    name: str

    def score(self, pairs: list[Pair]) -> np.ndarray:
        """One meaning score per (reference, candidate) pair, in the order given."""
        ...


def length_batches(texts: Sequence[str], batch_size: int) -> list[list[int]]:
    """Indices of ``texts`` grouped into batches of similar length (longest first), to limit padding."""
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def _progress(batches: list[list[int]], what: str):
    """Batches with a progress bar when there are enough of them to wait for."""
    from tqdm import tqdm

    return tqdm(batches, desc=what, unit="batch", disable=len(batches) < 20, leave=False)


@dataclass
class CharacterModel:
    """The character score (BODEGA's normalisation) used as a 'semantic' score: a baseline with no model."""

    name: str = "character"

    def score(self, pairs: list[Pair]) -> np.ndarray:
        """BODEGA's character similarity of each pair, standing in as a model-free semantic score."""
        return np.array([character_similarity(a, b) for a, b in pairs], dtype=np.float64)


@dataclass
class Encoder:
    """A transformers encoder (BERT class) giving token states of one layer for unique texts."""

    path: Path
    batch_size: int = 64
    max_length: int = 256
    precision: object = None  # a bodega.precision.Precision; None: fp32, BODEGA's reported numbers
    _tokenizer: object = field(default=None, repr=False)
    _model: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from transformers import AutoModel, AutoTokenizer

        from bodega.precision import FP32, cast_model

        self._tokenizer = AutoTokenizer.from_pretrained(str(self.path), trust_remote_code=False)
        self._model = cast_model(AutoModel.from_pretrained(str(self.path), trust_remote_code=False).eval(),
                                 self.precision or FP32)

    def token_states(self, texts: Sequence[str], layer: int) -> list[np.ndarray]:
        """Per text, an array (tokens, hidden) of layer ``layer`` (0 = embeddings), special tokens kept."""
        import torch

        out: list[np.ndarray | None] = [None] * len(texts)
        with torch.inference_mode():
            for batch in _progress(length_batches(texts, self.batch_size), "encoding"):
                encoded = self._tokenizer([texts[i] for i in batch], padding=True, truncation=True,
                                          max_length=self.max_length, return_tensors="pt")
                hidden = self._model(**encoded, output_hidden_states=True).hidden_states[layer]
                lengths = encoded["attention_mask"].sum(dim=1).tolist()
                for row, i in enumerate(batch):
                    out[i] = hidden[row, :lengths[row]].float().numpy()
        return out  # type: ignore[return-value]


def _unique(pairs: list[Pair], preprocess: Callable[[str], str] | None = None
            ) -> tuple[list[str], list[tuple[int, int]]]:
    """Distinct texts of all pairs (preprocessed once each) and each pair as indices into them."""
    index: dict[str, int] = {}
    for a, b in pairs:
        index.setdefault(a, len(index))
        index.setdefault(b, len(index))
    texts = list(index) if preprocess is None else [preprocess(t) for t in index]
    return texts, [(index[a], index[b]) for a, b in pairs]


@dataclass
class SbertCosine:
    """Cosine of mean-pooled last-layer states (the Sentence-BERT recipe of all-MiniLM-L6-v2)."""

    encoder: Encoder
    preprocess: Callable[[str], str] | None = None
    name: str = "sbert-cosine"

    def score(self, pairs: list[Pair]) -> np.ndarray:
        """Cosine of the mean-pooled last-layer states of the two texts of each pair (each text encoded once)."""
        if not pairs:
            return np.zeros(0)
        texts, index = _unique(pairs, self.preprocess)
        states = self.encoder.token_states(texts, layer=-1)
        vectors = np.stack([s.mean(axis=0) for s in states])
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        a, b = (np.array(side) for side in zip(*index))
        return np.einsum("ij,ij->i", vectors[a], vectors[b]).astype(np.float64)


@dataclass
class BertScoreF1:
    """BERTScore-style F1: greedy cosine matching of contextual token states, [CLS]/[SEP] excluded."""

    encoder: Encoder
    layer: int = 4
    preprocess: Callable[[str], str] | None = None
    name: str = "bertscore-f1"

    def score(self, pairs: list[Pair]) -> np.ndarray:
        """BERTScore F1 of each pair: greedy token matching of the chosen layer's states, special tokens left out."""
        if not pairs:
            return np.zeros(0)
        texts, index = _unique(pairs, self.preprocess)
        states = [s[1:-1] for s in self.encoder.token_states(texts, layer=self.layer)]
        states = [s / np.maximum(np.linalg.norm(s, axis=1, keepdims=True), 1e-12) for s in states]
        scores = np.empty(len(index))
        for k, (i, j) in enumerate(index):
            scores[k] = _greedy_f1(states[i], states[j])
        return scores


def _greedy_f1(reference: np.ndarray, candidate: np.ndarray) -> float:
    if len(reference) == 0 or len(candidate) == 0:
        return 1.0 if len(reference) == len(candidate) else 0.0
    similarity = reference @ candidate.T
    recall = similarity.max(axis=1).mean()
    precision = similarity.max(axis=0).mean()
    return float(2 * precision * recall / (precision + recall)) if precision + recall > 0 else 0.0


@dataclass
class Bleurt:
    """BLEURT (e.g. BLEURT-20) through bleurt-pytorch: a regression head over (reference, candidate)."""

    path: Path | str
    batch_size: int = 16
    max_length: int = 512
    name: str = "bleurt"
    _tokenizer: object = field(default=None, repr=False)
    _model: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from bleurt_pytorch import BleurtForSequenceClassification, BleurtTokenizer

        from bodega.resources import MissingResourceError

        try:
            self._tokenizer = BleurtTokenizer.from_pretrained(str(self.path))
            self._model = BleurtForSequenceClassification.from_pretrained(str(self.path)).eval()
        except (OSError, TypeError, ValueError, ImportError) as error:
            raise MissingResourceError(
                f"BLEURT could not be loaded from {self.path} ({type(error).__name__}: {str(error)[:200]}). "
                "Point BODEGA_BLEURT_20 (or --semantic-path) at a local BLEURT-20 folder, allow the "
                "model hub, or score with --profile cpu.") from error

    def score(self, pairs: list[Pair]) -> np.ndarray:
        """BLEURT-20's score of each distinct pair, batched by length."""
        import torch

        unique = list(dict.fromkeys(pairs))
        values: dict[Pair, float] = {}
        joined = [a + b for a, b in unique]
        with torch.inference_mode():
            for batch in _progress(length_batches(joined, self.batch_size), "BLEURT"):
                refs = [unique[i][0] for i in batch]
                cands = [unique[i][1] for i in batch]
                encoded = self._tokenizer(refs, cands, padding="longest", truncation=True,
                                          max_length=self.max_length, return_tensors="pt")
                logits = self._model(**encoded).logits.flatten().float().tolist()
                values.update({unique[i]: v for i, v in zip(batch, logits)})
        return np.array([values[p] for p in pairs], dtype=np.float64)


CPU_DEFAULT = "mpnet-cosine-folded"
"""The ``cpu`` profile's semantic model: of the encoder candidates, the one that agrees best with people on
the 321 judged dev pairs (``bodega score-agreement``; book: meaning.md)."""

BERTSCORE_LAYER = 5
"""MiniLM-L6 layer for BERTScore: the second-to-last, as BERTScore's authors chose for 6-layer DistilBERT."""

MODEL_NAMES = ("character", "character-folded", "sbert-cosine", "sbert-cosine-folded",
               "bertscore-f1", "bertscore-f1-folded", "mpnet-cosine", "mpnet-cosine-folded", "bleurt-20")


def encoder_role(name: str) -> str | None:
    """The resource role of the encoder a semantic model reads (None: it reads none): ``mpnet-*`` the
    110M all-mpnet-base-v2 (BERT-base size), the other encoder models MiniLM."""
    if name.startswith(("character", "bleurt")):
        return None
    return "mpnet" if name.startswith("mpnet-") else "minilm"


def build_semantic_model(name: str, *, encoder: Encoder | None = None, path: str | Path | None = None,
                         allow_hub: bool = False, precision=None) -> SemanticModel:
    """A semantic model by name; ``encoder`` (of :func:`encoder_role`'s role) lets several models share one load;
    ``precision`` (a resolved :class:`bodega.precision.Precision`; None: fp32) is the encoder's."""
    from bodega.resources import resolve
    from bodega.scoring.confusables import fold_confusables

    if name not in MODEL_NAMES:
        raise UnknownNameError(f"unknown semantic model {name!r}; choose one of {', '.join(MODEL_NAMES)}")
    folded = name.endswith("-folded")
    preprocess = fold_confusables if folded else None
    if name.startswith("character"):
        return FoldedCharacterModel(name) if folded else CharacterModel()
    if path is not None:
        from bodega.hf_folders import refuse_custom_code

        refuse_custom_code(path, "--semantic-path")
    if name == "bleurt-20":
        if precision is not None and precision.is_bf16:
            raise BodegaError("bleurt-20 runs in fp32 only; drop --precision bf16 or score with a MiniLM model")
        location = resolve("bleurt-20", allow_hub=allow_hub, path=path).location
        return Bleurt(location, name=name)
    base = name
    if encoder is None:
        resolved = resolve(encoder_role(name), path=path)
        encoder = Encoder(resolved.path, precision=precision)
        name += overridden(resolved)
    if base.startswith(("sbert-cosine", "mpnet-cosine")):
        return SbertCosine(encoder, preprocess=preprocess, name=name)
    return BertScoreF1(encoder, layer=BERTSCORE_LAYER, preprocess=preprocess, name=name)


def overridden(resolved) -> str:
    """How a semantic model's name records an encoder other than the package's pinned one: ``""`` for that one
    (checked on every load, :func:`bodega.resources.mpnet_dir`), else ``@<source>:<sha256 of the folder, 12>``
    for a folder given by ``--semantic-path`` (``explicit``) or ``BODEGA_MPNET``/``BODEGA_MINILM``
    (``environment``). The name goes into the summaries and the resume identity of ``bodega score``, so an
    override never passes for the default model, and scores of two models never resume into one another."""
    from bodega.resources import folder_sha256

    if resolved.source in ("package", "built"):
        return ""
    return f"@{resolved.source}:{folder_sha256(resolved.path)[:12]}"


@dataclass
class FoldedCharacterModel:
    """The character score after homoglyph folding: a model-free baseline for the folded encoders."""

    name: str = "character-folded"

    def score(self, pairs: list[Pair]) -> np.ndarray:
        """The character similarity of each pair after folding look-alike characters."""
        from bodega.scoring.confusables import fold_confusables

        return CharacterModel().score([(fold_confusables(a), fold_confusables(b)) for a, b in pairs])


def semantic_model_name(profile: str = "cpu") -> str:
    """Which semantic model a profile uses."""
    from bodega.profiles import get_profile

    role = get_profile(profile).models["semantic"]
    return CPU_DEFAULT if role == "cpu-default" else str(role)


def load_semantic_model(profile: str = "cpu", name: str | None = None,
                        path: str | Path | None = None, precision=None) -> SemanticModel:
    """The semantic model of a profile (``paper``: BLEURT-20; ``cpu``/``smoke``: the chosen default), in fp32
    unless ``precision`` says bf16 (``bodega score --precision bf16``)."""
    from bodega.profiles import get_profile

    chosen = name or semantic_model_name(profile)
    return build_semantic_model(chosen, path=path, allow_hub=get_profile(profile).allow_hub, precision=precision)
