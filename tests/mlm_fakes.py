"""Tiny randomly initialised BERT-class models for the masked-LM tests (not a test module itself)."""
from __future__ import annotations

from pathlib import Path


def tiny_bert(folder: Path, masked_lm: bool = True, seed: int = 0) -> Path:
    """A 2-layer, 32-wide BERT with the MiniLM (bert-base-uncased) vocabulary, saved with its tokenizer."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, BertModel

    from bodega.resources import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("minilm").path)
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    model = BertForMaskedLM(config) if masked_lm else BertModel(config)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder
