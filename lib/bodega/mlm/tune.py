"""Light tuning of a built masked LM: the top encoder layers and the head, time-boxed.

Why this exists: with the encoder frozen, MiniLM's last hidden states (shaped for
sentence embeddings) recover few masked words. Unfreezing the top one or two layers
lets them learn to carry word identity to the head. To keep that cheap on a shared
CPU, each sentence is masked once (static masking, BERT's 80/10/10 corruption), the
frozen lower layers run once in inference mode, and their outputs are kept; training
then runs only the top layers and the head on those cached states. The softmax runs
over the WordPieces seen in the task text, as in :mod:`bodega.mlm.build`; the decoder
stays tied to the (frozen) input embeddings. Training stops after ``max_minutes`` of
steps (the caching before it is not counted) or ``epochs`` passes, whichever comes first.
"""
from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bodega.mlm.build import _save, corpus_counts, masked_batches, sample_sentences, seeded_generator, train_step
from bodega.mlm.corpus import task_sentences

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TuneConfig:
    """Settings of one tuning run."""

    tune_layers: int = 2
    sentences_per_task: int = 6000
    max_length: int = 64
    mask_probability: float = 0.15
    batch_size: int = 32
    layer_learning_rate: float = 1e-4
    head_learning_rate: float = 1e-3
    max_minutes: float = 11.0
    epochs: int = 3
    seed: int = 0
    threads: int = 2


def cached_lower_states(model, tokenizer, sentences: list[str], config: TuneConfig, generator, progress: bool):
    """Per batch: lower-layer outputs of the masked text, attention mask, masked positions and true ids."""
    import torch

    bert = model.bert
    lower = bert.encoder.layer[:len(bert.encoder.layer) - config.tune_layers]
    batches = []
    with torch.no_grad():  # not inference mode: the cached states feed autograd later
        for encoded, corrupted, chosen in masked_batches(model, tokenizer, sentences, config.batch_size,
                                                         config.max_length, config.mask_probability, generator,
                                                         "lower layers", progress, padding_is_special=True):
            if not chosen.any():
                continue
            extended = bert.get_extended_attention_mask(encoded["attention_mask"], corrupted.shape)
            hidden = bert.embeddings(input_ids=corrupted)
            for layer in lower:
                hidden = layer(hidden, attention_mask=extended)[0]
            batches.append((hidden.clone(), extended.clone(), chosen, encoded["input_ids"][chosen]))
    return batches


def tune_mlm(init_dir: str | Path, data_root: str | Path, out_dir: str | Path, config: TuneConfig = TuneConfig(),
             tasks: tuple[str, ...] | None = None, progress: bool = True) -> Path:
    """Tune the top ``tune_layers`` layers and the head of the masked LM in ``init_dir``; write ``out_dir``."""
    import torch
    from tqdm.auto import tqdm
    from transformers import AutoTokenizer, BertForMaskedLM

    started = time.perf_counter()
    generator = seeded_generator(config.threads, config.seed)
    tokenizer = AutoTokenizer.from_pretrained(init_dir, trust_remote_code=False)
    model = BertForMaskedLM.from_pretrained(init_dir, attn_implementation="eager").eval()
    corpus = task_sentences(data_root, "train", tasks)
    counts = corpus_counts(tokenizer, corpus, model.config.vocab_size)
    seen = torch.tensor(np.flatnonzero(counts), dtype=torch.long)
    sample = sample_sentences(corpus, config.sentences_per_task, np.random.default_rng(config.seed))
    batches = cached_lower_states(model, tokenizer, sample, config, generator, progress)

    upper = model.bert.encoder.layer[len(model.bert.encoder.layer) - config.tune_layers:]
    head = model.cls.predictions
    for p in model.parameters():
        p.requires_grad = False
    layer_params = [p for layer in upper for p in layer.parameters()]
    head_params = list(head.transform.parameters())
    for p in layer_params + head_params + [head.bias]:
        p.requires_grad = True
    optimiser = torch.optim.AdamW([{"params": layer_params, "lr": config.layer_learning_rate, "weight_decay": 0.01},
                                   {"params": head_params, "lr": config.head_learning_rate, "weight_decay": 0.01},
                                   {"params": [head.bias], "lr": config.head_learning_rate, "weight_decay": 0.0}])
    steps = config.epochs * len(batches)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: max(0.05, 1 - s / steps))
    remap = torch.full((model.config.vocab_size,), -1, dtype=torch.long)
    remap[seen] = torch.arange(len(seen))
    weight = model.bert.embeddings.word_embeddings.weight.detach()[seen]
    deadline = time.perf_counter() + 60 * config.max_minutes  # the time box counts training steps only
    losses: list[float] = []
    for layer in upper:
        layer.train()
    head.train()
    bar = tqdm(total=steps, desc="tuning top layers", disable=not progress)
    stopped_early = False
    for _ in range(config.epochs):
        for b in torch.randperm(len(batches), generator=generator).tolist():
            if time.perf_counter() > deadline:
                stopped_early = True
                break
            hidden, extended, chosen, targets = batches[b]
            for layer in upper:
                hidden = layer(hidden, attention_mask=extended)[0]
            logits = head.transform(hidden[chosen]) @ weight.T + head.bias[seen]
            loss = torch.nn.functional.cross_entropy(logits, remap[targets])
            train_step(loss, optimiser, schedule, losses, bar)
        if stopped_early:
            break
    bar.close()
    model.eval()
    for p in model.parameters():
        p.requires_grad = False
    info = dict(stage="tune", config=asdict(config), init=str(init_dir), data_root=str(data_root),
                sentences={t: len(s) for t, s in sorted(corpus.items())}, sampled_sentences=len(sample),
                steps=len(losses), planned_steps=steps, stopped_at_time_box=stopped_early,
                first_loss=float(np.mean(losses[:20])), final_loss=float(np.mean(losses[-50:])),
                seconds=round(time.perf_counter() - started, 1))
    return _save(model, tokenizer, Path(out_dir), info)
