"""LoRA adapters on a base model that is resolved by role and checked by hash.

A victim trained through LoRA (the decoders, and the ``cpu`` profile's BERT role) keeps only what it trained:
the adapter and the classification head, a few MB, small enough to commit with the results. The base model
is not copied: ``victim.json`` names it by role (``resource:<role>``) with the sha256 of its weights, config
and tokenizer, and loading resolves the role on the machine at hand and refuses a base of another hash, so a
victim loads with the same weights hash on any machine.
"""
from __future__ import annotations

import json
import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import torch

from bodega.errors import BodegaError
from bodega.victims.base import hash_files

ADAPTER_CONFIG = "adapter_config.json"
ADAPTER_WEIGHTS = "adapter_model.safetensors"
STORAGE_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def local_model_dir(location: str) -> Path:
    """A local folder for a path or a hub id (the hub is used only where the profile allows it)."""
    if Path(location).exists():
        return Path(location)
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(location, allow_patterns=["*.json", "*.safetensors", "tokenizer*"]))


def base_hash(location: str) -> str:
    """sha256 of a base model's weights, config and tokenizer: the adapter is only valid on that base."""
    folder = local_model_dir(location)
    # The tokenizer is part of the base: the same weights read through another tokenizer predict differently.
    files = sorted(folder.glob("*.safetensors")) + [folder / "config.json"]
    files += [folder / "tokenizer.json"] if (folder / "tokenizer.json").exists() else []
    return hash_files(files)


def checked_base(path: Path, info: dict, profile: str) -> str:
    """The location of the base model an adapter in ``path`` was trained on: its recorded path where that
    exists, else its role resolved here; refused when the base's hash differs from the one training recorded."""
    from bodega.profiles import get_profile
    from bodega.resources import resolve

    location = info["base_model"]
    if not Path(location).exists():
        location = resolve(info["base_role"], allow_hub=get_profile(profile).allow_hub).location
    actual = base_hash(location)
    if actual != info["base_sha256"]:
        raise BodegaError(f"{path}: base model {location} has hash {actual[:12]}, but the adapter was "
                          f"trained on {info['base_sha256'][:12]}; point it at the original base model")
    return location


def adapter_files(path: Path) -> list[Path]:
    """The files of an adapter folder whose bytes define its predictions (with the base's hash)."""
    return [path / ADAPTER_CONFIG, path / ADAPTER_WEIGHTS]


def trained_parameters(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """Only the parameters that train (adapter and head), on the CPU: the base is checked by hash instead."""
    return {name: p.detach().cpu().contiguous() for name, p in model.named_parameters() if p.requires_grad}


def copy_parameters(model: torch.nn.Module, state: dict[str, torch.Tensor]) -> None:
    """Copy a checkpoint's adapter and head tensors into the model in place."""
    parameters = dict(model.named_parameters())
    with torch.no_grad():
        for name, value in state.items():
            parameters[name].copy_(value.to(parameters[name].device))


def write_adapter(model, out_dir: Path, base_model: str, storage: str = "fp32") -> None:
    """Write a peft model's adapter (and the head it trains) to ``out_dir``, portable and compact.

    peft writes the base model's path into adapter_config.json and a model card; the config names the base as
    victim.json does (``resource:<role>``) and the card is not kept, so the folder names no machine path; its module
    lists are sorted, so the same weights give the same files (and weights hash) in every process.
    ``storage`` ``bf16`` rounds the trained tensors to bf16 in the model first and stores them so (half the
    bytes): the model in memory is then the one on disk, and its attack-set numbers are the stored victim's.
    """
    if storage not in STORAGE_DTYPES:
        raise BodegaError(f"adapter storage must be one of {', '.join(STORAGE_DTYPES)}, got {storage!r}")
    dtype = STORAGE_DTYPES[storage]
    if dtype != torch.float32:
        with torch.no_grad():
            for parameter in model.parameters():
                if parameter.requires_grad:
                    parameter.copy_(parameter.to(dtype).to(parameter.dtype))
    model.save_pretrained(out_dir, safe_serialization=True)
    if dtype != torch.float32:
        from safetensors.torch import load_file, save_file

        weights = Path(out_dir) / ADAPTER_WEIGHTS
        tensors = {name: value.to(dtype) if value.is_floating_point() else value
                   for name, value in load_file(weights).items()}
        save_file(tensors, weights, metadata={"format": "pt"})
    config_path = Path(out_dir) / ADAPTER_CONFIG
    config = json.loads(config_path.read_text(encoding="utf-8"))
    config["base_model_name_or_path"] = base_model
    for name in ("target_modules", "modules_to_save"):  # peft saves sets in the process's hash order
        if isinstance(config.get(name), list):
            config[name] = sorted(config[name])
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    (Path(out_dir) / "README.md").unlink(missing_ok=True)


@contextmanager
def quiet_base_load() -> Iterator[None]:
    """Within the block, load a base model whose classification head an adapter replaces next: transformers'
    "newly initialized ... You should probably TRAIN this model" and bitsandbytes' note that an optional
    ``kernels`` package is missing (said when peft imports it) concern no user attacking a trained victim, and
    would hide the lines that do. Errors still show."""
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    kernels = logging.getLogger("bitsandbytes.backends.cpu.ops")
    level = kernels.level
    hf_logging.set_verbosity_error()
    kernels.setLevel(logging.ERROR)
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        kernels.setLevel(level)
