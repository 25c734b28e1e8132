"""BERT-family victim: a Hugging Face encoder fine-tuned as a sequence classifier.

``paper``: bert-base-uncased fine-tuned whole (5 epochs, AdamW lr 5e-5 with linear decay, batch 16,
512 tokens), as BODEGA; ``cpu``: the packaged all-mpnet-base-v2 encoder (110M) with a new
classification head, trained through LoRA (the profile's ``finetuning``): its adapter and head are a
few MB that are committed with the results and load on the base model resolved by role and checked by
hash (:mod:`bodega.victims.adapters`), where a fully fine-tuned copy (419 MB) had to be trained again
on every machine. Attention masks keep predictions batch-independent.
"""
from __future__ import annotations

from pathlib import Path

import torch

from bodega.errors import BodegaError
from bodega.victims.adapters import (adapter_files, base_hash, checked_base, copy_parameters, quiet_base_load,
                                     trained_parameters, write_adapter)
from bodega.victims.torch_victim import TOKENIZER_DIR, TorchVictim

LEARNING_RATE = 5e-5
LORA_RANK = 8
LORA_ALPHA = 16
LORA_DROPOUT = 0.05
LORA_TARGETS = "all-linear"  # every linear layer of the encoder, as the decoders' adapters take every projection
LORA_LEARNING_RATE = 4e-4  # the LoRA paper's rates for RoBERTa-base on GLUE (4e-4 to 5e-4, r 8)


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


def lora_model(model: torch.nn.Module):
    """An encoder classifier with a fresh LoRA adapter on every linear layer; its head trains whole."""
    from peft import LoraConfig, get_peft_model

    return get_peft_model(model, LoraConfig(r=LORA_RANK, lora_alpha=LORA_ALPHA, lora_dropout=LORA_DROPOUT,
                                            target_modules=LORA_TARGETS, task_type="SEQ_CLS"))


class BertVictim(TorchVictim):
    """A transformers sequence classifier fine-tuned whole (AdamW, linear decay): BODEGA's BERT recipe; or,
    where the profile says ``lora``, the same recipe over a LoRA adapter and the head."""

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

        default = LORA_LEARNING_RATE if self.lora else LEARNING_RATE
        optimizer = torch.optim.AdamW(self.parameters_to_train(), lr=lr or default)
        return optimizer, get_linear_schedule_with_warmup(optimizer, 0, total_steps)

    @property
    def lora(self) -> bool:
        """Whether this victim trains (and stores) a LoRA adapter and head rather than every weight."""
        return getattr(self, "base", {}).get("finetuning") == "lora"

    def trainable_state(self) -> dict[str, torch.Tensor]:
        """Every weight (full fine-tuning), or only the adapter and head (LoRA)."""
        return trained_parameters(self.model) if self.lora else super().trainable_state()

    def load_trainable_state(self, state: dict[str, torch.Tensor]) -> None:
        """Restore what :meth:`trainable_state` returned."""
        if self.lora:
            copy_parameters(self.model, state)
        else:
            super().load_trainable_state(state)

    @classmethod
    def create(cls, task: str, profile: str, seed: int, base_model: str | Path | None = None,
               quantize: bool | None = None) -> "BertVictim":
        """A fresh classifier on the profile's base model (or ``base_model``), seeded."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from bodega.profiles import get_profile

        role, location = base_location(cls.kind, profile, base_model)
        finetuning = get_profile(profile).finetuning_for(cls.kind)
        tokenizer = AutoTokenizer.from_pretrained(location, trust_remote_code=False)
        torch.manual_seed(seed)
        model = AutoModelForSequenceClassification.from_pretrained(location, num_labels=2,
                                                                   trust_remote_code=False)
        base = {"base_model": stored_location(role, location, base_model is not None), "base_role": role}
        if finetuning == "lora":
            model = lora_model(model)
            base.update(base_sha256=base_hash(location), finetuning="lora")
        victim = cls(model, tokenizer, task, name=f"{task}-{cls.kind}")
        victim.base = base
        return victim

    @classmethod
    def load(cls, path: Path, info: dict, profile: str, weights_hash: str) -> "BertVictim":
        """The trained classifier saved in ``path`` with its own tokenizer copy; or its LoRA adapter on the
        base model, refused when the base's hash differs from training's."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        if info.get("finetuning") == "lora":
            location = checked_base(path, info, profile)
            with quiet_base_load():
                from peft import PeftModel

                base = AutoModelForSequenceClassification.from_pretrained(location, num_labels=2,
                                                                       trust_remote_code=False)
                model = PeftModel.from_pretrained(base, path)
            tokenizer = AutoTokenizer.from_pretrained(location, trust_remote_code=False)
        else:
            model = AutoModelForSequenceClassification.from_pretrained(path, trust_remote_code=False)
            tokenizer = AutoTokenizer.from_pretrained(path / TOKENIZER_DIR, trust_remote_code=False)
        model.eval()
        victim = cls(model, tokenizer, info["task"], name=info["name"], weights_hash=weights_hash)
        if info.get("finetuning") == "lora":
            victim.base = {k: info[k] for k in ("base_model", "base_role", "base_sha256", "finetuning")}
        return victim

    @staticmethod
    def files_for_hash(path: Path, info: dict) -> tuple[list[Path], str]:
        """A LoRA victim's adapter files with its base's hash as extra hash text; else every file."""
        if info.get("finetuning") == "lora":
            return adapter_files(path), f"base={info['base_sha256']};finetuning=lora"
        return TorchVictim.files_for_hash(path, info)

    def save(self, out_dir: Path) -> tuple[list[Path], str]:
        """Write the model and its tokenizer copy, or the adapter and head in the storage precision; return
        the files (and extra hash text) that define predictions."""
        if self.lora:
            write_adapter(self.model, out_dir, self.base["base_model"], self.storage)
            return self.files_for_hash(out_dir, self.base)
        self.model.save_pretrained(out_dir, safe_serialization=True)
        self.tokenizer.save_pretrained(out_dir / TOKENIZER_DIR)
        return self.files_for_hash(out_dir, {})

    def bf16_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """bf16 weights; a LoRA adapter is merged into the base in fp32 first (one product per layer)."""
        merged = model.merge_and_unload() if hasattr(model, "merge_and_unload") else model
        return merged.to(torch.bfloat16)

    def describe(self) -> dict:
        """Base model, tokenizer, parameter counts and the fine-tuning method for victim.json."""
        if not self.lora:
            return dict(self.base, finetuning="full", n_params=self.n_params,
                        tokenizer=f"{self.base['base_model']} tokenizer (copied into {TOKENIZER_DIR}/)")
        trainable = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        return dict(self.base, tokenizer=f"{self.base['base_model']} tokenizer (reference)", n_params=self.n_params,
                    n_trainable_params=trainable, adapter_storage=self.storage,
                    lora={"r": LORA_RANK, "alpha": LORA_ALPHA, "dropout": LORA_DROPOUT, "targets": LORA_TARGETS})


class MiniLMVictim(BertVictim):
    """The BERT recipe on the profile's ``MiniLM`` model (all-MiniLM-L6-v2, 22.7M): a smaller encoder than the
    one in BERT's role, kept selectable so the cpu study can show a second encoder size."""

    kind = "MiniLM"
