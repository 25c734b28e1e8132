"""Chat clients for the LLM extractor and rewriter: an OpenAI-compatible endpoint or a local model.

Both expose ``complete(messages) -> str`` where ``messages`` is the usual list of
``{"role": ..., "content": ...}``. The endpoint's API key is read from an environment variable
only when a request is sent; it is never stored in the client's repr, logged or written anywhere.
"""
from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from bodega.data.transfer import shown_url
from bodega.errors import BodegaError

Message = dict[str, str]
# (url, headers, body bytes, timeout) -> (HTTP status, response bytes); injectable for tests
Transport = Callable[[str, dict[str, str], bytes, float], tuple[int, bytes]]


class ChatClient(Protocol):
    """What a chat model offers: a ``name`` and ``complete(messages)`` to an answer text."""

    name: str

    def complete(self, messages: list[Message], max_new_tokens: int | None = None) -> str:
        """The model's answer to ``messages``."""
        ...


def complete_many(client: ChatClient, conversations: list[list[Message]],
                  max_new_tokens: int | None = None) -> list[str]:
    """Answers in order: batched when the client can batch (a local model), else one request each."""
    batched = getattr(client, "complete_many", None)
    if batched is not None:
        return batched(conversations, max_new_tokens)
    return [client.complete(messages, max_new_tokens) for messages in conversations]


class LLMError(BodegaError, RuntimeError):
    """The endpoint or model did not give a usable answer; the message says why (one line on the command line)."""


def urllib_transport(url: str, headers: dict[str, str], body: bytes, timeout: float) -> tuple[int, bytes]:
    """POST ``body`` to ``url``; returns the status code and the response bytes (errors included)."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()
    except (OSError, ValueError, http.client.HTTPException) as error:  # refused, timed out, a malformed URL
        raise LLMError(f"{shown_url(url)}: no answer ({error or type(error).__name__}); check the URL after @ and "
                       "that the server runs") from None


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
        """``openai:<model>``."""
        return f"openai:{self.model}"

    @property
    def identity(self) -> str:
        """What decides an answer besides the prompt: the model at its endpoint and the sampling settings.
        Rewriters and extractors key their caches by it, and the cache files keep it, so the endpoint is named as
        :func:`~bodega.data.transfer.shown_url` shows it: no password or query value of the URL (the API key is
        never part of it)."""
        return (f"openai:{self.model}@{shown_url(self.base_url).rstrip('/')};temperature={self.temperature};"
                f"seed={self.seed};max_tokens={self.max_tokens}")

    def complete(self, messages: list[Message], max_new_tokens: int | None = None) -> str:
        """The endpoint's answer to ``messages``."""
        payload = {"model": self.model, "messages": messages, "temperature": self.temperature,
                   "max_tokens": max_new_tokens or self.max_tokens}
        if self.seed is not None:
            payload["seed"] = self.seed
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        parts = urllib.parse.urlsplit(self.base_url)  # a query (?api-version=...) stays after the path
        url = urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))
        status, raw = self.transport(url, headers, json.dumps(payload).encode("utf-8"), self.timeout)
        if status != 200:
            snippet = raw[:300].decode("utf-8", "replace")
            hint = f" (is {self.api_key_env} set?)" if status in (401, 403) else ""
            raise LLMError(f"{shown_url(url)} answered HTTP {status}{hint}: {snippet}")
        try:
            return json.loads(raw)["choices"][0]["message"]["content"] or ""
        except (ValueError, KeyError, IndexError, TypeError) as error:
            raise LLMError(f"{shown_url(url)}: unexpected response shape ({error}): {raw[:300]!r}") from error


def cpu_has_amx_bf16(cpuinfo: str | Path = "/proc/cpuinfo") -> bool:
    """Whether the CPU has AMX bf16 tiles, where bf16 matrix products are fast (Intel Sapphire Rapids on)."""
    path = Path(cpuinfo)
    return path.exists() and "amx_bf16" in path.read_text(encoding="utf-8", errors="replace").split()


