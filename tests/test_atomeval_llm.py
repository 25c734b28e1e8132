"""LLM clients, the LLM extractor's validation and retry, the LLM rewriter, and the model wrappers
(NLI, perplexity) on tiny random models built here."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import numpy as np
import pytest

from atomeval.extract_llm import ExtractionError, LLMExtractor
from atomeval.llm import LLMError, OpenAIChatClient
from atomeval.rewriters import FAMILIES, LLMRewriter

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
    from transformers import BertTokenizerFast

    from bodega.resources import resolve

    folder = tmp_path_factory.mktemp("tok")
    tokenizer = BertTokenizerFast(vocab_file=str(resolve("wordpiece-vocab").path / "vocab.txt"))
    tokenizer.save_pretrained(folder)
    return folder, tokenizer


def test_nli_model_on_a_tiny_random_three_label_model(vocab_dir, tmp_path):
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from atomeval.models import NLIModel

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
    from atomeval.extract_spacy import SpacyExtractor
    from atomeval.gate import Gate, GateConfig

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

    from atomeval.models import PerplexityModel

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

    from atomeval.llm import TransformersChatClient

    folder, tokenizer = vocab_dir
    torch.manual_seed(0)
    GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_embd=32, n_layer=1, n_head=2,
                               n_positions=2048, bos_token_id=tokenizer.cls_token_id,
                               eos_token_id=tokenizer.sep_token_id,
                               pad_token_id=tokenizer.pad_token_id)).save_pretrained(tmp_path)
    tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                               "{% if add_generation_prompt %}assistant:{% endif %}")
    tokenizer.save_pretrained(tmp_path)
    client = TransformersChatClient(str(tmp_path), max_new_tokens=5)
    answer = client.complete([{"role": "user", "content": "Claim: Saxony is in Ireland ."}])
    assert isinstance(answer, str)
    extractor = LLMExtractor(client, max_retries=1)
    with pytest.raises(ExtractionError):  # random weights never produce schema-valid JSON
        extractor.extract("Saxony is in Ireland .")
    assert extractor.calls == 2
