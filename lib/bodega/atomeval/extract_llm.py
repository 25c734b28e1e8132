"""LLM extractor: a prompt asks for JSON atoms, validated against the schema, retried when invalid.

On invalid output the model is shown its answer and the validator's message and asked again, at most
``max_retries`` times; then :class:`ExtractionError` is raised with the last problem. With a ``cache``
(:class:`~bodega.atomeval.rewrite_cache.RewriteCache`) and a client that names its weights, every claim's
outcome (its atoms, or the failure) is appended as soon as its batch is done: a 1.5B model takes CPU-hours
over the human pairs, and a rerun or a crash then loses at most one batch.
"""
from __future__ import annotations

import json
import re
from typing import Any

from bodega.atomeval.atoms import ATOM_JSON_SCHEMA, Atom, AtomSchemaError, parse_atoms
from bodega.atomeval.llm import ChatClient, complete_many

SYSTEM_PROMPT = """You decompose a factual claim into SROM atoms.
An atom is one predication: subject, relation, object, modifiers, polarity.
- subject: the subject noun phrase as written (with its possessor and modifiers).
- relation: the base form of the predicate verb; a copula is "be"; leave out auxiliaries, modals,
  passive "be" and "to"; keep a chain of infinitives ("refuse be", "help co-found") and particles.
- object: the direct object, or the complement of "be" (noun, adjective or prepositional phrase);
  "" when there is none. Move only/solely/exclusively/ever/just/merely out of it into the modifiers.
- modifiers: every other phrase attached to the predicate, with its preposition ("in 2011",
  "by Christopher Nolan"), each {"type": one of time, place, quantity, manner, scope, agent, other,
  "value": the phrase as written}.
- polarity: "negated" when the predicate has not / n't / never / "has yet to"; else "affirmed".
Coordinated verbs or coordinated objects give one atom each. Everything inside a noun phrase stays in it.
Answer with JSON only, matching this schema: """ + json.dumps(ATOM_JSON_SCHEMA)

EXAMPLE = ("Vedam was not written and directed by Christopher Nolan in 2010 .",
           {"atoms": [{"subject": "Vedam", "relation": "write", "object": "",
                       "modifiers": [{"type": "agent", "value": "by Christopher Nolan"},
                                     {"type": "time", "value": "in 2010"}], "polarity": "negated"},
                      {"subject": "Vedam", "relation": "direct", "object": "",
                       "modifiers": [{"type": "agent", "value": "by Christopher Nolan"},
                                     {"type": "time", "value": "in 2010"}], "polarity": "negated"}]})


class ExtractionError(RuntimeError):
    """No schema-valid answer after the allowed retries."""


def decode_json(text: str):
    """The first JSON object in a model's answer (code fences and chatter around it are ignored)."""
    text = re.sub(r"```(?:json)?", "", text)
    start = text.find("{")
    if start < 0:
        raise AtomSchemaError("no JSON object in the answer")
    try:
        obj, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as error:
        raise AtomSchemaError(f"invalid JSON: {error}") from error
    return obj


