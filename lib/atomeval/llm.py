"""Chat clients for the LLM extractor and rewriter: an OpenAI-compatible endpoint or a local model.

Both expose ``complete(messages) -> str`` where ``messages`` is the usual list of
``{"role": ..., "content": ...}``. The endpoint's API key is read from an environment variable
only when a request is sent; it is never stored in the client's repr, logged or written anywhere.
"""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Callable, Protocol

Message = dict[str, str]
# (url, headers, body bytes, timeout) -> (HTTP status, response bytes); injectable for tests
Transport = Callable[[str, dict[str, str], bytes, float], tuple[int, bytes]]


class ChatClient(Protocol):
    name: str

    def complete(self, messages: list[Message]) -> str: ...


class LLMError(RuntimeError):
    """The endpoint or model did not give a usable answer; the message says why."""


def urllib_transport(url: str, headers: dict[str, str], body: bytes, timeout: float) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@dataclass
class OpenAIChatClient:
    """POST ``{base_url}/chat/completions`` (OpenAI's chat API; vLLM, llama.cpp, Ollama speak it too)."""

    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 512
    timeout: float = 60.0
    seed: int | None = 0
    transport: Transport = field(default=urllib_transport, repr=False)

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def complete(self, messages: list[Message]) -> str:
        payload = {"model": self.model, "messages": messages, "temperature": self.temperature,
                   "max_tokens": self.max_tokens}
        if self.seed is not None:
            payload["seed"] = self.seed
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.base_url.rstrip("/") + "/chat/completions"
        status, raw = self.transport(url, headers, json.dumps(payload).encode("utf-8"), self.timeout)
        if status != 200:
            snippet = raw[:300].decode("utf-8", "replace")
            hint = f" (is {self.api_key_env} set?)" if status in (401, 403) else ""
            raise LLMError(f"{url} answered HTTP {status}{hint}: {snippet}")
        try:
            return json.loads(raw)["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise LLMError(f"{url}: unexpected response shape ({error}): {raw[:300]!r}") from error


@dataclass
class TransformersChatClient:
    """A local instruction-tuned causal LM with a chat template, decoded greedily."""

    path: str
    max_new_tokens: int = 256
    _tokenizer: object = field(default=None, repr=False)
    _model: object = field(default=None, repr=False)

    def __post_init__(self) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self._tokenizer = AutoTokenizer.from_pretrained(self.path)
        self._model = AutoModelForCausalLM.from_pretrained(self.path).eval()
        if getattr(self._tokenizer, "chat_template", None) is None:
            raise LLMError(f"{self.path}: the tokenizer has no chat template; use an instruction-tuned model")

    @property
    def name(self) -> str:
        return f"transformers:{self.path}"

    def complete(self, messages: list[Message]) -> str:
        import torch

        ids = self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
        pad = self._tokenizer.pad_token_id
        with torch.inference_mode():
            out = self._model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                       max_new_tokens=self.max_new_tokens,
                                       pad_token_id=pad if pad is not None else self._tokenizer.eos_token_id)
        return self._tokenizer.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
