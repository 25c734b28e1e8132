"""BODEGA's BiLSTM victim, trained from scratch on the bert-base-uncased WordPiece vocabulary.

Embedding 32, one bidirectional LSTM of 128 units per direction, the two final states
concatenated (256) and a linear layer to 2 classes; Adam with lr 1e-3. Unlike BODEGA,
sequences are packed by default, so padding never reaches the LSTM and a text's
prediction does not depend on the other texts in its batch; ``padding="right"`` runs the
LSTM over the right-padded batch as BODEGA's BiLSTM does (a listed deviation either way:
book/deviations.md measures the difference).
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from bodega.errors import BodegaError
from bodega.io import atomic_write_bytes, atomic_write_json
from bodega.victims.torch_victim import TOKENIZER_DIR, TorchVictim

EMBEDDING_DIM = 32
HIDDEN_DIM = 128
LEARNING_RATE = 1e-3
BATCH_SIZE = 32
PADDINGS = ("packed", "right")  # ours (batch-independent); BODEGA's (LSTM reads the right padding)


class BiLSTMClassifier(nn.Module):
    """Embedding, one bidirectional LSTM and a linear layer over the two final states."""

    def __init__(self, vocab_size: int, embedding_dim: int = EMBEDDING_DIM, hidden_dim: int = HIDDEN_DIM,
                 pad_id: int = 0, packed: bool = True):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, embedding_dim=embedding_dim, hidden_dim=hidden_dim,
                           pad_id=pad_id)
        if not packed:  # only then, so that packed models keep their config.json and weights hash
            self.config["packed"] = False
        self.packed = packed
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_id)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, batch_first=True, bidirectional=True)
        self.linear = nn.Linear(2 * hidden_dim, 2)

    def forward(self, input_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """Logits per row; packed by ``lengths`` unless the model reads padding as BODEGA's did."""
        embedded = self.embedding(input_ids)
        if not self.packed or (not self.training and bool((lengths == input_ids.shape[1]).all())):
            # BODEGA's way (padding read as input), or no padding at all (one text, or texts of one
            # length): then packing would change no number, only cost time.
            _, (final, _) = self.lstm(embedded)
        else:
            packed = pack_padded_sequence(embedded, lengths.cpu(), batch_first=True, enforce_sorted=False)
            _, (final, _) = self.lstm(packed)
        return self.linear(torch.cat([final[-2], final[-1]], dim=1))


def wordpiece_tokenizer(source: Path):
    """A fast uncased WordPiece tokenizer from a tokenizer folder, or (slower) from a vocab.txt file."""
    from transformers import BertTokenizerFast

    if Path(source).is_dir():
        return BertTokenizerFast.from_pretrained(source, do_lower_case=True)
    return BertTokenizerFast(vocab_file=str(source), do_lower_case=True)


