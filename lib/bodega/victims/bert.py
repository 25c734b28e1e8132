"""BERT-family victim: a Hugging Face encoder fine-tuned as a sequence classifier.

``paper``: bert-base-uncased (5 epochs, AdamW lr 5e-5 with linear decay, batch 16, 512
tokens), as BODEGA; ``cpu``: the packaged all-mpnet-base-v2 encoder (110M) with a new
classification head, same recipe. Attention masks keep predictions batch-independent.
"""
from __future__ import annotations

from pathlib import Path

import torch

from bodega.errors import BodegaError
from bodega.victims.torch_victim import TOKENIZER_DIR, TorchVictim

LEARNING_RATE = 5e-5


def base_location(kind: str, profile: str, base_model: str | Path | None) -> tuple[str, str]:
    """(resource role, location) of a family's base model in a profile; an explicit path wins."""
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    prof = get_profile(profile)
    role = prof.models[kind]
    if role is None:
        raise BodegaError(f"profile {profile!r} has no base model for {kind}")
    if base_model is not None:
        return role, str(resolve(role, path=base_model).location)
    return role, resolve(role, allow_hub=prof.allow_hub).location


def stored_location(role: str, location: str, explicit: bool) -> str:
    """What ``victim.json`` says the base model was: a resolved installed resource as ``resource:<role>``
    (its path belongs to the machine that trained; loading resolves the role again), else as given."""
    return f"resource:{role}" if not explicit and Path(location).is_absolute() else location


class BertVictim(TorchVictim):
    """A transformers sequence classifier fine-tuned whole (AdamW, linear decay): BODEGA's BERT recipe."""

    kind = "BERT"
    train_batch_size = 16
    max_grad_norm = 1.0
    bucket_batches = True
    direct_tokenizer = True
    max_padding = 0.1

    def encode(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """Token ids, type ids and attention mask, pairs joined as the tokenizer joins them."""
        return dict(self.tokenize(texts))

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The sequence classifier's logits."""
        return self.model(**batch).logits

    def make_optimizer(self, total_steps: int, lr: float | None = None):
        """AdamW with a linear decay to zero over ``total_steps`` (no warm-up)."""
        from transformers import get_linear_schedule_with_warmup

        optimizer = torch.optim.AdamW(self.parameters_to_train(), lr=lr or LEARNING_RATE)
        return optimizer, get_linear_schedule_with_warmup(optimizer, 0, total_steps)

    @classmethod
    def create(cls, task: str, profile: str, seed: int, base_model: str | Path | None = None,
               quantize: bool | None = None) -> "BertVictim":
        """A fresh classifier on the profile's base model (or ``base_model``), seeded."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        role, location = base_location(cls.kind, profile, base_model)
        tokenizer = AutoTokenizer.from_pretrained(location, trust_remote_code=False)
        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_pretrained(location, num_labels=2, trust_remote_code=False)
        victim = cls(model, tokenizer, task, name=f"{task}-{cls.kind}")
        victim.base = {"base_model": stored_location(role, location, base_model is not None), "base_role": role}
        return victim

    @classmethod
    def load(cls, path: Path, info: dict, profile: str, weights_hash: str) -> "BertVictim":
        """The trained classifier saved in ``path``, with its own tokenizer copy."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        model = AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=False)
        model.eval()
        tokenizer = AutoTokenizer.from_pretrained(path / TOKENIZER_DIR, trust_remote_code=False)
        return cls(model, tokenizer, info["task"], name=info["name"], weights_hash=weights_hash)

    def save(self, out_dir: Path) -> tuple[list[Path], str]:
        """Write the model and its tokenizer copy; return the files whose bytes define predictions."""
        self.model.save_pretrained(out_dir, safe_serialization=True)
        self.tokenizer.save_pretrained(out_dir / TOKENIZER_DIR)
        return self.files_for_hash(out_dir, {})

    def describe(self) -> dict:
        """Base model, tokenizer and parameter count for victim.json."""
        return dict(self.base, tokenizer=f"{self.base['base_model']} tokenizer (copied into {TOKENIZER_DIR}/)",
                    n_params=self.n_params)


class MiniLMVictim(BertVictim):
    """The BERT recipe on the profile's ``MiniLM`` model (all-MiniLM-L6-v2, 22.7M): a smaller encoder than the
    one in BERT's role, kept selectable so the cpu study can show a second encoder size."""

    kind = "MiniLM"
