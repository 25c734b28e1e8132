"""Train a victim on a task's ``train.tsv``, resumable at epoch boundaries.

Every epoch ends with an evaluation on ``attack.tsv`` and ``dev.tsv`` and an atomic
checkpoint; restarting the same command continues after the last complete epoch and
gives the same result as an uninterrupted run (shuffling and dropout are seeded per
epoch). The kept epoch is the profile's choice (``paper``: the last one, as BODEGA), or
with ``select="dev"`` the epoch with the best dev F1: attack-set numbers are recorded
but never used to choose.
"""
from __future__ import annotations

import hashlib
import logging
import math
import shutil
import time
from pathlib import Path

import numpy as np

from bodega.data import read_tsv
from bodega.io import atomic_write_json, relative_path
from bodega.profiles import get_profile
from bodega.tasks import get_task
from bodega.victims.base import hash_files
from bodega.victims.metrics import f1_accuracy
from bodega.victims.modeldir import METRICS_JSON, VICTIM_JSON

log = logging.getLogger(__name__)
CHECKPOINTS = "checkpoints"
SELECTIONS = ("dev", "last")


def _subset(rows: list, max_train: int, seed: int) -> list:
    if not max_train or max_train >= len(rows):
        return rows
    chosen = np.sort(np.random.default_rng(seed).choice(len(rows), size=max_train, replace=False))
    return [rows[i] for i in chosen]


def _file_sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


_EVAL_CHUNK = 256


def _evaluate(victim, rows, desc: str = "evaluate", progress: bool = False) -> dict[str, float]:
    """F1 and accuracy, predicted in chunks so a long evaluation shows progress (predictions are batch-independent)."""
    from tqdm.auto import tqdm

    texts = [row.text for row in rows]
    predictions: list[int] = []
    with tqdm(total=len(texts), desc=desc, unit="text", disable=not progress, mininterval=5) as bar:
        for start in range(0, len(texts), _EVAL_CHUNK):
            chunk = texts[start:start + _EVAL_CHUNK]
            predictions.extend(int(p) for p in victim.predict(chunk))
            bar.update(len(chunk))
    return f1_accuracy([row.label for row in rows], predictions)


def _batches(rng: np.random.Generator, lengths: np.ndarray, bucket: bool, batch_size: int,
             pool: int = 50) -> list[np.ndarray]:
    """Random batches; with ``bucket``, texts are sorted by length inside random pools of
    ``pool`` batches and the batches shuffled, which cuts padding for the transformers."""
    order = rng.permutation(len(lengths))
    if bucket:
        span = pool * batch_size
        order = np.concatenate([part[np.argsort(lengths[part], kind="stable")]
                                for part in np.split(order, range(span, len(order), span))])
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    if bucket:
        batches = [batches[i] for i in rng.permutation(len(batches))]
    return batches


def _choose(history: list[dict], select: str) -> int:
    if select == "last":
        return history[-1]["epoch"]
    return max(history, key=lambda h: (h["dev"]["f1"], -h["epoch"]))["epoch"]


def training_fingerprint(task: str, victim_kind: str, data_dir: str | Path, profile: str = "cpu",
                         max_train: int = 0, epochs: int | None = None, seed: int = 0, *,
                         base_model: str | Path | None = None, select: str | None = None,
                         batch_size: int | None = None, quantize: bool | None = None, lr: float | None = None,
                         bilstm_padding: str = "packed", max_dev: int = 0, precision: str = "fp32") -> dict:
    """The settings ``train_victim`` records in ``victim.json`` (``training``) for these arguments.

    A finished model folder with the same fingerprint is the model these arguments would train.
    ``precision`` is the resolved one; it enters only where it changes the training (``training_precision``).
    """
    from bodega.victims.families import normalise_kind, victim_class

    kind, prof = normalise_kind(victim_kind), get_profile(profile)
    fingerprint = dict(task=get_task(task).name, kind=kind, profile=prof.name,
                       epochs=int(epochs or prof.epochs_for(get_task(task).name, kind)), seed=seed,
                       max_train=max_train or prof.max_train, train_sha256=_file_sha(Path(data_dir) / "train.tsv"),
                       base_model=str(base_model) if base_model else None, select=select or prof.select,
                       batch_size=int(batch_size or victim_class(kind).train_batch_size), quantize=quantize)
    if lr is not None:  # only when set, so models trained before the option keep their fingerprint
        fingerprint["lr"] = lr
    if bilstm_padding != "packed":  # likewise only when not the default
        fingerprint["bilstm_padding"] = bilstm_padding
    if max_dev:  # likewise
        fingerprint["max_dev"] = max_dev
    if training_precision(kind, precision) != "fp32":  # likewise
        fingerprint["precision"] = training_precision(kind, precision)
    return fingerprint