class BiLSTMVictim(TorchVictim):
    """BODEGA's BiLSTM, trained from scratch with Adam; it stays fp32 at every precision."""

    kind = "BiLSTM"
    embedding_dim = EMBEDDING_DIM
    train_batch_size = BATCH_SIZE
    direct_tokenizer = True
    supports_bf16 = False  # 0.5-1.2x in bf16 (book: Performance): it stays fp32 at every precision

    @property
    def batch_invariant(self) -> bool:
        """Packed, yes; right-padded as BODEGA ran it, no: the LSTM reads its batch's padding."""
        return self.model.packed and super().batch_invariant

    def encode(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """WordPiece ids and each text's length (for packing)."""
        encoded = self.tokenize(texts)
        return {"input_ids": encoded["input_ids"], "lengths": encoded["attention_mask"].sum(dim=1)}

    def logits(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The BiLSTM's logits."""
        return self.model(batch["input_ids"], batch["lengths"])

    def make_optimizer(self, total_steps: int, lr: float | None = None):
        """Adam at BODEGA's rate (no scheduler)."""
        return torch.optim.Adam(self.parameters_to_train(), lr=lr or LEARNING_RATE), None

    @classmethod
    def create(cls, task: str, profile: str, seed: int, base_model: str | Path | None = None,
               quantize: bool | None = None, padding: str = "packed") -> "BiLSTMVictim":
        """A fresh BiLSTM on the WordPiece vocabulary, seeded; ``padding`` picks packed or BODEGA's right padding."""
        from bodega.resources import resolve

        if padding not in PADDINGS:
            raise BodegaError(f"BiLSTM padding must be one of {PADDINGS}, got {padding!r}")
        source = Path(base_model) if base_model else resolve("wordpiece-vocab").path
        tokenizer = wordpiece_tokenizer(source)
        torch.manual_seed(seed)
        model = BiLSTMClassifier(len(tokenizer), embedding_dim=cls.embedding_dim, pad_id=tokenizer.pad_token_id,
                                 packed=padding == "packed")
        cls.start_embeddings(model.embedding, tokenizer, profile)
        return cls(model, tokenizer, task, name=f"{task}-{cls.kind}")

    @classmethod
    def start_embeddings(cls, embedding: nn.Embedding, tokenizer, profile: str) -> None:
        """Where the embeddings start: BODEGA's BiLSTM learns them from its random initialisation."""

    @classmethod
    def load(cls, path: Path, info: dict, profile: str, weights_hash: str) -> "BiLSTMVictim":
        """The trained BiLSTM saved in ``path``."""
        from safetensors.torch import load_file

        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        tokenizer = wordpiece_tokenizer(path / TOKENIZER_DIR)
        model = BiLSTMClassifier(**config)
        model.load_state_dict(load_file(path / "model.safetensors"))
        model.eval()
        return cls(model, tokenizer, info["task"], name=info["name"], weights_hash=weights_hash)

    def save(self, out_dir: Path) -> tuple[list[Path], str]:
        """Write config, weights and tokenizer copy; return the files whose bytes define predictions."""
        from safetensors.torch import save

        atomic_write_json(out_dir / "config.json", self.model.config)
        atomic_write_bytes(out_dir / "model.safetensors", save(self.trainable_state()))
        self.tokenizer.save_pretrained(out_dir / TOKENIZER_DIR)
        return self.files_for_hash(out_dir, {})

    def describe(self) -> dict:
        """Padding, tokenizer and parameter count for victim.json."""
        return {"base_model": "none (trained from scratch)",
                "padding": "packed" if self.model.packed else "right (as BODEGA ran it)",
                "tokenizer": "bert-base-uncased WordPiece vocabulary (resource wordpiece-vocab)",
                "n_params": self.n_params}


class GloveBiLSTMVictim(BiLSTMVictim):
    """The BiLSTM with 50-d embeddings started from GloVe 6B (the profile's role, glove-6b-50d) where a whole-word
    WordPiece token has a vector (sub-word ``##`` pieces and words GloVe lacks keep the random start), then trained
    as the BiLSTM is. Why: BODEGA's BiLSTM learns its embeddings from 172,763 FC pairs and 60,235 HN articles; from
    the 702 FC pairs and 643 HN articles here it learns nothing (a named deviation, tried where that one fails)."""

    kind = "GloVeBiLSTM"
    embedding_dim = 50

    @classmethod
    def start_embeddings(cls, embedding: nn.Embedding, tokenizer, profile: str) -> None:
        """Copy each whole-word token's GloVe vector (the profile's role for this kind) into its embedding row."""
        import numpy as np
        import pandas as pd

        from bodega.profiles import get_profile
        from bodega.resources import resolve

        folder = resolve(get_profile(profile).models[cls.kind]).path
        words = pd.read_parquet(folder / "glove_6B_index.parquet")["index"].tolist()
        row_of = {word: row for row, word in enumerate(words)}
        vectors = np.load(folder / "glove_6B_50d_emb.npy", mmap_mode="r")
        if vectors.shape[1] != cls.embedding_dim:
            raise BodegaError(f"GloVe vectors in {folder} have {vectors.shape[1]} dimensions, not {cls.embedding_dim}")
        pairs = [(token_id, row_of[token]) for token, token_id in tokenizer.get_vocab().items()
                 if token in row_of and token_id != tokenizer.pad_token_id]
        ids, rows = (list(column) for column in zip(*pairs))
        with torch.no_grad():
            embedding.weight[ids] = torch.from_numpy(np.asarray(vectors[rows], dtype=np.float32))

    def describe(self) -> dict:
        """As the BiLSTM's, with where its embeddings started."""
        return dict(super().describe(), base_model="none (trained from GloVe-started embeddings)",
                    embeddings="GloVe 6B 50-d (resource glove-6b-50d) for every whole-word WordPiece token it "
                               "covers, random for the rest")
