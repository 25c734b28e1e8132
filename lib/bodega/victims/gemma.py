"""Gemma victims: a decoder LM with a classification head, fine-tuned with (Q)LoRA.

``paper``: google/gemma-2b or gemma-7b with QLoRA as BODEGA (4-bit NF4 weights, bf16
compute, LoRA r=8 on the q/k/v/o/gate/up/down projections, batch 4) on CUDA; ``cpu``:
plain LoRA on the packaged Gemma-3-270M. The head reads the last non-padding token;
padding is on the right under a causal mask, so real tokens never see padding and a
prediction is independent of its batch. The model folder holds only the adapter (and
the trained head) plus a reference to the base model with its hash; loading refuses a
base whose hash differs.
"""
from __future__ import annotations

from pathlib import Path

import torch

from bodega.errors import BodegaError
from bodega.victims.adapters import (adapter_files, base_hash, checked_base, copy_parameters, local_model_dir,
                                     quiet_base_load, trained_parameters, write_adapter)
from bodega.victims.bert import base_location, stored_location
from bodega.victims.torch_victim import TorchVictim

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
LORA_RANK = 8
LORA_ALPHA = 16
LORA_DROPOUT = 0.05
LEARNING_RATE = 1e-4


def _load_base(location: str, quantize: bool, pad_token_id: int):
    from transformers import AutoModelForSequenceClassification

    kwargs: dict = dict(num_labels=2, pad_token_id=pad_token_id)
    if quantize:
        from transformers import BitsAndBytesConfig

        kwargs["quantization_config"] = BitsAndBytesConfig(
            load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.bfloat16)
        kwargs["dtype"] = torch.bfloat16
        if torch.cuda.is_available():
            kwargs["device_map"] = {"": 0}
    else:
        kwargs["dtype"] = torch.float32
    model = AutoModelForSequenceClassification.from_pretrained(local_model_dir(location), trust_remote_code=False,
                                                               **kwargs)
    model.config.pad_token_id = pad_token_id
    return model


def _tokenizer(location: str):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(local_model_dir(location), trust_remote_code=False)
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer


class GemmaVictim(TorchVictim):
    """A decoder LM with a classification head trained through LoRA (4-bit QLoRA in the paper profile)."""

    kind = "GEMMA"
    train_batch_size = 4
    inference_batch_size = 8
    max_grad_norm = 1.0
    bucket_batches = True

    @property
    def batch_invariant(self) -> bool:
        """Not with 4-bit weights (the paper profile computes them in bf16), else as the precision says."""
        return not getattr(self, "base", {}).get("quantized_4bit", False) and super().batch_invariant

    def encode(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """Right-padded token ids and attention mask."""
        encoded = self.tokenize(texts, padding_side="right")
        return {"input_ids": encoded["input_ids"], "attention_mask": encoded["attention_mask"]}

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The classification head's logits."""
        return self.model(**batch).logits

    def make_optimizer(self, total_steps: int, lr: float | None = None):
        """AdamW over the adapter with a linear decay to zero (no warm-up)."""
        from transformers import get_linear_schedule_with_warmup

        optimizer = torch.optim.AdamW(self.parameters_to_train(), lr=lr or LEARNING_RATE)
        return optimizer, get_linear_schedule_with_warmup(optimizer, 0, total_steps)

    def trainable_state(self) -> dict[str, torch.Tensor]:
        """Only the parameters that train (adapter and head): the base is checked by hash instead."""
        return trained_parameters(self.model)

    def load_trainable_state(self, state: dict[str, torch.Tensor]) -> None:
        """Copy a checkpoint's adapter and head tensors into the model in place."""
        copy_parameters(self.model, state)

    @classmethod
    def create(cls, task: str, profile: str, seed: int, base_model: str | Path | None = None,
               quantize: bool | None = None) -> "GemmaVictim":
        """The base model with a fresh LoRA adapter, seeded; quantised to 4 bits by default in the paper profile."""
        from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training

        role, location = base_location(cls.kind, profile, base_model)
        quantize = profile == "paper" if quantize is None else quantize
        tokenizer = _tokenizer(location)
        torch.manual_seed(seed)
        model = _load_base(location, quantize, tokenizer.pad_token_id)
        if quantize:
            model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
        config = LoraConfig(r=LORA_RANK, lora_alpha=LORA_ALPHA, lora_dropout=LORA_DROPOUT,
                            target_modules=list(LORA_TARGETS), task_type="SEQ_CLS")
        victim = cls(get_peft_model(model, config), tokenizer, task, name=f"{task}-{cls.kind}")
        victim.base = {"base_model": stored_location(role, location, base_model is not None), "base_role": role,
                       "base_sha256": base_hash(location),
                       "quantized_4bit": quantize}
        return victim

    @staticmethod
    def files_for_hash(path: Path, info: dict) -> tuple[list[Path], str]:
        """The adapter files, with the base's hash and quantisation as extra hash text."""
        extra = f"base={info['base_sha256']};4bit={info['quantized_4bit']}"
        return adapter_files(path), extra

    @classmethod
    def load(cls, path: Path, info: dict, profile: str, weights_hash: str) -> "GemmaVictim":
        """The adapter in ``path`` on its base model, refused when the base's hash differs from training's."""
        location = checked_base(path, info, profile)
        tokenizer = _tokenizer(location)
        with quiet_base_load():
            from peft import PeftModel

            model = PeftModel.from_pretrained(_load_base(location, info["quantized_4bit"], tokenizer.pad_token_id),
                                              path)
        model.eval()
        victim = cls(model, tokenizer, info["task"], name=info["name"], weights_hash=weights_hash)
        victim.base = {k: info[k] for k in ("base_model", "base_role", "base_sha256", "quantized_4bit")}
        return victim

    def save(self, out_dir: Path) -> tuple[list[Path], str]:
        """Write the adapter and score head in the storage precision (bf16 where it runs in bf16: half the bytes),
        naming its base by role (:func:`bodega.victims.adapters.write_adapter`); return the files and extra text
        that define predictions."""
        write_adapter(self.model, out_dir, self.base["base_model"], self.storage)
        return self.files_for_hash(out_dir, self.base)

    def bf16_model(self, model: torch.nn.Module) -> torch.nn.Module:
        """LoRA merged into the base weights in fp32, then bf16: one matrix product per layer instead
        of three, and no rounding of the small adapter update on its own (2.8-4.5x, book: Performance)."""
        if self.base.get("quantized_4bit"):
            raise BodegaError(f"{self.name}: a 4-bit QLoRA victim already computes in bf16; run it with "
                             "--precision fp32 (its 4-bit weights cannot be merged)")
        merged = model.merge_and_unload() if hasattr(model, "merge_and_unload") else model
        return merged.to(torch.bfloat16).eval()

    def describe(self) -> dict:
        """Base, tokenizer, parameter counts and LoRA settings for victim.json."""
        trainable = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        return dict(self.base, tokenizer=f"{self.base['base_model']} tokenizer (reference)",
                    n_params=self.n_params, n_trainable_params=trainable, adapter_storage=self.storage,
                    lora={"r": LORA_RANK, "alpha": LORA_ALPHA, "dropout": LORA_DROPOUT,
                          "targets": list(LORA_TARGETS)})


class Gemma2BVictim(GemmaVictim):
    """The decoder in the paper's GEMMA2B role (a small decoder LM on the cpu profile)."""

    kind = "GEMMA2B"


class Gemma7BVictim(GemmaVictim):
    """The decoder in the paper's GEMMA7B role (a small decoder LM on the cpu profile)."""

    kind = "GEMMA7B"
