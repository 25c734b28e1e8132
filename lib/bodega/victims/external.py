"""Victims the package did not train: ``hf:PATH`` (a local transformers classifier folder) and
``py:module:factory`` or ``py:path/file.py:factory`` (a factory, loaded by :mod:`bodega.plugins`,
of any Python object with ``predict_proba(texts) -> [n, 2]``).

Both end up behind the same :class:`~bodega.victims.accounting.QueryAccountant`, trimming
and scoring as the package's own victims. Their identity (``weights_hash``) keys the
cache and a run folder's resume check: for a folder it is a hash of every file in it and
the chosen label; for a callable it is the content it runs (a plug-in's file and factory, a
function's source, an object's pickled state: :mod:`bodega.identity`) with the version
it names (a ``version`` attribute or ``version=``). A callable without a version or without a
stable identity is refused by the persistent cache and by a run folder that already holds records.
"""
from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np

from bodega.errors import BodegaError, MissingFileError
from bodega.hf_folders import refuse_custom_code
from bodega.plugins import PREFIX, build_plugin, is_plugin, plugin_identity
from bodega.tasks import get_task, split_pair
from bodega.victims.base import MAX_TOKENS, argmax_predictions, check_texts, hash_files
from bodega.victims.trimming import MAX_CHARACTERS

log = logging.getLogger(__name__)
HF_PREFIX = "hf:"
PREFIXES = (HF_PREFIX, PREFIX)
NON_CREDIBLE_NAMES = ("1", "label_1", "non-credible", "noncredible", "not credible", "fake", "false",
                      "propaganda", "hyperpartisan", "rumour", "rumor", "refuted", "unreliable")
"""Label names read as non-credible when ``positive_label`` is not given (case-insensitive)."""
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl")


def is_spec(victim: object) -> bool:
    """True for an ``hf:`` or ``py:`` victim string (a plain folder of ours is not a spec)."""
    return isinstance(victim, (str, Path)) and str(victim).startswith(PREFIXES)


def positive_index(id2label: dict, positive_label: str | int | None, where: str) -> int:
    """The class index meaning non-credible: the given label (name or index), else the one known name."""
    labels = {int(k): str(v) for k, v in id2label.items()}
    if sorted(labels) != [0, 1]:
        raise BodegaError(f"{where}: a binary classifier has labels 0 and 1, this one has {sorted(labels)}; "
                          "attack a two-class sequence classifier")
    if positive_label is not None:
        text = str(positive_label)
        if text.isdigit() and int(text) in labels:
            return int(text)
        matches = [i for i, name in labels.items() if name.lower() == text.lower()]
        if not matches:
            raise BodegaError(f"{where}: positive label {positive_label!r} is neither 0, 1 nor one of the "
                              f"config's labels {labels}")
        return matches[0]
    matches = [i for i, name in labels.items() if name.lower() in NON_CREDIBLE_NAMES]
    if len(matches) != 1:
        raise BodegaError(f"{where}: cannot tell which label means non-credible from id2label {labels}; "
                          "pass --positive-label NAME_OR_INDEX")
    return matches[0]


