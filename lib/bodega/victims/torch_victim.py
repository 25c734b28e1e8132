"""Shared inference and training hooks for the torch classifiers (BiLSTM, BERT, Gemma).

A subclass supplies ``encode`` (texts -> tensors, truncated to 512 tokens) and
``logits``; this class turns them into batch-independent probabilities. Each input is
encoded on its own terms (packing or attention masks), so a text's probabilities never
depend on the other texts of the batch.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch

from bodega.tasks import get_task, split_pair
from bodega.victims.base import MAX_TOKENS, argmax_predictions, check_texts, chunks

log = logging.getLogger(__name__)
TOKENIZER_DIR = "tokenizer"  # a model folder's own copy of its tokenizer


class TorchVictim:
    """A torch classifier as a :class:`~bodega.victims.base.Victim`, with the hooks training and saving use.

    A family sets its class attributes (batch sizes, padding, precision support) and implements
    ``encode``, ``logits``, ``make_optimizer``, ``create``, ``load``, ``save`` and ``describe``.
    """

    kind: str = ""
    inference_batch_size: int = 32
    train_batch_size: int = 32
    max_grad_norm: float | None = None
    bucket_batches: bool = False  # group training texts of similar length (less padding)
    direct_tokenizer: bool = False  # right-padded batches straight from the Rust tokenizer (same ids)
    max_padding: float | None = None  # cut inference batches so padding stays under this share of tokens
    supports_bf16: bool = True  # transformers gain from bf16 weights; the BiLSTM does not (book: Performance)
    precision: str = "fp32"  # the precision predictions are computed in: part of the victim's identity
    kernels: str = "fp32"  # the kernel family running it (bodega.precision.bf16_kernels)
    storage: str = "fp32"  # the precision an adapter's trained tensors are written in (training sets its own)

    def __init__(self, model: torch.nn.Module, tokenizer, task: str, name: str, weights_hash: str = ""):
        self.model = model
        self.tokenizer = tokenizer
        self.task = get_task(task).name
        self.name = name
        self.weights_hash = weights_hash
        self.device = next(model.parameters()).device
        self._backends: dict[int, object] = {}

    @property
    def trim_tokenizer(self):
        """The tokenizer whose first 512 tokens BODEGA keeps before an attack: the victim's own
        (for the BiLSTM, its bert-base-uncased WordPiece; see :mod:`bodega.victims.trimming`)."""
        return self.tokenizer

    @property
    def trim_tokenizer_name(self) -> str:
        """The tokenizer's folder as loaded (a model folder, relative to the run), but a base model's tokenizer
        in a machine's cache as ``victim.json`` names that model (``resource:<role>``), never by its path."""
        where = getattr(self.tokenizer, "name_or_path", "") or type(self.tokenizer).__name__
        base = getattr(self, "base", {}).get("base_model", "")
        if Path(where).is_absolute() and base.startswith("resource:"):
            where = base
        return f"{self.kind} tokenizer ({where})"

    def set_precision(self, precision) -> None:
        """Run inference in ``precision`` (a :class:`bodega.precision.Precision`); fp32 leaves the model as
        loaded. A family without ``supports_bf16`` stays fp32 and says so."""
        if not precision.is_bf16:
            return
        if not self.supports_bf16:
            log.info("%s: the %s victim stays fp32 (bf16 does not speed it up)", self.name, self.kind)
            return
        self.model = self.bf16_model(self.model)
        self.precision, self.kernels = precision.name, precision.kernels

    def bf16_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """The inference model in bf16 weights (a family with adapters merges them first)."""
        return model.to(torch.bfloat16)

    @property
    def batch_invariant(self) -> bool:
        """Whether the query accountant may compute a text ahead, in another batch (its ``prefetch``).

        In fp32 a text's probabilities move with its batch by 1e-7 to 6e-6 (masks and packing
        keep the padding out); in bf16 by up to 0.003-0.1 (book: Performance), so a bf16 victim is never
        prefetched and its texts are computed in the batches a run without prefetching uses.
        """
        return self.precision == "fp32"

    # -- encoding -------------------------------------------------------------------------
    def tokenize(self, texts: list[str], max_length: int = MAX_TOKENS, padding_side: str = "right") -> dict:
        """Tokenize single texts, or (evidence, claim) pairs for pair tasks, padded on one side."""
        if self.direct_tokenizer and padding_side == "right" and getattr(self.tokenizer, "is_fast", False):
            return self._tokenize_direct(texts, max_length)
        self.tokenizer.padding_side = padding_side
        common = dict(truncation=True, max_length=max_length, padding=True, return_tensors="pt")
        if get_task(self.task).pair:
            pairs = [split_pair(text) for text in texts]
            return self.tokenizer([e for e, _ in pairs], [c for _, c in pairs],
                                  truncation="longest_first", **{k: v for k, v in common.items() if k != "truncation"})
        return self.tokenizer(texts, **common)

    def _backend(self, max_length: int):
        """A private copy of the fast tokenizer's Rust backend, truncating as ``tokenize`` asks."""
        if max_length not in self._backends:
            from tokenizers import Tokenizer

            backend = Tokenizer.from_str(self.tokenizer.backend_tokenizer.to_str())
            backend.no_padding()
            backend.enable_truncation(max_length, strategy="longest_first",
                                      direction=self.tokenizer.truncation_side)
            self._backends[max_length] = backend
        return self._backends[max_length]

    def _tokenize_direct(self, texts: list[str], max_length: int) -> dict[str, torch.Tensor]:
        """What ``tokenizer(..., padding=True, truncation=True)`` returns, without its per-call Python.

        The Hugging Face wrapper reconfigures the backend and converts every encoding
        through nested Python lists on each call, about three quarters of the tokenising
        time for sentence-length texts; the ids are the backend's either way.
        """
        inputs = [split_pair(text) for text in texts] if get_task(self.task).pair else texts
        encodings = self._backend(max_length).encode_batch_fast(inputs)
        lengths = np.fromiter((len(e) for e in encodings), dtype=np.int64, count=len(encodings))
        width = int(lengths.max()) if len(lengths) else 0
        ids = np.full((len(encodings), width), self.tokenizer.pad_token_id, dtype=np.int64)
        names = self.tokenizer.model_input_names
        types = np.full_like(ids, self.tokenizer.pad_token_type_id) if "token_type_ids" in names else None
        for row, (encoding, length) in enumerate(zip(encodings, lengths)):
            ids[row, :length] = encoding.ids
            if types is not None:
                types[row, :length] = encoding.type_ids
        out = {"input_ids": torch.from_numpy(ids)}
        if types is not None:
            out["token_type_ids"] = torch.from_numpy(types)
        out["attention_mask"] = torch.from_numpy((np.arange(width) < lengths[:, None]).astype(np.int64))
        return out

    def encode(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """The model's inputs for ``texts`` (truncated to 512 tokens); each family defines its own."""
        raise NotImplementedError

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The model's ``(n, 2)`` logits for an encoded batch; each family defines its own."""
        raise NotImplementedError

    def to_device(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """The batch's tensors on the model's device (``lengths`` stays on the CPU for packing)."""
        return {k: v.to(self.device) if k != "lengths" else v for k, v in batch.items()}

    # -- the Victim protocol ----------------------------------------------------------------
    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """Batch-independent probabilities, texts batched by length; the model is put in eval mode for the call."""
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, 2), dtype=np.float64)
        was_training = self.model.training
        if was_training:  # eval() walks every submodule: not on every call of an attack
            self.model.eval()
        # Similar lengths share a batch (less padding); exact because rows are batch-independent.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i])) if len(texts) > 1 else [0]
        out, rows = [], []
        with torch.inference_mode():
            for part in self._inference_batches(texts, order):
                logits = self.logits(self.to_device(self.encode([texts[i] for i in part])))
                out.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
                rows.extend(part)
        if was_training:
            self.model.train()
        result = np.empty((len(texts), 2), dtype=np.float64)
        result[rows] = np.concatenate(out) if len(out) > 1 else out[0]
        return result

    def _inference_batches(self, texts: list[str], order: list[int]) -> Iterator[Sequence[int]]:
        """Batches of ``inference_batch_size`` in ``order``; with ``max_padding``, by token length.

        An encoder computes every padding position, so for it texts are ordered by token
        length and a batch closes early when the next text would push the padded positions
        above ``1 + max_padding`` times the real ones (the BiLSTM packs: padding costs it nothing).
        """
        if self.max_padding is None or len(order) < 2:
            yield from chunks(order, self.inference_batch_size)
            return
        lengths = self._token_lengths(texts)
        batch: list[int] = []
        longest = real = 0
        for i in sorted(order, key=lambda k: lengths[k]):
            wider = max(longest, lengths[i])
            if batch and (len(batch) == self.inference_batch_size or
                          wider * (len(batch) + 1) > (1 + self.max_padding) * (real + lengths[i])):
                yield batch
                batch, longest, real, wider = [], 0, 0, lengths[i]
            batch.append(i)
            longest, real = wider, real + lengths[i]
        yield batch

    def _token_lengths(self, texts: list[str]) -> list[int]:
        if self.direct_tokenizer and getattr(self.tokenizer, "is_fast", False):
            inputs = [split_pair(text) for text in texts] if get_task(self.task).pair else texts
            return [len(e) for e in self._backend(MAX_TOKENS).encode_batch_fast(inputs)]
        return self.tokenize(texts)["attention_mask"].sum(dim=1).tolist()

    def predict(self, texts: list[str]) -> np.ndarray:
        """The decision (0 or 1) per text."""
        return argmax_predictions(self.predict_proba(texts))

    # -- training hooks (overridden where a family differs) ---------------------------------
    def trainable_state(self) -> dict[str, torch.Tensor]:
        """The tensors a checkpoint keeps (here the whole state dict, on the CPU)."""
        return {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}

    def load_trainable_state(self, state: dict[str, torch.Tensor]) -> None:
        """Restore what :meth:`trainable_state` returned."""
        self.model.load_state_dict(state)

    def parameters_to_train(self) -> list[torch.nn.Parameter]:
        """The parameters the optimizer updates (those that require gradients)."""
        return [p for p in self.model.parameters() if p.requires_grad]

    def make_optimizer(self, total_steps: int, lr: float | None = None):
        """(optimizer, scheduler or None) for ``total_steps`` steps; ``lr`` None = the family's rate."""
        raise NotImplementedError

    @staticmethod
    def files_for_hash(path: Path, info: dict) -> tuple[list[Path], str]:
        """The files whose bytes define predictions: config, weights and the tokenizer copy."""
        tokenizer_files = sorted(p for p in (path / TOKENIZER_DIR).iterdir() if p.is_file())
        return [path / "config.json", path / "model.safetensors", *tokenizer_files], ""

    def save(self, out_dir: Path) -> tuple[list[Path], str]:
        """Write the final model files; return (files that define predictions, extra hash text)."""
        raise NotImplementedError

    def describe(self) -> dict:
        """Base model and parameter count for victim.json."""
        raise NotImplementedError

    @property
    def n_params(self) -> int:
        """The model's parameter count, for victim.json and the tables."""
        return sum(p.numel() for p in self.model.parameters())
