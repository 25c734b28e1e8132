"""Train a victim on a task's ``train.tsv``, resumable at every evaluation point.

Training stops at evaluation points: the end of every epoch, and with ``eval_every`` N also after every
N training rows inside an epoch. Each point evaluates ``dev.tsv`` (F1, accuracy, ROC AUC) and writes an atomic
checkpoint; the points make the learning curve, which shows on dev how many rows and epochs a victim needs.
Restarting the same command continues after the last point and gives the same result as an uninterrupted
run (shuffling is seeded per epoch, dropout per point). The kept point is the profile's choice (``paper``:
the last one, as BODEGA), or with ``select="dev"`` the point with the best dev F1, where ``patience`` P
stops training once P points in a row have not bettered it. ``attack.tsv`` is evaluated once, for the kept
model: attack-set numbers are recorded, never used to choose.
"""
from __future__ import annotations

import hashlib
import logging
import math
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bodega.errors import BodegaError
from bodega.data import read_tsv
from bodega.io import atomic_write_json, exclusive_lock, relative_path
from bodega.profiles import get_profile
from bodega.tasks import get_task
from bodega.victims.base import argmax_predictions, hash_files
from bodega.victims.competence import competence, roc_auc
from bodega.victims.metrics import f1_accuracy
from bodega.layout import CELL_MARKER, METRICS, RUN_LOCK, VICTIM_INFO, CellName
from bodega.records import TrainingFingerprint, VictimInfo, write_victim_info

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
    """The kept evaluation point: the last, or the best dev F1 (the earlier point on a tie)."""
    if select == "last":
        return history[-1]["point"]
    return max(history, key=lambda h: (h["dev"]["f1"], -h["point"]))["point"]


def _stops_early(history: list[dict], patience: int) -> bool:
    """Whether the last ``patience`` points have all failed to better the best dev F1 (0: never stop)."""
    return bool(patience and history) and len(history) - _choose(history, "dev") >= patience


def training_fingerprint(task: str, victim_kind: str, data_dir: str | Path, profile: str = "cpu",
                         max_train: int = 0, epochs: int | None = None, seed: int = 0,
                         **options: Any) -> TrainingFingerprint:
    """The settings ``train_victim`` records in ``victim.json`` (``training``) for these arguments
    (``options``: the other fields of :class:`TrainingOptions`), with the profile's defaults filled in.

    A finished model folder with the same fingerprint is the model these arguments would train.
    ``precision`` enters as the family trains in it (:func:`training_precision`)."""
    from bodega.precision import resolve_precision
    from bodega.victims.kinds import normalise_kind, victim_class

    settings = TrainingOptions(profile=profile, max_train=max_train, epochs=epochs, seed=seed, **options)
    kind, prof, task_name = normalise_kind(victim_kind), get_profile(profile), get_task(task).name
    base_model = str(settings.base_model) if settings.base_model else None
    return TrainingFingerprint(
        task=task_name, kind=kind, profile=prof.name, epochs=int(epochs or prof.epochs_for(task_name, kind)),
        seed=seed, max_train=max_train or prof.max_train, train_sha256=_file_sha(Path(data_dir) / "train.tsv"),
        base_model=base_model, select=settings.select or prof.select,
        batch_size=int(settings.batch_size or victim_class(kind).train_batch_size), quantize=settings.quantize,
        lr=settings.lr, bilstm_padding=settings.bilstm_padding, max_dev=settings.max_dev,
        eval_every=settings.eval_every, patience=settings.patience,
        precision=training_precision(kind, resolve_precision(settings.precision).name),
        # the profile's base model is named by its resource role: a role may change model
        base_role=prof.models.get(kind) if base_model is None else None,
        finetuning=prof.finetuning_for(kind))


def training_precision(kind: str, precision: str) -> str:
    """The precision a kind trains in when ``precision`` (resolved: fp32 or bf16) is asked for: bf16 only for a
    kind trained under bf16 autocast (see :mod:`bodega.victims.kinds`)."""
    from bodega.victims.kinds import VICTIM_KINDS

    return "bf16" if precision == "bf16" and VICTIM_KINDS[kind].bf16_autocast else "fp32"


