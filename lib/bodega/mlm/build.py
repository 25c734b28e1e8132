"""Fit BERT's masked-LM head onto the packaged MiniLM encoder with task training text.

Why this shape: all-MiniLM-L6-v2 is a BERT-class encoder with the bert-base-uncased
WordPiece vocabulary but no prediction head (it was tuned for sentence embeddings).
``BertForMaskedLM`` on its weights gets BERT's head: a dense + GELU + LayerNorm
transform and a decoder tied to the input word embeddings. The encoder and the
embeddings stay frozen, so only the transform and the output bias are trained.

That choice is about cost on a 2-core machine: with a frozen encoder the masked
sentences are encoded once (inference mode, length-sorted batches), the hidden states
at the masked positions are kept, and the head trains for several epochs on those
features alone. The softmax during training runs over the WordPieces that occur in
the training text (their number is in ``build.json``); every other WordPiece keeps the
add-one log frequency the output bias starts from, far below any seen word, so the
model proposes only words seen in task text. The bias starts at each WordPiece's log
frequency, so the head begins as a unigram model and training learns the context.
"""
from __future__ import annotations

import json
import logging
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bodega.io import atomic_write_json
from bodega.mlm.corpus import task_sentences

log = logging.getLogger(__name__)

BUILD_INFO = "build.json"


@dataclass(frozen=True)
class MLMConfig:
    """Settings of one build; the defaults take a few minutes on one core."""

    sentences_per_task: int = 1500
    max_length: int = 64
    mask_probability: float = 0.15
    encode_batch_size: int = 64
    epochs: int = 8
    batch_size: int = 256
    learning_rate: float = 3e-3
    seed: int = 0
    threads: int = 1


def default_output() -> Path:
    """Where ``bodega.resources.resolve("minilm-mlm")`` looks for the built model."""
    from bodega.resources import cache_dir

    return cache_dir() / "minilm-mlm"


def token_counts(tokenizer, sentences: list[str], vocab_size: int) -> np.ndarray:
    """How often each WordPiece occurs in ``sentences``."""
    counts = np.zeros(vocab_size, dtype=np.int64)
    for start in range(0, len(sentences), 1000):
        for ids in tokenizer(sentences[start:start + 1000], add_special_tokens=False)["input_ids"]:
            np.add.at(counts, ids, 1)
    return counts


def corpus_counts(tokenizer, corpus: dict[str, list[str]], vocab_size: int) -> np.ndarray:
    """WordPiece counts over every task's sentences (tasks in name order), special tokens at 0."""
    counts = token_counts(tokenizer, [s for t in sorted(corpus) for s in corpus[t]], vocab_size)
    counts[tokenizer.all_special_ids] = 0
    return counts


def seeded_generator(threads: int, seed: int):
    """torch's thread count and global seed set, and a generator for the masks, as both build and tune start."""
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def mask_tokens(input_ids, special, probability: float, mask_id: int, vocab_size: int, generator):
    """BERT's corruption: of the chosen positions 80% [MASK], 10% a random token, 10% unchanged."""
    import torch

    chosen = torch.bernoulli(torch.full(input_ids.shape, probability), generator=generator).bool() & ~special
    corrupted = input_ids.clone()
    draw = torch.rand(input_ids.shape, generator=generator)
    corrupted[chosen & (draw < 0.8)] = mask_id
    random_positions = chosen & (draw >= 0.8) & (draw < 0.9)
    corrupted[random_positions] = torch.randint(vocab_size, input_ids.shape, generator=generator)[random_positions]
    return corrupted, chosen


def sample_sentences(corpus: dict[str, list[str]], per_task: int, rng: np.random.Generator) -> list[str]:
    """Up to ``per_task`` sentences of each task: a small task is not drowned by a big one."""
    out: list[str] = []
    for task in sorted(corpus):
        sentences = corpus[task]
        picks = rng.permutation(len(sentences))[:per_task]
        out.extend(sentences[int(i)] for i in picks)
    return out


def masked_batches(model, tokenizer, sentences: list[str], batch_size: int, max_length: int,
                   mask_probability: float, generator, desc: str, progress: bool, padding_is_special: bool = False):
    """Length-sorted batches of ``sentences``, tokenised and masked: ``(encoded, corrupted ids, masked positions)``.

    The one place where build and tune corrupt their text, so both draw their masks from
    ``generator`` in the same order. ``padding_is_special`` never masks padding positions.
    """
    import torch
    from tqdm.auto import tqdm

    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    special_ids = torch.tensor(tokenizer.all_special_ids)
    for start in tqdm(range(0, len(order), batch_size), desc=desc, disable=not progress):
        batch = [sentences[i] for i in order[start:start + batch_size]]
        encoded = tokenizer(batch, truncation=True, max_length=max_length, padding=True, return_tensors="pt")
        special = torch.isin(encoded["input_ids"], special_ids)
        if padding_is_special:
            special = special | (encoded["attention_mask"] == 0)
        corrupted, chosen = mask_tokens(encoded["input_ids"], special, mask_probability,
                                        tokenizer.mask_token_id, model.config.vocab_size, generator)
        yield encoded, corrupted, chosen


