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


TINY_WORDS = ["the", "evil", "enemy", "will", "attack", "our", "great", "nation", "corrupt", "traitors", "lie",
              "to", "destroy", "us", "kind", "calm", "fine", "good", "plan", "village", "they", "say", "press"]


def tiny_unigram_spec() -> dict:
    """A ``tokenizer.json`` like the GGUF-converted Gemma one: Unigram, scores are BPE merge ranks.

    Every prefix of every word (bare and after ``▁``) is a token, so BPE can build each word;
    the rank scores make the Unigram reading of it prefer single characters.
    """
    specials = ["<pad>", "<eos>", "<bos>", "<unk>"]
    chars = sorted(set("".join(TINY_WORDS)) | set("TCAR.,!?\n'\"") | {"▁"})
    pieces: list[str] = []
    for word in TINY_WORDS + [w.capitalize() for w in ("the", "corrupt", "they")]:
        for form in (word, "▁" + word):
            for end in range(2, len(form) + 1):
                if form[:end] not in pieces:
                    pieces.append(form[:end])
    bytes_ = [f"<0x{b:02X}>" for b in range(16)]  # scored 0, as the GGUF scores byte tokens
    vocab = ([[t, -1000.0] for t in specials] + [[t, 0.0] for t in bytes_]
             + [[t, -990.5 - i] for i, t in enumerate(chars + pieces)])  # like the GGUF: falling past -1000
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [dict(id=i, content=t, single_word=False, lstrip=False, rstrip=False, normalized=False,
                              special=True) for i, t in enumerate(specials)],
        "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                                      {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<bos>", "type_id": 0}},
                                    {"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<bos>": {"id": "<bos>", "ids": [2], "tokens": ["<bos>"]}}},
        "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                                                     {"type": "Fuse"}]},
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": False},
    }


def tiny_gemma(folder: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-wide random ``Gemma3ForCausalLM`` with the rank-scored Unigram tokenizer above."""
    import json

    import torch
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig, PreTrainedTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    spec = tiny_unigram_spec()
    (folder / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(folder / "spec.json"), bos_token="<bos>",
                                        eos_token="<eos>", pad_token="<pad>", unk_token="<unk>")
    tokenizer.save_pretrained(folder)
    (folder / "spec.json").unlink()
    torch.manual_seed(seed)
    config = Gemma3TextConfig(vocab_size=len(spec["model"]["vocab"]), hidden_size=32, intermediate_size=64,
                              num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, head_dim=16,
                              max_position_embeddings=256, sliding_window=64, pad_token_id=0, eos_token_id=1,
                              bos_token_id=2)
    Gemma3ForCausalLM(config).save_pretrained(folder, safe_serialization=True)
    return folder