class LLMExtractor:
    """Atoms from a chat model, asked for JSON and re-asked (up to ``max_retries``) on invalid answers."""

    def __init__(self, client: ChatClient, max_retries: int = 2, cache: Any = None) -> None:
        self.client = client
        self.max_retries = max_retries
        self.cache = cache
        self.name = f"llm ({client.name})"
        self.calls = 0
        self.retries = 0
        self.failures = 0
        self.cached = 0

    def messages(self, claim: str) -> list[dict[str, str]]:
        """The chat for one claim: system prompt, one worked example, then the claim."""
        return [{"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"Claim: {EXAMPLE[0]}"},
                {"role": "assistant", "content": json.dumps(EXAMPLE[1])},
                {"role": "user", "content": f"Claim: {claim}"}]

    def extract(self, claim: str) -> list[Atom]:
        """Atoms of one claim; raises its :class:`ExtractionError` when no valid answer came."""
        (result,) = self.extract_many([claim])
        if isinstance(result, ExtractionError):
            raise result
        return result

    def extract_many(self, claims: list[str]) -> list[list[Atom] | ExtractionError]:
        """Atoms per claim, or the :class:`ExtractionError` of a claim that never got a valid answer.

        Claims are asked together, and every round re-asks only those whose answer was invalid, so a
        local model decodes them in batches. Cached claims are not asked; the others are cached after.
        """
        model = getattr(self.client, "identity", None) if self.cache is not None else None
        if not model:
            return self._ask(claims)
        prompt = self._cache_prompt()
        results: list[list[Atom] | ExtractionError | None] = [None] * len(claims)
        hits, todo = self.cache.lookup(model, [prompt] * len(claims), claims)
        for i, hit in hits.items():
            results[i] = _decode_outcome(hit)
        self.cached += len(hits)
        if todo:
            asked = self._ask([claims[i] for i in todo])
            for i, outcome in zip(todo, asked):
                results[i] = outcome
            self.cache.add_many([{"model": model, "prompt": prompt, "claim": claims[i], "client": self.client.name,
                                  "answer": _encode_outcome(results[i])} for i in todo])
        return results  # type: ignore[return-value]

    def _cache_prompt(self) -> str:
        """The cache key's prompt part: everything but the claim that decides the outcome."""
        bound = getattr(self.client, "max_new_tokens", None)
        return f"{json.dumps(self.messages(''))}\0max_retries={self.max_retries};max_new_tokens={bound}"

    def _ask(self, claims: list[str]) -> list[list[Atom] | ExtractionError]:
        """Ask the model (see :meth:`extract_many`)."""
        conversations = [self.messages(claim) for claim in claims]
        results: list[list[Atom] | ExtractionError | None] = [None] * len(claims)
        pending = list(range(len(claims)))
        for attempt in range(self.max_retries + 1):
            answers = complete_many(self.client, [conversations[i] for i in pending])
            self.calls += len(pending)
            retry = []
            for i, answer in zip(pending, answers):
                try:
                    atoms = parse_atoms(decode_json(answer))
                    results[i] = [a.with_(span=a.span or claims[i]) for a in atoms]
                    continue
                except AtomSchemaError as error:
                    problem = str(error)
                if attempt < self.max_retries:
                    self.retries += 1
                    retry.append(i)
                    conversations[i] = conversations[i] + [
                        {"role": "assistant", "content": answer},
                        {"role": "user", "content": f"That answer is invalid ({problem}). "
                                                    "Answer again with JSON only, following the schema."}]
                else:
                    self.failures += 1
                    results[i] = ExtractionError(f"claim {claims[i]!r}: no valid atoms after "
                                                 f"{self.max_retries + 1} attempts; last problem: {problem}")
            pending = retry
            if not pending:
                break
        return results  # type: ignore[return-value]

    def stats(self) -> dict[str, int]:
        """Requests sent, retries, claims with no schema-valid answer after the retries, and with a cache the
        claims answered from it (whose requests are not counted again)."""
        counts = {"calls": self.calls, "retries": self.retries, "invalid_after_retries": self.failures}
        return counts if self.cache is None else {**counts, "cached": self.cached}


def _encode_outcome(outcome: list[Atom] | ExtractionError) -> str:
    """A claim's outcome as the cache stores it: its atoms, or the failure's message."""
    if isinstance(outcome, ExtractionError):
        return json.dumps({"error": str(outcome)}, ensure_ascii=False)
    return json.dumps({"atoms": [atom.to_dict() for atom in outcome]}, ensure_ascii=False)


def _decode_outcome(answer: str) -> list[Atom] | ExtractionError:
    """The inverse of :func:`_encode_outcome`."""
    stored = json.loads(answer)
    if "error" in stored:
        return ExtractionError(stored["error"])
    return [Atom.from_dict(atom) for atom in stored["atoms"]]