def masked_features(model, tokenizer, sentences: list[str], config: MLMConfig, generator, progress: bool):
    """Hidden states of the frozen encoder at masked positions, and the true WordPieces there."""
    import torch

    features, targets = [], []
    with torch.inference_mode():
        for encoded, corrupted, chosen in masked_batches(model, tokenizer, sentences, config.encode_batch_size,
                                                         config.max_length, config.mask_probability, generator,
                                                         "encoding masked text", progress):
            hidden = model.bert(input_ids=corrupted, attention_mask=encoded["attention_mask"]).last_hidden_state
            features.append(hidden[chosen].clone())
            targets.append(encoded["input_ids"][chosen].clone())
    return torch.cat(features), torch.cat(targets)


def train_step(loss, optimiser, schedule, losses: list[float], bar) -> None:
    """One optimiser step on ``loss``, its value kept and the progress bar's running loss updated."""
    loss.backward()
    optimiser.step()
    schedule.step()
    optimiser.zero_grad()
    losses.append(loss.item())
    bar.update(1)
    bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")


def train_head(model, features, targets, seen, config: MLMConfig, generator, progress: bool) -> list[float]:
    """Train the head's transform and bias on cached features; softmax over the ``seen`` WordPieces."""
    import torch
    from tqdm.auto import tqdm

    head = model.cls.predictions
    for p in model.parameters():
        p.requires_grad = False
    params = list(head.transform.parameters()) + [head.bias]
    for p in params:
        p.requires_grad = True
    # No weight decay on the bias: it would lift the log frequency of WordPieces the softmax never sees.
    optimiser = torch.optim.AdamW([{"params": params[:-1], "weight_decay": 0.01},
                                   {"params": [head.bias], "weight_decay": 0.0}], lr=config.learning_rate)
    steps = config.epochs * -(-len(targets) // config.batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: max(0.0, 1 - s / steps))
    remap = torch.full((model.config.vocab_size,), -1, dtype=torch.long)
    remap[seen] = torch.arange(len(seen))
    weight = model.bert.embeddings.word_embeddings.weight.detach()[seen]
    local_targets = remap[targets]
    losses: list[float] = []
    head.train()
    bar = tqdm(total=steps, desc="masked-LM head", disable=not progress)
    for _ in range(config.epochs):
        order = torch.randperm(len(targets), generator=generator)
        for start in range(0, len(order), config.batch_size):
            rows = order[start:start + config.batch_size]
            logits = head.transform(features[rows]) @ weight.T + head.bias[seen]
            loss = torch.nn.functional.cross_entropy(logits, local_targets[rows])
            train_step(loss, optimiser, schedule, losses, bar)
    bar.close()
    head.eval()
    return losses


def build_mlm(data_root: str | Path, out_dir: str | Path | None = None, config: MLMConfig = MLMConfig(),
              encoder_dir: str | Path | None = None, tasks: tuple[str, ...] | None = None,
              progress: bool = True) -> Path:
    """Train the head on ``<data_root>/<TASK>/train.tsv`` text and write a masked-LM folder.

    The folder (safetensors weights, tokenizer, ``build.json`` with the settings, the
    tasks and sentence counts used and the losses) is written under a temporary name
    and renamed into place, so a crash never leaves a half-written model.
    """
    import torch
    from transformers import AutoTokenizer, BertForMaskedLM
    from transformers.utils import logging as hf_logging

    from bodega.resources import resolve

    out = Path(out_dir) if out_dir else default_output()
    encoder = Path(encoder_dir) if encoder_dir else resolve("minilm").path
    corpus = task_sentences(data_root, "train", tasks)
    log.info("masked-LM text: %s", ", ".join(f"{t} {len(s)} sentences" for t, s in sorted(corpus.items())))

    started = time.perf_counter()
    generator = seeded_generator(config.threads, config.seed)
    tokenizer = AutoTokenizer.from_pretrained(encoder, trust_remote_code=False)
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the head is new by design; no "newly initialized" warning
    model = BertForMaskedLM.from_pretrained(encoder).eval()
    hf_logging.set_verbosity(verbosity)

    counts = corpus_counts(tokenizer, corpus, model.config.vocab_size)
    with torch.no_grad():
        bias = np.log((counts + 1) / (counts + 1).sum())
        model.cls.predictions.bias.copy_(torch.tensor(bias, dtype=model.cls.predictions.bias.dtype))
    sample = sample_sentences(corpus, config.sentences_per_task, np.random.default_rng(config.seed))
    features, targets = masked_features(model, tokenizer, sample, config, generator, progress)
    seen = torch.tensor(np.union1d(np.flatnonzero(counts), targets.unique().numpy()), dtype=torch.long)
    losses = train_head(model, features, targets, seen, config, generator, progress)

    info = dict(config=asdict(config), encoder=str(encoder), data_root=str(data_root),
                sentences={t: len(s) for t, s in sorted(corpus.items())}, sampled_sentences=len(sample),
                masked_positions=int(len(targets)), output_wordpieces=int(len(seen)),
                first_loss=float(np.mean(losses[:20])), final_loss=float(np.mean(losses[-20:])),
                seconds=round(time.perf_counter() - started, 1))
    return _save(model, tokenizer, out, info)


def _save(model, tokenizer, out: Path, info: dict) -> Path:
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    atomic_write_json(tmp / BUILD_INFO, info)
    if out.exists():
        old = out.with_name(out.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        out.rename(old)
        tmp.rename(out)
        shutil.rmtree(old)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(out)
    log.info("masked LM written to %s (%s)", out, json.dumps(info["sentences"]))
    return out
