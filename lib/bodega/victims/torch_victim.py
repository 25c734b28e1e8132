"""Shared inference and training hooks for the torch classifiers (BiLSTM, BERT, Gemma).

A subclass supplies ``encode`` (texts -> tensors, truncated to 512 tokens) and
``logits``; this class turns them into batch-independent probabilities. Each input is
encoded on its own terms (packing or attention masks), so a text's probabilities never
depend on the other texts of the batch.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from bodega.tasks import get_task, split_pair
from bodega.victims.base import MAX_TOKENS, argmax_predictions, check_texts, chunks

TOKENIZER_DIR = "tokenizer"  # a model folder's own copy of its tokenizer


class TorchVictim:
    kind: str = ""
    inference_batch_size: int = 32
    train_batch_size: int = 32
    max_grad_norm: float | None = None
    bucket_batches: bool = False  # group training texts of similar length (less padding)

    def __init__(self, model: torch.nn.Module, tokenizer, task: str, name: str, weights_hash: str = ""):
        self.model = model
        self.tokenizer = tokenizer
        self.task = get_task(task).name
        self.name = name
        self.weights_hash = weights_hash
        self.device = next(model.parameters()).device

    # -- encoding -------------------------------------------------------------------------
    def tokenize(self, texts: list[str], max_length: int = MAX_TOKENS, padding_side: str = "right") -> dict:
        """Tokenize single texts, or (evidence, claim) pairs for pair tasks, padded on one side."""
        self.tokenizer.padding_side = padding_side
        common = dict(truncation=True, max_length=max_length, padding=True, return_tensors="pt")
        if get_task(self.task).pair:
            pairs = [split_pair(text) for text in texts]
            return self.tokenizer([e for e, _ in pairs], [c for _, c in pairs],
                                  truncation="longest_first", **{k: v for k, v in common.items() if k != "truncation"})
        return self.tokenizer(texts, **common)

    def encode(self, texts: list[str]) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError

    def to_device(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: v.to(self.device) if k != "lengths" else v for k, v in batch.items()}

    # -- the Victim protocol ----------------------------------------------------------------
    def predict_proba(self, texts: list[str]) -> np.ndarray:
        texts = check_texts(texts)
        if not texts:
            return np.zeros((0, 2), dtype=np.float64)
        was_training = self.model.training
        self.model.eval()
        # Similar lengths share a batch (less padding); exact because rows are batch-independent.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = []
        with torch.inference_mode():
            for part in chunks(order, self.inference_batch_size):
                logits = self.logits(self.to_device(self.encode([texts[i] for i in part])))
                out.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
        self.model.train(was_training)
        result = np.empty((len(texts), 2), dtype=np.float64)
        result[order] = np.concatenate(out)
        return result

    def predict(self, texts: list[str]) -> np.ndarray:
        return argmax_predictions(self.predict_proba(texts))

    # -- training hooks (overridden where a family differs) ---------------------------------
    def trainable_state(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}

    def load_trainable_state(self, state: dict[str, torch.Tensor]) -> None:
        self.model.load_state_dict(state)

    def parameters_to_train(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def make_optimizer(self, total_steps: int):
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
        return sum(p.numel() for p in self.model.parameters())