@dataclass(frozen=True)
class TrainingOptions:
    """How to train a victim (see :func:`train_victim` for each option's meaning)."""

    profile: str = "cpu"
    max_train: int = 0
    epochs: int | None = None
    seed: int = 0
    base_model: str | Path | None = None
    select: str | None = None
    batch_size: int | None = None
    quantize: bool | None = None
    lr: float | None = None
    progress: bool = True
    bilstm_padding: str = "packed"
    max_dev: int = 0
    precision: Any = None
    eval_every: int = 0
    patience: int = 0


@dataclass
class _Plan:
    """Everything settled before the first weight is touched: data, family, resolved settings, fingerprint."""

    task: str
    kind: str
    profile: str
    select: str
    epochs: int
    batch_size: int
    seed: int
    options: TrainingOptions
    cls: type
    create_options: dict
    train_path: Path
    train_rows: list
    attack_rows: list
    dev_rows: list
    fingerprint: TrainingFingerprint
    precision: Any  # the resolved bodega.precision.Precision training runs in

    @property
    def steps_per_epoch(self) -> int:
        return math.ceil(len(self.train_rows) / self.batch_size)

    def segments(self) -> list[tuple[int, int, int]]:
        """(epoch, first step, end step) of the training between consecutive evaluation points."""
        per_epoch = self.steps_per_epoch
        span = math.ceil(self.options.eval_every / self.batch_size) if self.options.eval_every else per_epoch
        return [(epoch, start, min(start + span, per_epoch))
                for epoch in range(1, self.epochs + 1) for start in range(0, per_epoch, span)]


def train_victim(task: str, victim_kind: str, data_dir: str | Path, out_dir: str | Path, profile: str = "cpu",
                 max_train: int = 0, epochs: int | None = None, seed: int = 0, **options) -> Path:
    """Train (or resume, or skip when already complete) and return ``out_dir``.

    ``max_train`` 0 means every training row (the smoke profile caps it); ``epochs`` None
    takes the profile's value. Keyword options (:class:`TrainingOptions`): ``base_model`` overrides the
    resolved base model or vocabulary (tests use tiny local models); ``quantize`` None means 4-bit where
    the profile is ``paper`` (QLoRA), for Gemma only; ``lr`` None keeps the family's peak
    learning rate; ``select`` None takes the profile's; ``bilstm_padding="right"`` trains a
    BiLSTM that reads its padding, as BODEGA's did. ``max_dev`` N evaluates each epoch on a seeded
    random N dev rows (0: all): a decoder LM on two CPU cores needs a minute per 150 dev texts.
    ``precision`` (fp32, bf16, auto; None: fp32): bf16 trains and evaluates the BERT family under bf16
    autocast (fp32 master weights), and the decoders' LoRA likewise; the BiLSTM trains in fp32 at any precision.
    ``eval_every`` N adds an evaluation point after every N training rows (0: at epoch ends only), and
    ``patience`` P (with ``select="dev"``) stops after P points without a better dev F1 (0: never early).
    """
    settings = TrainingOptions(profile=profile, max_train=max_train, epochs=epochs, seed=seed, **options)
    plan = _prepare(task, victim_kind, Path(data_dir), settings)
    out = Path(out_dir)
    # the lock `attack` and `score` take: a second training of this folder is refused while the first runs
    with exclusive_lock(out / RUN_LOCK, subject=out):
        return _train_locked(plan, out)


def _train_locked(plan: _Plan, out: Path) -> Path:
    """Train into ``out`` (locked) as :func:`train_victim` says."""
    from bodega.victims.checkpoint import load_weights, prune, save_checkpoint

    _refuse_a_folder_it_did_not_make(out)
    if _already_trained(out, plan.fingerprint):
        log.info("%s is already trained with these settings; nothing to do", out)
        return out
    victim, optimizer, scheduler, history = _resume(plan, out)
    segments = plan.segments()
    while len(history) < len(segments) and not _stops_early(history, plan.options.patience):
        point = len(history) + 1
        history.append(_train_segment(plan, victim, optimizer, scheduler, segments[point - 1], point))
        save_checkpoint(out / CHECKPOINTS, point, victim.trainable_state(), optimizer, scheduler,
                        {"history": history, "fingerprint": plan.fingerprint.to_dict()})
        prune(out / CHECKPOINTS, {point, _choose(history, plan.select)})
    chosen = _choose(history, plan.select)
    victim.load_trainable_state(load_weights(out / CHECKPOINTS, chosen))
    _save(plan, victim, optimizer, history, chosen, out)
    return out


