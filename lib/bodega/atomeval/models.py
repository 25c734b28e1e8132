"""The models AtomEval uses besides the extractor: NLI, sentence similarity, perplexity.

Which model plays each role comes from the profile (:mod:`bodega.profiles`): ``nli`` (an MNLI
cross-encoder in ``paper``, none in ``cpu``), ``sentence-encoder`` (all-MiniLM-L6-v2, SBERT cosine)
and ``causal-lm`` (GPT-2 in ``paper``, Gemma-3-270M in ``cpu``). torch and transformers are
imported only when a model is built.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from bodega.errors import BodegaError


def _resolve(profile: str, role: str) -> str | None:
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    prof = get_profile(profile)
    resource = prof.models.get(role)
    if resource is None:
        return None
    return resolve(resource, allow_hub=prof.allow_hub).location


@dataclass
class NLIModel:
    """A 3-way (entailment / neutral / contradiction) sequence-pair classifier.

    The entailment column is found from the model's ``id2label`` (a label containing "entail");
    ``entailment_index`` overrides it for models whose labels are unnamed.
    """

    path: str | Path
    entailment_index: int | None = None
    batch_size: int = 16
    max_length: int = 256
    _tokenizer: object = field(default=None, repr=False)
    _model: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(str(self.path), trust_remote_code=False)
        self._model = AutoModelForSequenceClassification.from_pretrained(str(self.path), trust_remote_code=False).eval()
        if self.entailment_index is None:
            labels = {int(k): str(v).lower() for k, v in self._model.config.id2label.items()}
            hits = [i for i, name in labels.items() if "entail" in name and "not" not in name]
            if len(hits) != 1:
                raise BodegaError(f"{self.path}: cannot tell the entailment label from id2label={labels}; "
                                  "pass entailment_index")
            self.entailment_index = hits[0]

    def entailment(self, premises: Sequence[str], hypotheses: Sequence[str]) -> np.ndarray:
        """P(premise entails hypothesis) for each pair."""
        import torch

        out = []
        with torch.inference_mode():
            for start in range(0, len(premises), self.batch_size):
                encoded = self._tokenizer(list(premises[start:start + self.batch_size]),
                                          list(hypotheses[start:start + self.batch_size]), padding=True,
                                          truncation=True, max_length=self.max_length, return_tensors="pt")
                probs = torch.softmax(self._model(**encoded).logits.float(), dim=-1)
                out.append(probs[:, self.entailment_index].numpy())
        return np.concatenate(out) if out else np.zeros(0)


def load_nli(profile: str = "cpu") -> NLIModel | None:
    """The profile's NLI model, or None when the profile has none (``cpu``)."""
    location = _resolve(profile, "nli")
    return NLIModel(location) if location is not None else None


@dataclass
class PerplexityModel:
    """Per-text perplexity under a causal LM: exp of the mean next-token negative log-likelihood."""

    path: str | Path
    batch_size: int = 8
    max_length: int = 256
    _tokenizer: object = field(default=None, repr=False)
    _model: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(str(self.path), trust_remote_code=False)
        self._model = AutoModelForCausalLM.from_pretrained(str(self.path), trust_remote_code=False).eval()

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """Perplexity of each text under the causal LM (NaN for a text under two tokens)."""
        import torch

        values = []
        with torch.inference_mode():
            for text in texts:  # one at a time: no padding, so a value never depends on the batch
                ids = self._tokenizer(text, return_tensors="pt", truncation=True,
                                      max_length=self.max_length)["input_ids"]
                bos = self._tokenizer.bos_token_id
                if bos is not None and (ids.shape[1] == 0 or int(ids[0, 0]) != bos):
                    ids = torch.cat([torch.tensor([[bos]]), ids], dim=1)
                if ids.shape[1] < 2:
                    values.append(float("nan"))
                    continue
                logits = self._model(input_ids=ids).logits[:, :-1].float()
                nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
                values.append(float(torch.exp(nll)))
        return np.asarray(values, dtype=np.float64)


def load_perplexity(profile: str = "cpu") -> PerplexityModel:
    """The profile's causal LM as a :class:`PerplexityModel`."""
    location = _resolve(profile, "causal-lm")
    if location is None:
        raise BodegaError(f"profile {profile!r} has no causal-lm for perplexity; choose another --profile or "
                          "--no-surface")
    return PerplexityModel(location)


def load_similarity(profile: str = "cpu"):
    """SBERT cosine with the profile's sentence encoder (all-MiniLM-L6-v2 in every profile)."""
    from bodega.scoring.semantic import Encoder, SbertCosine

    location = _resolve(profile, "sentence-encoder")
    return SbertCosine(Encoder(Path(location)))
