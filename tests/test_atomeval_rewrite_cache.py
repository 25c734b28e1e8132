"""The LLM rewriter's disk cache and batching, on a tiny random Qwen2 model built here."""
from __future__ import annotations

import json

import pytest

from bodega.atomeval.rewrite_cache import RewriteCache, cache_key
from bodega.errors import BodegaError


def test_cache_round_trip_and_a_line_cut_by_a_crash(tmp_path):
    path = tmp_path / "rewrites.jsonl"
    cache = RewriteCache(path)
    cache.add_many([{"model": "m", "prompt": "p1", "claim": "c1", "answer": "a1"},
                    {"model": "m", "prompt": "p2", "claim": "c1", "answer": "a2"}])
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"key": "cut sh')  # a crash mid-write
    again = RewriteCache(path)
    assert (len(again), again.damaged) == (2, 1)
    assert again.get("m", "p1", "c1") == "a1" and again.get("m", "p2", "c1") == "a2"
    assert again.get("other model", "p1", "c1") is None
    again.add_many([{"model": "m", "prompt": "p3", "claim": "c3", "answer": "a3"}])
    third = RewriteCache(path)
    assert (len(third), third.damaged, third.get("m", "p3", "c3")) == (3, 1, "a3")
    records = [json.loads(line) for line in path.read_text().splitlines() if line.startswith('{"key": "') and
               line.endswith("}")]
    assert [r["key"] for r in records] == [cache_key("m", "p1", "c1"), cache_key("m", "p2", "c1"),
                                           cache_key("m", "p3", "c3")]
    assert all("prompt" not in r for r in records)


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory):
    """A tiny random Qwen2 (the rewriters' architecture) with a WordPiece tokenizer and a chat template."""
    import torch
    from transformers import BertTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    from bodega.resources import resolve

    folder = tmp_path_factory.mktemp("qwen")
    tokenizer = BertTokenizerFast(vocab_file=str(resolve("wordpiece-vocab").path / "vocab.txt"))
    torch.manual_seed(0)
    Qwen2ForCausalLM(Qwen2Config(vocab_size=tokenizer.vocab_size, hidden_size=32, intermediate_size=48,
                                 num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                 max_position_embeddings=1024, eos_token_id=tokenizer.sep_token_id,
                                 pad_token_id=tokenizer.pad_token_id)).save_pretrained(folder)
    tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}assistant:{% endif %}")
    tokenizer.save_pretrained(folder)
    return folder


PAIRS = [("Saxony is in Ireland .", "Saxony is a state of Germany ."),
         ("The film was released in 2011 by a small German studio in Berlin .", "The film came out in 2012 ."),
         ("X is .", "X is a letter ."),
         ("Sean Penn is only a stage actor .", "Sean Penn is an American actor and film director .")]


def test_lookup_splits_claims_into_stored_answers_and_those_to_ask(tmp_path):
    cache = RewriteCache(tmp_path / "rewrites.jsonl")
    cache.add_many([{"model": "m", "prompt": "p", "claim": "c1", "answer": "a1"},
                    {"model": "m", "prompt": "q", "claim": "c2", "answer": "a2"}])
    hits, misses = cache.lookup("m", ["p", "p", "q", "p"], ["c1", "c2", "c2", "c3"])
    assert hits == {0: "a1", 2: "a2"} and misses == [1, 3]  # the same claim under another prompt is a miss
    with pytest.raises(ValueError):
        cache.lookup("m", ["p"], ["c1", "c2"])


def test_batched_rewrites_are_cached_and_a_rerun_generates_nothing(tiny_qwen, tmp_path, monkeypatch):
    from bodega.atomeval.factories import make_rewriter

    path = tmp_path / "rewrites.jsonl"
    rewriter = make_rewriter(f"transformers:{tiny_qwen}", threads=1, cache=path, precision="fp32", batch_size=3)
    rewriter.max_answer_tokens = 6
    out = rewriter.rewrite_many(PAIRS, "omission")
    assert len(out) == 4 and rewriter.generated == 4 and rewriter.cached == 0
    assert len(path.read_text().splitlines()) == 4  # two batches (3 + 1), each appended when decoded
    client = rewriter.client
    assert client.generated_tokens > 0 and client.generation_seconds > 0
    one_by_one = [rewriter.rewrite(c, e, "omission") for c, e in PAIRS]  # read back from the cache
    assert rewriter.generated == 4 and rewriter.cached == 4 and one_by_one == out

    fresh = make_rewriter(f"transformers:{tiny_qwen}", threads=1, cache=path, precision="fp32", batch_size=3)
    fresh.max_answer_tokens = 6

    def refuse(*args, **kwargs):
        raise AssertionError("a cached rewrite was generated again")

    monkeypatch.setattr(fresh.client, "_generate", refuse)
    assert fresh.rewrite_many(PAIRS, "omission") == out and fresh.cached == 4
    with pytest.raises(AssertionError, match="generated again"):
        fresh.rewrite_many(PAIRS, "advadd")  # another family is another prompt: not in the cache


def test_batching_sorted_by_length_changes_no_answer(tiny_qwen):
    from bodega.atomeval.factories import make_rewriter

    batched = make_rewriter(f"transformers:{tiny_qwen}", threads=1, precision="fp32", batch_size=4)
    single = make_rewriter(f"transformers:{tiny_qwen}", threads=1, precision="fp32", batch_size=1)
    for rewriter in (batched, single):
        rewriter.max_answer_tokens = 6
    assert batched.rewrite_many(PAIRS, "factmix") == [single.rewrite(c, e, "factmix") for c, e in PAIRS]