AUTOCAST_KINDS = ("BERT",)
"""Families trained under bf16 autocast at ``--precision bf16``: MiniLM's steps run 1.37x faster on AMX at
the same dev F1 (issue 23); the BiLSTM gains nothing and the decoders' LoRA training was not measured."""


def training_precision(kind: str, precision: str) -> str:
    """The precision a family trains in when ``precision`` (resolved: fp32 or bf16) is asked for."""
    return "bf16" if precision == "bf16" and kind in AUTOCAST_KINDS else "fp32"


def train_victim(task: str, victim_kind: str, data_dir: str | Path, out_dir: str | Path, profile: str = "cpu",
                 max_train: int = 0, epochs: int | None = None, seed: int = 0, *,
                 base_model: str | Path | None = None, select: str | None = None, batch_size: int | None = None,
                 quantize: bool | None = None, lr: float | None = None, progress: bool = True,
                 bilstm_padding: str = "packed", max_dev: int = 0, precision=None) -> Path:
    """Train (or resume, or skip when already complete) and return ``out_dir``.

    ``max_train`` 0 means every training row (the smoke profile caps it); ``epochs`` None
    takes the profile's value; ``base_model`` overrides the resolved base model or
    vocabulary (tests use tiny local models); ``quantize`` None means 4-bit where the
    profile is ``paper`` (QLoRA), for Gemma only; ``lr`` None keeps the family's peak
    learning rate; ``select`` None takes the profile's; ``bilstm_padding="right"`` trains a
    BiLSTM that reads its padding, as BODEGA's did. ``max_dev`` N evaluates each epoch on a seeded
    random N dev rows (0: all): a decoder LM on two CPU cores needs a minute per 150 dev texts.
    ``precision`` (fp32, bf16, auto; None: fp32): bf16 trains and evaluates the BERT family under bf16
    autocast (fp32 master weights); the other families train in fp32 at any precision.
    """
    import torch
    from tqdm.auto import tqdm

    from bodega.precision import FP32, resolve_precision
    from bodega.victims.checkpoint import latest_checkpoint, load_weights, prune, restore, save_checkpoint
    from bodega.victims.families import normalise_kind, victim_class

    task_name = get_task(task).name
    kind = normalise_kind(victim_kind)
    prof = get_profile(profile)
    resolved = resolve_precision(precision)
    if training_precision(kind, resolved.name) != resolved.name:
        log.info("%s trains in fp32 at --precision %s", kind, resolved.name)
        resolved = FP32
    select = select or prof.select
    if select not in SELECTIONS:
        raise ValueError(f"select must be one of {SELECTIONS}, got {select!r}")
    epochs = int(epochs or prof.epochs_for(task_name, kind))
    data_dir, out_dir = Path(data_dir), Path(out_dir)
    train_path = data_dir / "train.tsv"
    train_rows = _subset(read_tsv(train_path), max_train or prof.max_train, seed)
    attack_rows, dev_rows = read_tsv(data_dir / "attack.tsv"), _subset(read_tsv(data_dir / "dev.tsv"), max_dev, seed)
    cls = victim_class(kind)
    batch_size = int(batch_size or cls.train_batch_size)
    if lr is not None and not lr > 0:
        raise ValueError(f"lr must be a positive number, got {lr!r}")
    create_options: dict = {}
    if bilstm_padding != "packed":
        if kind != "BiLSTM":
            raise ValueError(f"bilstm_padding={bilstm_padding!r} applies to the BiLSTM only, not {kind}")
        create_options["padding"] = bilstm_padding
    fingerprint = training_fingerprint(task_name, kind, data_dir, prof.name, max_train, epochs, seed,
                                       base_model=base_model, select=select, batch_size=batch_size,
                                       quantize=quantize, lr=lr, bilstm_padding=bilstm_padding, max_dev=max_dev,
                                       precision=resolved.name)

    info_path = out_dir / VICTIM_JSON
    if info_path.exists():
        from bodega.victims.modeldir import read_victim_info

        if read_victim_info(out_dir).get("training") == fingerprint:
            log.info("%s is already trained with these settings; nothing to do", out_dir)
            return out_dir
    ckpt_dir = out_dir / CHECKPOINTS
    record = latest_checkpoint(ckpt_dir) if ckpt_dir.exists() else None
    if record is not None and record.get("fingerprint") != fingerprint:
        log.warning("%s holds checkpoints of other settings; starting afresh", ckpt_dir)
        shutil.rmtree(ckpt_dir)
        record = None
    # An old model in this folder stops being loadable before any new weights are written.
    info_path.unlink(missing_ok=True)
    (out_dir / METRICS_JSON).unlink(missing_ok=True)

    victim = cls.create(task_name, prof.name, seed, base_model=base_model, quantize=quantize, **create_options)
    autocast = torch.autocast(victim.device.type, dtype=torch.bfloat16, enabled=resolved.is_bf16)
    steps_per_epoch = math.ceil(len(train_rows) / batch_size)
    optimizer, scheduler = victim.make_optimizer(epochs * steps_per_epoch, lr)
    history: list[dict] = []
    if record is not None:
        victim.load_trainable_state(restore(ckpt_dir, record, optimizer, scheduler))
        history = record["history"]
        log.info("resuming %s after epoch %d", out_dir, record["epoch"])

    labels = torch.tensor([row.label for row in train_rows], dtype=torch.long)
    texts = [row.text for row in train_rows]
    lengths = np.array([len(text) for text in texts])
    for epoch in range(len(history) + 1, epochs + 1):
        torch.manual_seed(seed * 1000 + epoch)
        rng = np.random.default_rng([seed, epoch])
        batches = _batches(rng, lengths, victim.bucket_batches, batch_size)
        victim.model.train()
        started, total_loss = time.perf_counter(), 0.0
        bar = tqdm(range(steps_per_epoch), desc=f"{task_name}-{kind} epoch {epoch}/{epochs}",
                   disable=not progress, mininterval=5)
        for step in bar:
            index = batches[step]
            batch = victim.to_device(victim.encode([texts[i] for i in index]))
            with autocast:
                logits = victim.logits(batch)
            loss = torch.nn.functional.cross_entropy(logits.float(), labels[index].to(victim.device))
            optimizer.zero_grad()
            loss.backward()
            if victim.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(victim.parameters_to_train(), victim.max_grad_norm)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            total_loss += loss.item()
            bar.set_postfix(loss=f"{total_loss / (step + 1):.4f}", refresh=False)
        train_seconds = round(time.perf_counter() - started, 1)
        with autocast:
            history.append({"epoch": epoch, "loss": total_loss / max(steps_per_epoch, 1),
                            "train_seconds": train_seconds,
                            "attack": _evaluate(victim, attack_rows, f"{task_name}-{kind} attack.tsv", progress),
                            "dev": _evaluate(victim, dev_rows, f"{task_name}-{kind} dev.tsv", progress)})
        log.info("epoch %d: loss %.4f, dev F1 %.4f, attack F1 %.4f", epoch, history[-1]["loss"],
                 history[-1]["dev"]["f1"], history[-1]["attack"]["f1"])
        save_checkpoint(ckpt_dir, epoch, victim.trainable_state(), optimizer, scheduler,
                        {"history": history, "fingerprint": fingerprint})
        prune(ckpt_dir, {epoch, _choose(history, select)})

    chosen = _choose(history, select)
    victim.load_trainable_state(load_weights(ckpt_dir, chosen))
    files, extra = victim.save(out_dir)
    weights_hash = hash_files(files, extra)
    selected = history[chosen - 1]
    atomic_write_json(out_dir / METRICS_JSON, {
        "attack": selected["attack"], "dev": selected["dev"], "selected_epoch": chosen,
        "selection": "best dev F1" if select == "dev" else "last epoch", "history": history, **resolved.record()})
    atomic_write_json(info_path, dict(
        victim.describe(), name=f"{task_name}-{kind}", task=task_name, kind=kind, profile=prof.name,
        train_rows=len(train_rows), train_data=relative_path(train_path, out_dir), epochs=epochs, selected_epoch=chosen,
        seed=seed, batch_size=batch_size, lr=optimizer.param_groups[0].get("initial_lr", optimizer.param_groups[0]["lr"]),
        weights_hash=weights_hash, training=fingerprint, **resolved.record()))
    shutil.rmtree(ckpt_dir, ignore_errors=True)
    return out_dir
