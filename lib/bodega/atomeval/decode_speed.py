"""Tokens per second of a local rewriter in fp32 and in bf16, on a handful of real rewrite prompts.

The rewriter's cost on a CPU is reading the prompt (prefill) and decoding the answer; both are timed
separately, on the same batch, with a fixed number of new tokens so that the two precisions decode the
same amount. Kept tiny (a few claims, a few dozen tokens): it decides the precision, it is not a benchmark.
"""
from __future__ import annotations

import time
from pathlib import Path

from bodega.errors import BodegaError


def decode_speed(model: str, data_dir: str | Path, precisions: tuple[str, ...] = ("fp32", "bf16"),
                 n_claims: int = 4, new_tokens: int = 24, family: str = "colloquial",
                 threads: int | None = None) -> dict:
    """``{precision: {prefill_seconds, prefill_tokens_per_second, decode_seconds, tokens_per_second, ...}}``."""
    import torch

    from bodega.atomeval.factories import make_client
    from bodega.atomeval.fever import refuted_claims
    from bodega.atomeval.rewriters import LLMRewriter

    if model.startswith("openai:"):  # an endpoint: no local prefill and decoding to time
        raise BodegaError(f"--rewriter {model}: decode-speed times a local model's prefill and decoding; give "
                          "transformers:<path or resource role>")
    if threads:
        torch.set_num_threads(threads)
    claims = refuted_claims(data_dir, "attack", n_claims)
    report: dict = {"model": model, "claims": len(claims), "new_tokens": new_tokens, "family": family,
                    "threads": torch.get_num_threads(), "cpu_flags": _bf16_flags(), "precisions": {}}
    for precision in precisions:
        client = make_client(model, threads, precision, batch_size=len(claims))
        rewriter = LLMRewriter(client)
        prompts = [client.prompt(rewriter.messages(c.claim, c.evidence, family)) for c in claims]
        batch = client._tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
        pad = client._tokenizer.pad_token_id
        with torch.inference_mode():
            client._model(**batch)  # warm-up: first-call allocations are not the precision's cost
            started = time.perf_counter()
            client._model(**batch)
            prefill = time.perf_counter() - started
            started = time.perf_counter()
            client._model.generate(**batch, do_sample=False, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
                                   pad_token_id=pad)
            total = time.perf_counter() - started
        prompt_tokens = int(batch["attention_mask"].sum())
        decoded = len(claims) * new_tokens
        report["precisions"][client.precision] = {
            "prompt_tokens": prompt_tokens, "prefill_seconds": round(prefill, 2),
            "prefill_tokens_per_second": round(prompt_tokens / prefill, 1),
            "generate_seconds": round(total, 2), "decode_seconds": round(max(total - prefill, 0.0), 2),
            "tokens_per_second": round(decoded / total, 2),
            "decode_tokens_per_second": round(decoded / max(total - prefill, 1e-9), 2)}
        del client
    return report


def _bf16_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> list[str]:
    """The CPU's bf16-related flags (``amx_bf16``, ``avx512_bf16``), to say why one precision is faster."""
    path = Path(cpuinfo)
    if not path.exists():
        return []
    flags = set(path.read_text(encoding="utf-8", errors="replace").split())
    return sorted(f for f in flags if "bf16" in f or f.startswith("amx"))