def resolve_precision(precision: str) -> str:
    """``fp32``, ``bf16``, or ``auto``: bf16 where the CPU has AMX (or a GPU is used), else fp32.

    A local stand-in for the project-wide precision setting; only this function decides."""
    if precision not in ("fp32", "bf16", "auto"):
        raise BodegaError(f"unknown precision {precision!r} (--precision); use fp32, bf16 or auto")
    if precision != "auto":
        return precision
    return "bf16" if cpu_has_amx_bf16() else "fp32"


@dataclass
class TransformersChatClient:
    """A local instruction-tuned causal LM with a chat template, decoded greedily.

    ``complete_many`` decodes several conversations in left-padded batches: on a CPU one decoding
    step for 8 sequences costs little more than for one, so batching is what makes the gold set
    and the rewriter runs affordable. ``threads`` (when set) caps torch's CPU threads. ``precision``
    (see :func:`resolve_precision`) sets the weights' dtype; ``identity`` names weights and precision
    for the rewrite cache.
    """

    path: str
    max_new_tokens: int = 256
    batch_size: int = 8
    threads: int | None = None
    label: str | None = None  # the name to report instead of the path (e.g. a resource role)
    precision: str = "auto"
    seed: int = 0
    min_prefix: int = 8  # shared leading prompt tokens worth caching (fewer: no prefix cache)
    stop_strings: tuple[str, ...] = ()  # a sequence ends at any of these (e.g. a newline for one-line answers)
    generated_tokens: int = 0  # counted over every answer, for tokens per second
    generation_seconds: float = 0.0
    _tokenizer: object = field(default=None, repr=False)
    _model: object = field(default=None, repr=False)
    _weights_hash: str | None = field(default=None, repr=False)
    _stop_token_ids: list[int] | None = field(default=None, repr=False)
    _prefix: tuple | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if self.threads:
            torch.set_num_threads(self.threads)
        self.precision = resolve_precision(self.precision)
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float32
        self._tokenizer = AutoTokenizer.from_pretrained(self.path, trust_remote_code=False)
        self._model = AutoModelForCausalLM.from_pretrained(self.path, dtype=dtype, trust_remote_code=False).eval()
        if getattr(self._tokenizer, "chat_template", None) is None:
            raise LLMError(f"{self.path}: the tokenizer has no chat template; use an instruction-tuned model")
        self._tokenizer.padding_side = "left"
        if self._tokenizer.pad_token is None:
            self._tokenizer.pad_token = self._tokenizer.eos_token

    @property
    def name(self) -> str:
        """``transformers:<label or path>``."""
        return f"transformers:{self.label or self.path}"

    @property
    def weights_hash(self) -> str:
        """sha256 over the weight files, config and tokenizer (computed once: seconds for a few GB)."""
        if self._weights_hash is None:
            from bodega.victims.base import hash_files

            folder = Path(self.path)
            files = sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")) + [folder / "config.json"]
            files += [folder / "tokenizer.json"] if (folder / "tokenizer.json").exists() else []
            self._weights_hash = hash_files(files)
        return self._weights_hash

    @property
    def identity(self) -> str:
        """The weights hash and the precision, to tell one model setup from another."""
        return f"{self.weights_hash};{self.precision}"

    def prompt(self, messages: list[Message]) -> str:
        """The exact text the model reads (chat template applied, generation prompt added)."""
        return self._tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)

    def _stop_ids(self) -> list[int]:
        """End of turn plus every token whose text contains a stop string (found once over the vocabulary):
        a sequence ends at its first such token, cheaper than matching strings after every step."""
        if self._stop_token_ids is None:
            tokenizer = self._tokenizer
            ends = [t for t in (self._model.generation_config.eos_token_id, tokenizer.eos_token_id) if t is not None]
            ends = [i for t in ends for i in (t if isinstance(t, list) else [t])]
            pieces = tokenizer.convert_ids_to_tokens(list(range(len(tokenizer))))
            texts = [tokenizer.convert_tokens_to_string([p]) if p is not None else "" for p in pieces]
            self._stop_token_ids = sorted(set(ends) | {i for i, text in enumerate(texts)
                                                       if any(s in text for s in self.stop_strings)})
        return self._stop_token_ids

    def complete(self, messages: list[Message], max_new_tokens: int | None = None) -> str:
        """One greedy answer to ``messages``."""
        return self.complete_many([messages], max_new_tokens)[0]

    def complete_many(self, conversations: list[list[Message]], max_new_tokens: int | None = None) -> list[str]:
        """One greedy answer per conversation, in order."""
        answers: list[str] = []
        for start in range(0, len(conversations), self.batch_size):
            answers.extend(self._generate(conversations[start:start + self.batch_size],
                                          max_new_tokens or self.max_new_tokens))
        return answers

    def _generate(self, conversations: list[list[Message]], max_new_tokens: int) -> list[str]:
        """Greedy answers of one batch. The prompts' common leading tokens (system and task instruction) are
        run once and their keys and values reused by every row (``_prefix_cache``): on a CPU, reading the
        prompt is most of the cost of a short answer. Each row is the prefix, its left padding (masked),
        then its own tokens, so positions run on from the prefix as in the unpadded prompt."""
        import copy
        import time

        import torch

        tokenizer = self._tokenizer
        # the chat template writes the special tokens itself
        rows = [tokenizer(self.prompt(m), add_special_tokens=False)["input_ids"] for m in conversations]
        pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        shared = common_prefix_length(rows)
        shared = min(shared, min(len(r) for r in rows) - 1)  # every row keeps at least one token of its own
        use_prefix = shared >= self.min_prefix
        prefix, tails = (rows[0][:shared], [r[shared:] for r in rows]) if use_prefix else ([], rows)
        width = max(len(t) for t in tails)
        ids = torch.tensor([prefix + [pad] * (width - len(t)) + t for t in tails])
        mask = torch.tensor([[1] * len(prefix) + [0] * (width - len(t)) + [1] * len(t) for t in tails])
        extra = {"eos_token_id": self._stop_ids()} if self.stop_strings else {}
        torch.manual_seed(self.seed)  # greedy decoding draws nothing; fixed anyway for any sampling config
        started = time.perf_counter()
        with torch.inference_mode():
            if use_prefix:
                extra["past_key_values"] = copy.deepcopy(self._prefix_cache(tuple(prefix)))
                extra["past_key_values"].batch_repeat_interleave(len(rows))
            out = self._model.generate(input_ids=ids, attention_mask=mask, do_sample=False,
                                       max_new_tokens=max_new_tokens, pad_token_id=pad, **extra)
        self.generation_seconds += time.perf_counter() - started
        new = out[:, ids.shape[1]:]
        stop = {pad, tokenizer.eos_token_id, *(self._stop_ids() if self.stop_strings else ())}
        self.generated_tokens += sum(next((i + 1 for i, t in enumerate(row.tolist()) if t in stop), len(row))
                                     for row in new)
        return [tokenizer.decode(row, skip_special_tokens=True) for row in new]

    def _prefix_cache(self, prefix: tuple[int, ...]):
        """The keys and values of ``prefix`` (batch of one), kept for the last prefix asked."""
        import torch

        if self._prefix is None or self._prefix[0] != prefix:
            with torch.inference_mode():
                cache = self._model(input_ids=torch.tensor([list(prefix)]), use_cache=True).past_key_values
            self._prefix = (prefix, cache)
        return self._prefix[1]


def common_prefix_length(rows: list[list[int]]) -> int:
    """How many leading tokens all rows share."""
    n = 0
    for column in zip(*rows):
        if any(token != column[0] for token in column):
            break
        n += 1
    return n
