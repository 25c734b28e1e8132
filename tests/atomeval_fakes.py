"""Tiny random chat models for the AtomEval tests: a word-piece tokenizer with a chat template and a one-layer
Llama, built in a temporary folder (no download)."""
from __future__ import annotations


def word_piece_tokenizer(folder):
    """The packaged word-piece vocabulary as a fast tokenizer, saved to ``folder``; returns (folder, tokenizer)."""
    from transformers import BertTokenizerFast

    from bodega.resources import resolve

    tokenizer = BertTokenizerFast(vocab_file=str(resolve("wordpiece-vocab").path / "vocab.txt"))
    tokenizer.save_pretrained(folder)
    return folder, tokenizer


def save_chat_tokenizer(folder, tokenizer) -> None:
    """Give the test tokenizer a minimal chat template and save it beside a tiny model."""
    tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}assistant:{% endif %}")
    tokenizer.save_pretrained(folder)


def tiny_chat_model(folder, tokenizer):
    """A tiny random Llama (SmolLM2's architecture class) with a chat template, saved to ``folder``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    LlamaForCausalLM(LlamaConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, intermediate_size=48,
                                 num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                 max_position_embeddings=1024, bos_token_id=tokenizer.cls_token_id,
                                 eos_token_id=tokenizer.sep_token_id,
                                 pad_token_id=tokenizer.pad_token_id)).save_pretrained(folder)
    save_chat_tokenizer(folder, tokenizer)
    return folder