class HFFolderVictim:
    """A local ``AutoModelForSequenceClassification`` folder with its own tokenizer (used for trimming too)."""

    def __init__(self, path: str | Path, task: str, positive_label: str | int | None = None,
                 batch_size: int = 16, allow_pickle: bool = False, precision=None):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from bodega.precision import cast_model, resolve_precision

        self.path = Path(path).expanduser()
        if not (self.path / "config.json").is_file():
            raise MissingFileError(f"hf:{path}: no config.json there; give a folder written by "
                                    "save_pretrained (model and tokenizer)")
        if not allow_pickle and not any(self.path.glob("*.safetensors")):
            found = sorted(p.name for p in self.path.iterdir() if p.suffix in PICKLE_SUFFIXES)
            raise BodegaError(f"hf:{path}: no .safetensors weights"
                             f"{' (only ' + ', '.join(found) + ')' if found else ''}; "
                             "pickle weights can run code when loaded: convert them to safetensors "
                             "(model.save_pretrained(folder)) or pass --allow-pickle if you trust the folder")
        refuse_custom_code(self.path, "hf:")
        self.task = get_task(task).name
        self.name = f"hf:{self.path.name}"
        self.tokenizer = AutoTokenizer.from_pretrained(self.path, trust_remote_code=False)
        resolved = resolve_precision(precision)
        self.model = cast_model(AutoModelForSequenceClassification.from_pretrained(
            self.path, trust_remote_code=False, **({} if allow_pickle else {"use_safetensors": True})), resolved)
        self.model.eval()
        self.precision, self.kernels = resolved.name, resolved.kernels
        self.positive = positive_index(self.model.config.id2label, positive_label, f"hf:{path}")
        files = [p for p in self.path.rglob("*") if p.is_file() and not any(
            part.startswith(".") for part in p.relative_to(self.path).parts)]
        relative = ",".join(str(p.relative_to(self.path)) for p in sorted(files))
        self.weights_hash = hash_files(files, f"{relative}|positive={self.positive}")
        self.batch_size = batch_size
        self.max_length = min(MAX_TOKENS, int(getattr(self.tokenizer, "model_max_length", MAX_TOKENS)))
        if not getattr(self.tokenizer, "is_fast", False):
            log.warning("%s: its tokenizer is not a fast one (no offsets), so texts are cut after %s characters "
                        "instead of 512 tokens", self.name, f"{MAX_CHARACTERS:,}")
        self._torch = torch

    @property
    def trim_tokenizer(self):
        """The folder's tokenizer for trimming, or None when it is slow (no offsets to trim by)."""
        return self.tokenizer if getattr(self.tokenizer, "is_fast", False) else None

    @property
    def trim_tokenizer_name(self) -> str:
        """How run.json names the trimming tokenizer."""
        return f"the tokenizer of {self.name}"

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """Probabilities in BODEGA's column order (column 1 is the folder's non-credible label)."""
        texts = check_texts(texts)
        out = np.zeros((len(texts), 2), dtype=np.float64)
        pair = get_task(self.task).pair
        for start in range(0, len(texts), self.batch_size):
            part = texts[start:start + self.batch_size]
            pairs = [split_pair(text) for text in part] if pair else []
            args = ([e for e, _ in pairs], [c for _, c in pairs]) if pair else (part,)
            batch = self.tokenizer(*args, truncation=True, max_length=self.max_length, padding=True,
                                   return_tensors="pt")
            with self._torch.inference_mode():
                probs = self._torch.softmax(self.model(**batch).logits.float(), dim=-1).numpy()
            out[start:start + len(part), 1] = probs[:, self.positive]
            out[start:start + len(part), 0] = probs[:, 1 - self.positive]
        return out

    def predict(self, texts: list[str]) -> np.ndarray:
        """The decision (0 or 1) per text."""
        return argmax_predictions(self.predict_proba(texts))


class CallableVictim:
    """Any object with ``predict_proba``; checked on every call for the [n, 2] shape."""

    def __init__(self, obj, spec: str, task: str, version: str | None = None, trim_tokenizer=None,
                 identity: str | None = None):
        self.obj = obj
        self.task = get_task(task).name
        self.name = spec
        version = version if version is not None else getattr(obj, "version", None)
        self.version = None if version is None else str(version)
        self.precision = str(getattr(obj, "precision", "fp32"))  # the object computes in its own precision
        self.batch_invariant = bool(getattr(obj, "batch_invariant", False))  # the object's word (prefetching)
        # What the object runs (see bodega.identity) and its version: never the name it is given.
        self.identity = identity
        self.weights_hash = (hashlib.sha256(f"{identity}@{self.version}".encode()).hexdigest()
                             if self.version is not None and identity else "")
        if self.version is not None and not identity:
            log.warning("%s: no stable identity (its source or state cannot be read), so its predictions are not "
                        "cached and a kept run cannot resume; define it in a file or module", spec)
        self.trim_tokenizer = trim_tokenizer if trim_tokenizer is not None else getattr(obj, "trim_tokenizer", None)
        self.trim_tokenizer_name = f"the trimming tokenizer given for {spec}"

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """The object's probabilities, refused unless they have one row of two per text."""
        texts = check_texts(texts)
        answer = self.obj.predict_proba(texts)
        try:
            probs = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise BodegaError(f"{self.name}: predict_proba returned {type(answer).__name__} that is not numbers "
                              f"({error}); it must return one row [P(credible), P(non-credible)] of floats per "
                              "text") from None
        if probs.shape != (len(texts), 2):
            raise BodegaError(f"{self.name}: predict_proba returned shape {probs.shape} for {len(texts)} texts; "
                              "it must return one row [P(credible), P(non-credible)] per text")
        return probs

    def predict(self, texts: list[str]) -> np.ndarray:
        """The decision (0 or 1) per text."""
        return argmax_predictions(self.predict_proba(texts))


def open_victim(victim, task: str, profile: str = "cpu", positive_label: str | int | None = None,
                version: str | None = None, trim_tokenizer: str | None = None, allow_pickle: bool = False,
                precision=None):
    """A victim from a folder trained here, ``hf:PATH``, ``py:module:factory`` or ``py:path/file.py:factory``.

    ``trim_tokenizer`` (a tokenizer folder) sets the trimming tokenizer of a ``py:`` victim;
    without one, and without a ``trim_tokenizer`` attribute, its texts are not trimmed.
    ``allow_pickle`` lets an ``hf:`` folder load pickle weights (refused by default: loading
    a pickle can run code). ``precision`` (fp32, bf16, auto; None: fp32) applies to folders; a ``py:``
    object computes in its own.
    """
    from bodega.precision import resolve_precision

    text = str(victim)
    resolved = resolve_precision(precision)
    if allow_pickle and not text.startswith(HF_PREFIX):
        raise BodegaError(f"victim {text!r}: --allow-pickle applies to hf: folders only")
    if text.startswith(HF_PREFIX):
        if version is not None or trim_tokenizer is not None:
            raise BodegaError(f"victim {text!r}: a folder is identified and trimmed by its own files; "
                             "--victim-version and --trim-tokenizer apply to py: victims")
        return HFFolderVictim(text[3:], task, positive_label, allow_pickle=allow_pickle, precision=resolved)
    if is_plugin(text):
        if resolved.is_bf16:
            raise BodegaError(f"victim {text!r}: a py: victim computes in its own precision; drop --precision "
                              "bf16 (give the object a `precision` attribute to record it)")
        if positive_label is not None:
            raise BodegaError(f"victim {text!r}: --positive-label applies to hf: folders; predict_proba's "
                              "column 1 must be P(non-credible)")
        tokenizer = None
        if trim_tokenizer is not None:
            from transformers import AutoTokenizer

            refuse_custom_code(trim_tokenizer, "--trim-tokenizer")
            tokenizer = AutoTokenizer.from_pretrained(trim_tokenizer, trust_remote_code=False)
        from bodega.identity import files_read
        from bodega.plugins import load_factory

        load_factory(text, "victim")  # imported first: the files the import reads are code, identified as such
        with files_read() as read:  # the weights file a factory loads is part of the model
            product = build_plugin(text, "victim", "predict_proba", "predict_proba(texts) -> array [n, 2]")
        wrapped = CallableVictim(product, text, task, version, tokenizer,
                                 plugin_identity(text, "victim", product, read))
        if wrapped.trim_tokenizer is None:
            log.warning("%s: no trimming tokenizer given; texts are cut after %s characters instead of 512 "
                        "tokens", text, f"{MAX_CHARACTERS:,}")
        return wrapped
    if positive_label is not None or version is not None or trim_tokenizer is not None:
        raise BodegaError(f"victim {text!r}: --positive-label, --victim-version and --trim-tokenizer apply to "
                          "hf: and py: victims only")
    from bodega.victims.modeldir import load_victim

    return load_victim(victim, profile=profile, precision=resolved)