def test_cache_key_names_weights_precision_and_answer_bound(tiny_qwen, tmp_path):
    from bodega.atomeval.factories import make_rewriter
    from bodega.atomeval.llm import TransformersChatClient

    rewriter = make_rewriter(f"transformers:{tiny_qwen}", threads=1, cache=tmp_path / "c.jsonl", precision="bf16")
    assert rewriter.client.precision == "bf16" and rewriter.client.identity.endswith(";bf16")
    assert len(rewriter.client.weights_hash) == 64
    prompt = rewriter._cache_prompt(rewriter.messages("X is .", "X is a letter .", "advadd"))
    assert "Claim: X is ." in prompt and "max_new_tokens=64" in prompt and "stop='\\n'" in prompt
    with pytest.raises(BodegaError, match="unknown precision"):
        TransformersChatClient(str(tiny_qwen), precision="fp16")


def test_auto_precision_follows_amx(tmp_path, monkeypatch):
    from bodega.atomeval import llm

    info = tmp_path / "cpuinfo"
    info.write_text("flags\t\t: fpu avx512f avx512_bf16\n")
    assert not llm.cpu_has_amx_bf16(info)
    info.write_text("flags\t\t: fpu avx512f amx_bf16 amx_tile\n")
    assert llm.cpu_has_amx_bf16(info)
    monkeypatch.setattr(llm, "cpu_has_amx_bf16", lambda: False)
    assert (llm.resolve_precision("auto"), llm.resolve_precision("bf16")) == ("fp32", "bf16")


def test_common_prefix_length():
    from bodega.atomeval.llm import common_prefix_length

    assert common_prefix_length([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == 2
    assert common_prefix_length([[7, 8], [7, 8]]) == 2 and common_prefix_length([[1], [2]]) == 0


def test_the_shared_prompt_prefix_is_read_once_and_changes_no_answer(tiny_qwen):
    from bodega.atomeval.factories import make_rewriter

    shared = make_rewriter(f"transformers:{tiny_qwen}", threads=1, precision="fp32", batch_size=4)
    plain = make_rewriter(f"transformers:{tiny_qwen}", threads=1, precision="fp32", batch_size=4)
    plain.client.min_prefix = 10 ** 6  # no prefix cache: every row reads its whole prompt
    for rewriter in (shared, plain):
        rewriter.max_answer_tokens = 6
    assert shared.rewrite_many(PAIRS, "deseption") == plain.rewrite_many(PAIRS, "deseption")
    assert shared.client._prefix is not None and plain.client._prefix is None
    prefix = shared.client._prefix[0]
    assert len(prefix) >= shared.client.min_prefix  # the system and family instructions, tokenised


class _Claim:
    def __init__(self, id, claim, evidence):
        self.id, self.claim, self.evidence = id, claim, evidence


def test_generate_rewrites_records_cost_once_and_a_rerun_keeps_it(tiny_qwen, tmp_path):
    from bodega.atomeval.factories import make_rewriter
    from bodega.atomeval.runs import generate_rewrites

    claims = [_Claim(str(i), c, e) for i, (c, e) in enumerate(PAIRS)]
    cost = tmp_path / "cost.json"
    rewriter = make_rewriter(f"transformers:{tiny_qwen}", threads=1, cache=tmp_path / "r.jsonl", precision="fp32",
                             batch_size=2)
    rewriter.max_answer_tokens = 4
    first = generate_rewrites(claims[:2], rewriter, ["omission"], cost)["omission"]
    assert (first["claims"], first["generated"], first["cached"]) == (2, 2, 0)
    assert first["generated_tokens"] > 0 and first["precision"] == "fp32" and len(first["weights_sha256"]) == 64
    more = generate_rewrites(claims, rewriter, ["omission"], cost)["omission"]  # goes on where the first stopped
    assert (more["claims"], more["generated"], more["cached"]) == (4, 4, 0)
    assert more["cpu_seconds"] >= first["cpu_seconds"]
    assert generate_rewrites(claims, rewriter, ["omission"], cost)["omission"] == more  # all cached: cost kept
    assert json.loads(cost.read_text())["omission"] == more


def test_a_second_rewriter_never_adds_its_cost_to_the_first_ones_entry(tiny_qwen, tmp_path):
    from bodega.atomeval.factories import make_rewriter
    from bodega.atomeval.runs import generate_rewrites

    claims = [_Claim(str(i), c, e) for i, (c, e) in enumerate(PAIRS[:2])]
    cost = tmp_path / "cost.json"
    first = make_rewriter(f"transformers:{tiny_qwen}", threads=1, cache=tmp_path / "a.jsonl", precision="fp32",
                          batch_size=2)
    first.max_answer_tokens = 4
    entry = generate_rewrites(claims, first, ["omission"], cost)["omission"]
    assert (entry["generated"], entry["cached"]) == (2, 0)
    before = cost.read_text()
    second = make_rewriter(f"transformers:{tiny_qwen}", threads=1, cache=tmp_path / "b.jsonl", precision="bf16",
                           batch_size=2)
    second.max_answer_tokens = 4
    with pytest.raises(BodegaError, match=r"--cost .*cost\.json: its omission entry is another rewriter's "
                                          r"\(precision fp32\)"):
        generate_rewrites(claims, second, ["omission"], cost)
    assert cost.read_text() == before and second.generated == 0