def _prepare(task: str, victim_kind: str, data_dir: Path, options: TrainingOptions) -> _Plan:
    """Resolve the profile's defaults, read the data and check the options, before any training."""
    from bodega.precision import FP32, resolve_precision
    from bodega.victims.kinds import normalise_kind, victim_class

    task_name = get_task(task).name
    kind = normalise_kind(victim_kind)
    prof = get_profile(options.profile)
    resolved = resolve_precision(options.precision)
    if training_precision(kind, resolved.name) != resolved.name:
        log.info("%s trains in fp32 at --precision %s", kind, resolved.name)
        resolved = FP32
    select = options.select or prof.select
    if select not in SELECTIONS:
        raise BodegaError(f"select must be one of {SELECTIONS}, got {select!r}")
    if options.epochs is not None and (isinstance(options.epochs, bool) or not isinstance(options.epochs, int)
                                       or options.epochs < 1):
        raise BodegaError("epochs (--epochs) must be an integer >= 1, or absent for the profile's value; "
                          f"got {options.epochs!r}")
    epochs = int(options.epochs or prof.epochs_for(task_name, kind))
    train_path = data_dir / "train.tsv"
    train_rows = _subset(read_tsv(train_path), options.max_train or prof.max_train, options.seed)
    if not train_rows:
        raise BodegaError(f"{train_path} has no rows: nothing to train on; prepare the task again "
                          "(`bodega data prepare`) or give --data a folder with training rows")
    attack_rows = read_tsv(data_dir / "attack.tsv")
    dev_rows = _subset(read_tsv(data_dir / "dev.tsv"), options.max_dev, options.seed)
    cls = victim_class(kind)
    batch_size = int(options.batch_size or cls.train_batch_size)
    if options.lr is not None and not options.lr > 0:
        raise BodegaError(f"lr must be a positive number, got {options.lr!r}")
    for name in ("eval_every", "patience"):
        value = getattr(options, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BodegaError(f"{name} must be an integer >= 0 (0: off), got {value!r}")
    if options.patience and select != "dev":
        raise BodegaError(f"patience stops on dev F1 and needs select='dev', not {select!r}")
    create_options: dict = {}
    if options.bilstm_padding != "packed":
        if kind != "BiLSTM":
            raise BodegaError(f"bilstm_padding={options.bilstm_padding!r} applies to the BiLSTM only, not {kind}")
        create_options["padding"] = options.bilstm_padding
    fingerprint = training_fingerprint(task_name, kind, data_dir, prof.name, options.max_train, epochs,
                                       options.seed, base_model=options.base_model, select=select,
                                       batch_size=batch_size, quantize=options.quantize, lr=options.lr,
                                       bilstm_padding=options.bilstm_padding, max_dev=options.max_dev,
                                       precision=resolved, eval_every=options.eval_every,
                                       patience=options.patience)
    return _Plan(task_name, kind, prof.name, select, epochs, batch_size, options.seed, options, cls,
                 create_options, train_path, train_rows, attack_rows, dev_rows, fingerprint, resolved)


def _refuse_a_folder_it_did_not_make(out_dir: Path) -> None:
    """Refuse an ``--out`` holding files that no training put there: training writes its ``config.json``,
    ``metrics.json`` and model files over theirs and deletes its ``checkpoints`` folder at the end. A folder of a
    victim (``victim.json``), of an interrupted training (only ``point-*`` files in ``checkpoints``) or of a grid
    cell (its marker) is training's to write; hidden files (the lock, temporary files) are no one's."""
    if not out_dir.is_dir() or (out_dir / VICTIM_INFO).exists() or (out_dir / CELL_MARKER).exists():
        return
    checkpoints = out_dir / CHECKPOINTS
    if checkpoints.is_dir() and all(p.name.startswith(("point-", ".")) for p in checkpoints.iterdir()):
        return
    foreign = sorted(p.name for p in out_dir.iterdir() if not p.name.startswith("."))
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise BodegaError(f"--out {out_dir} holds files that no training wrote ({shown}); training would write over "
                          "them: give --out a new or empty folder")


def _already_trained(out_dir: Path, fingerprint: TrainingFingerprint) -> bool:
    """Whether ``out_dir`` holds a finished victim of these settings; one of other settings is refused, not
    overwritten (the grid wipes a cell's folder of other inputs itself before training)."""
    info_path = out_dir / VICTIM_INFO
    if not info_path.exists():
        return False
    from bodega.victims.modeldir import read_victim_info, weights_problem

    recorded = read_victim_info(out_dir).training
    if recorded == fingerprint:
        problem = weights_problem(out_dir)
        if problem is None:
            return True
        log.warning("%s was trained with these settings, but %s: training it again", out_dir, problem)
        return False
    different = fingerprint.differences(recorded)
    raise BodegaError(f"{out_dir} holds a finished victim trained with other settings ({', '.join(different)}"
                      f"{'; task ' + str(recorded.task) if recorded and 'task' in different else ''}); training would "
                      "overwrite it: give --out another folder, or delete this one first")


def _resume(plan: _Plan, out_dir: Path):
    """A fresh victim with its optimizer, restored from the last checkpoint of the same settings if any."""
    from bodega.victims.checkpoint import latest_checkpoint, restore

    ckpt_dir = out_dir / CHECKPOINTS
    record = latest_checkpoint(ckpt_dir) if ckpt_dir.exists() else None
    if record is not None and _checkpoint_fingerprint(record, ckpt_dir) != plan.fingerprint:
        log.warning("%s holds checkpoints of other settings; starting afresh", ckpt_dir)
        shutil.rmtree(ckpt_dir)
        record = None
    # An old model in this folder stops being loadable before any new weights are written.
    (out_dir / VICTIM_INFO).unlink(missing_ok=True)
    (out_dir / METRICS).unlink(missing_ok=True)

    options = plan.options
    victim = plan.cls.create(plan.task, plan.profile, plan.seed, base_model=options.base_model,
                             quantize=options.quantize, **plan.create_options)
    optimizer, scheduler = victim.make_optimizer(plan.epochs * plan.steps_per_epoch, options.lr)
    history: list[dict] = []
    if record is not None:
        victim.load_trainable_state(restore(ckpt_dir, record, optimizer, scheduler))
        history = record["history"]
        log.info("resuming %s after evaluation point %d", out_dir, record["point"])
    return victim, optimizer, scheduler, history


def _checkpoint_fingerprint(record: dict, ckpt_dir: Path) -> TrainingFingerprint | None:
    """The settings a checkpoint was trained with (None when it records none readable)."""
    try:
        return TrainingFingerprint.from_dict(record.get("fingerprint"), str(ckpt_dir))
    except BodegaError:
        return None


def _train_segment(plan: _Plan, victim, optimizer, scheduler, segment: tuple[int, int, int], point: int) -> dict:
    """The steps of one segment of an epoch (the epoch's batch order seeded per epoch, dropout per point, so a
    resumed run is the same) and the dev evaluation that ends it: one point of the learning curve."""
    import torch
    from tqdm.auto import tqdm

    epoch, first, end = segment
    labels = torch.tensor([row.label for row in plan.train_rows], dtype=torch.long)
    texts = [row.text for row in plan.train_rows]
    torch.manual_seed(plan.seed * 1000 + epoch + 7919 * first)
    batches = _batches(np.random.default_rng([plan.seed, epoch]), np.array([len(t) for t in texts]),
                       victim.bucket_batches, plan.batch_size)
    victim.model.train()
    autocast = torch.autocast(victim.device.type, dtype=torch.bfloat16, enabled=plan.precision.is_bf16)
    started, total_loss = time.perf_counter(), 0.0
    bar = tqdm(range(first, end), desc=f"{plan.task}-{plan.kind} epoch {epoch}/{plan.epochs} point {point}",
               disable=not plan.options.progress, mininterval=5)
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
        bar.set_postfix(loss=f"{total_loss / (step - first + 1):.4f}", refresh=False)
    seconds = round(time.perf_counter() - started, 1)
    recorder = _RecordingVictim(victim)
    with autocast:
        dev = _evaluate(recorder, plan.dev_rows, f"{plan.task}-{plan.kind} dev.tsv", plan.options.progress)
    dev["roc_auc"] = roc_auc([row.label for row in plan.dev_rows], recorder.p_positive)
    rows_seen = (epoch - 1) * len(texts) + min(end * plan.batch_size, len(texts))
    entry = {"point": point, "epoch": epoch, "rows_seen": rows_seen, "loss": total_loss / max(end - first, 1),
             "train_seconds": seconds, "dev": dev}
    log.info("point %d (epoch %d, %d rows seen): loss %.4f, dev F1 %.4f, dev AUC %.4f", point, epoch, rows_seen,
             entry["loss"], dev["f1"], dev["roc_auc"])
    return entry


class _RecordingVictim:
    """Passes predictions through and keeps the probability of class 1 of every text, so that one pass
    over the attack set gives both F1 and the ROC AUC of :mod:`bodega.victims.competence`."""

    def __init__(self, victim) -> None:
        self.victim = victim
        self.probabilities: list[np.ndarray] = []

    def predict(self, texts: list[str]) -> np.ndarray:
        probabilities = np.asarray(self.victim.predict_proba(texts))
        self.probabilities.append(probabilities)
        return argmax_predictions(probabilities)

    @property
    def all_probabilities(self) -> np.ndarray:
        """The ``(n, 2)`` probabilities of every text so far, in order."""
        return np.concatenate(self.probabilities) if self.probabilities else np.zeros((0, 2))

    @property
    def p_positive(self) -> list[float]:
        """The probability of class 1 of every text so far, in order."""
        return [float(p) for p in self.all_probabilities[:, 1]]


def _save(plan: _Plan, victim, optimizer, history: list[dict], chosen: int, out_dir: Path) -> None:
    """Evaluate the kept model on attack.tsv; write it, metrics.json (with its attack-set competence) and
    victim.json last."""
    import torch

    from bodega.victims.predictions import write_predictions

    # Saved first: an adapter stored in the run precision is rounded to it in memory as well, so that the
    # attack-set numbers below are those of the victim on disk.
    victim.storage = plan.precision.name
    files, extra = victim.save(out_dir)
    weights_hash = hash_files(files, extra)
    recorder = _RecordingVictim(victim)
    with torch.autocast(victim.device.type, dtype=torch.bfloat16, enabled=plan.precision.is_bf16):
        attack = _evaluate(recorder, plan.attack_rows, f"{plan.task}-{plan.kind} attack.tsv", plan.options.progress)
    quality = competence([row.label for row in plan.attack_rows], recorder.p_positive).to_dict()
    write_predictions(out_dir, plan.attack_rows, recorder.all_probabilities, weights_hash,
                      plan.train_path.parent / "attack.tsv", "bodega train")
    selected = history[chosen - 1]
    stopped_early = len(history) < len(plan.segments())
    atomic_write_json(out_dir / METRICS, {
        "attack": attack, "dev": selected["dev"], "attack_quality": quality,
        "selected_epoch": selected["epoch"], "selected_point": chosen, "selected_rows_seen": selected["rows_seen"],
        "selection": "best dev F1" if plan.select == "dev" else "last point", "stopped_early": stopped_early,
        "history": history, **plan.precision.record(), "weights_hash": weights_hash})
    write_victim_info(out_dir, VictimInfo(
        kind=plan.kind, weights_hash=weights_hash, name=str(CellName(plan.task, plan.kind)), task=plan.task,
        profile=plan.profile, train_rows=len(plan.train_rows), train_data=relative_path(plan.train_path, out_dir),
        epochs=plan.epochs, selected_epoch=selected["epoch"], selected_rows_seen=selected["rows_seen"],
        seed=plan.seed, batch_size=plan.batch_size,
        lr=optimizer.param_groups[0].get("initial_lr", optimizer.param_groups[0]["lr"]),
        training=plan.fingerprint, family=victim.describe(), **plan.precision.record()))
    shutil.rmtree(out_dir / CHECKPOINTS, ignore_errors=True)
