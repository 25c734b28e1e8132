"""Training checkpoints, one per evaluation point, that survive a kill at any moment.

A point's tensors (trainable weights and optimizer state) go to ``point-N.safetensors``
and its metadata to ``point-N.json``, each written atomically, the JSON last and naming
the tensor file's sha256. A checkpoint counts only when both exist and agree, so a kill
mid-write leaves the previous point as the resume point. No pickle is involved.
"""
from __future__ import annotations

import json
import logging
from pathlib import Path

import torch

from bodega.io import atomic_write_bytes, atomic_write_json, file_sha256

log = logging.getLogger(__name__)


def _optimizer_split(optimizer: torch.optim.Optimizer) -> tuple[dict[str, torch.Tensor], dict]:
    state = optimizer.state_dict()
    tensors, plain = {}, {"param_groups": state["param_groups"], "state": {}}
    for index, values in state["state"].items():
        for key, value in values.items():
            if torch.is_tensor(value):
                tensors[f"optimizer.{index}.{key}"] = value.detach().cpu().contiguous()
            else:
                plain["state"].setdefault(str(index), {})[key] = value
    return tensors, plain


def _optimizer_join(tensors: dict[str, torch.Tensor], plain: dict) -> dict:
    state: dict[int, dict] = {int(k): dict(v) for k, v in plain["state"].items()}
    for name, value in tensors.items():
        if name.startswith("optimizer."):
            _, index, key = name.split(".", 2)
            state.setdefault(int(index), {})[key] = value
    return {"state": state, "param_groups": plain["param_groups"]}


def save_checkpoint(folder: Path, point: int, weights: dict[str, torch.Tensor], optimizer, scheduler,
                    meta: dict) -> Path:
    """Write a point's weights and optimizer tensors, then its metadata with their hash (so a torn write is
    ignored).
    """
    from safetensors.torch import save

    folder.mkdir(parents=True, exist_ok=True)
    optim_tensors, optim_plain = _optimizer_split(optimizer)
    tensors = {f"model.{k}": v for k, v in weights.items()} | optim_tensors
    tensor_path = folder / f"point-{point}.safetensors"
    atomic_write_bytes(tensor_path, save(tensors))
    record = dict(meta, point=point, tensors_sha256=file_sha256(tensor_path), optimizer=optim_plain,
                  scheduler=scheduler.state_dict() if scheduler is not None else None)
    atomic_write_json(folder / f"point-{point}.json", record)
    return tensor_path


def latest_checkpoint(folder: Path) -> dict | None:
    """The newest complete checkpoint's metadata, or None; incomplete ones are ignored."""
    best = None
    for meta_path in folder.glob("point-*.json"):
        try:
            record = json.loads(meta_path.read_text(encoding="utf-8"))
            tensor_path = folder / f"point-{record['point']}.safetensors"
            if not tensor_path.exists() or file_sha256(tensor_path) != record["tensors_sha256"]:
                log.warning("ignoring incomplete checkpoint %s", meta_path)
                continue
        except (json.JSONDecodeError, KeyError) as error:
            log.warning("ignoring unreadable checkpoint %s: %s", meta_path, error)
            continue
        if best is None or record["point"] > best["point"]:
            best = record
    return best


def load_weights(folder: Path, point: int) -> dict[str, torch.Tensor]:
    """The model weights of the checkpoint of evaluation point ``point``."""
    from safetensors.torch import load_file

    tensors = load_file(folder / f"point-{point}.safetensors")
    return {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}


def restore(folder: Path, record: dict, optimizer, scheduler) -> dict[str, torch.Tensor]:
    """Load optimizer and scheduler state from a checkpoint; return its model weights."""
    from safetensors.torch import load_file

    tensors = load_file(folder / f"point-{record['point']}.safetensors")
    optimizer.load_state_dict(_optimizer_join(tensors, record["optimizer"]))
    if scheduler is not None and record.get("scheduler") is not None:
        scheduler.load_state_dict(record["scheduler"])
    return {k[len("model."):]: v for k, v in tensors.items() if k.startswith("model.")}


def prune(folder: Path, keep: set[int]) -> None:
    """Delete checkpoints of points not in ``keep`` (metadata first, so none is left half)."""
    for meta_path in folder.glob("point-*.json"):
        point = int(meta_path.stem.split("-", 1)[1])
        if point not in keep:
            meta_path.unlink(missing_ok=True)
            (folder / f"point-{point}.safetensors").unlink(missing_ok=True)
