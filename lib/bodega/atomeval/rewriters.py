"""Claim rewriters for the five attack families (the evidence stays fixed).

Families (AtomEval's taxonomy): ``colloquial`` (Colloquial/Lexical), ``deseption`` (DeSePtion-style
multi-proposition claims), ``factmix`` (GEM-style FactMix: facts mixed in from the evidence),
``omission`` (Omission-style: content left out) and ``advadd`` (AdvAdd: unverifiable content added).

:class:`RuleRewriter` is deterministic and offline (spaCy + WordNet): one transformation per family,
so the families' characteristic effects on validity can be measured without any LLM.
:class:`LLMRewriter` sends a shared system instruction, the family's instruction, the claim and the
evidence to a chat client.
"""
from __future__ import annotations

import hashlib
import json
import logging
import re
from pathlib import Path
from typing import Any

from bodega.errors import MissingFileError, UnknownNameError
from bodega.atomeval.llm import ChatClient, complete_many

log = logging.getLogger(__name__)

FAMILIES = ("colloquial", "deseption", "factmix", "omission", "advadd")
FAMILY_NAMES = {"colloquial": "Colloquial/Lexical", "deseption": "DeSePtion-style",
                "factmix": "GEM-style FactMix", "omission": "Omission-style", "advadd": "AdvAdd"}

SYSTEM_INSTRUCTION = (
    "You rewrite a claim so that an automatic fact-checker that reads the claim together with a fixed "
    "evidence sentence changes its verdict. Keep the rewrite fluent and about the same subject. "
    "Answer with the rewritten claim only, on one line, without quotes or explanations.")
FAMILY_INSTRUCTIONS = {
    "colloquial": "Paraphrase the claim in a casual, conversational register, replacing words with "
                  "synonyms and informal expressions.",
    "deseption": "Make the claim harder to verify by combining it with a second proposition, for example "
                 "a related fact, a temporal relation or an ambiguous reference to the entity.",
    "factmix": "Mix in facts from the evidence: replace or combine details of the claim with entities, "
               "dates or numbers that appear in the evidence.",
    "omission": "Leave out details of the claim (qualifiers, dates, places, restrictions) so that it says "
                "less.",
    "advadd": "Add extra content (a clause, a source, a detail) that the evidence does not mention.",
}

SCOPE_WORDS = ("only", "solely", "exclusively", "ever", "just", "merely", "entirely", "purely")
UNVERIFIABLE_ADDITIONS = (
    ", according to several people who asked not to be named",
    ", as many fans on social media have pointed out",
    ", which was discussed in a 2019 podcast episode",
    ", as a local newspaper reported at the time",
)
_PTB = re.compile(r"-LRB-.*?-RRB-|-LSB-.*?-RSB-|-LCB-.*?-RCB-")


def _stable_index(text: str, n: int) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % n


def _strip_final_punct(text: str) -> str:
    return re.sub(r"\s*[.!?]\s*$", "", text.strip())


def _detokenise(words: list[str]) -> str:
    text = " ".join(w for w in words if w)
    return re.sub(r"\s+", " ", text).strip()


class RuleRewriter:
    """A deterministic rewrite per family (see the module docstring)."""

    def __init__(self, nlp: Any = None) -> None:
        if nlp is None:
            from bodega.atomeval.extract_spacy import default_nlp

            nlp = default_nlp()
        self.nlp = nlp
        self.name = "rules"

    def rewrite(self, claim: str, evidence: str, family: str) -> str | None:
        """The rewritten claim, or None when the family's transformation does not apply."""
        if family not in FAMILIES:
            raise UnknownNameError(f"unknown family {family!r} (--families); choose one of {', '.join(FAMILIES)}")
        out = getattr(self, f"_{family}")(self.nlp(claim), evidence)
        return out if out and out.strip() != claim.strip() else None

    def _colloquial(self, doc, evidence: str) -> str | None:
        from bodega.atomeval.lexicon import _synsets

        words = [t.text for t in doc]
        changed = 0
        for t in doc:
            if (changed >= 2 or t.pos_ not in ("NOUN", "ADJ", "VERB") or t.ent_type_ or t.is_stop
                    or t.text[:1].isupper()):
                continue
            pos = {"NOUN": "n", "ADJ": "a", "VERB": "v"}[t.pos_]
            senses = [s for s in _synsets(t.lemma_.lower()) if s.pos() in (pos, "s" if pos == "a" else pos)]
            for synset in senses[:1]:  # the most frequent sense only
                names = [n.replace("_", " ") for n in synset.lemma_names()
                         if n.lower() != t.lemma_.lower() and "_" not in n]
                if names:
                    replacement = names[0]
                    if t.tag_ in ("VBD", "VBN") and not replacement.endswith("ed"):
                        break  # keep tense: only base-form swaps for past tenses are unsafe
                    words[t.i] = replacement
                    changed += 1
                    break
        if not changed:
            return None
        text = _detokenise(words)
        text = re.sub(r"\b(is|was|are|were|does|did|has) not\b", lambda m: m.group(1) + "n't", text)
        return "Honestly , " + text

    def _deseption(self, doc, evidence: str) -> str | None:
        ev = self.nlp(_detokenise(_PTB.sub(" ", evidence).split()))
        sentence = next(iter(ev.sents), None)
        if sentence is None:
            return None
        cut = next((t.i for t in sentence if t.text in (",", ";", "--") and t.i > sentence.root.i), sentence.end)
        core = _strip_final_punct(ev[sentence.start:cut].text)
        if not core:
            return None
        return f"{_strip_final_punct(doc.text)} , and {core} ."

    def _factmix(self, doc, evidence: str) -> str | None:
        ev = self.nlp(_PTB.sub(" ", evidence))
        by_label: dict[str, list[str]] = {}
        for ent in ev.ents:
            by_label.setdefault(ent.label_, []).append(ent.text)
        for ent in doc.ents:
            options = [o for o in by_label.get(ent.label_, []) if o.lower() != ent.text.lower()
                       and o.lower() not in doc.text.lower()]
            if ent.start == 0 and ent.label_ in ("PERSON", "ORG", "WORK_OF_ART"):
                continue  # keep the claim's topic entity; mix the facts stated about it
            if options:
                return doc.text[:ent.start_char] + options[0] + doc.text[ent.end_char:]
        return None

    def _omission(self, doc, evidence: str) -> str | None:
        drop: set[int] = set()
        scope = [t for t in doc if t.lower_ in SCOPE_WORDS and t.dep_ in ("advmod", "amod", "npadvmod")]
        if scope:
            drop = {scope[0].i}
        else:
            root = doc[:].root
            preps = [c for c in root.children if c.dep_ in ("prep", "npadvmod", "advmod") and c.lower_ != "not"
                     and c.lower_ != "never" and any(x.ent_type_ or x.like_num for x in c.subtree)]
            if preps:
                drop = {t.i for t in preps[-1].subtree}
            else:
                adjectives = [t for t in doc if t.dep_ in ("amod", "compound") and t.head.dep_ in (
                    "attr", "dobj", "pobj") and not t.ent_type_]
                if adjectives:
                    drop = {adjectives[0].i}
        if not drop:
            return None
        return _detokenise([t.text for t in doc if t.i not in drop])

    def _advadd(self, doc, evidence: str) -> str | None:
        addition = UNVERIFIABLE_ADDITIONS[_stable_index(doc.text, len(UNVERIFIABLE_ADDITIONS))]
        return f"{_strip_final_punct(doc.text)} {addition.strip()} ."


class LLMRewriter:
    """Shared system instruction + family instruction + claim + evidence, through a chat client.

    ``max_answer_tokens`` bounds each answer: a rewrite is one sentence, and only its first line is kept.
    With a ``cache`` (:class:`~bodega.atomeval.rewrite_cache.RewriteCache`) and a client that names its
    weights (``identity``), answers are looked up first and each decoded batch is appended at once.
    ``rewrite_many`` takes any number of claims: it sorts them by prompt length so that a batch pads
    little, and asks ``batch_size`` at a time.
    """

    def __init__(self, client: ChatClient, max_answer_tokens: int = 64, cache: Any = None,
                 batch_size: int = 8) -> None:
        self.client = client
        self.max_answer_tokens = max_answer_tokens
        self.cache = cache
        self.batch_size = batch_size
        self.name = f"llm ({client.name})"
        self.generated = self.cached = 0

    def messages(self, claim: str, evidence: str, family: str) -> list[dict[str, str]]:
        """The chat asking for a ``family`` rewrite of ``claim`` given ``evidence``."""
        if family not in FAMILIES:
            raise UnknownNameError(f"unknown family {family!r} (--families); choose one of {', '.join(FAMILIES)}")
        return [{"role": "system", "content": SYSTEM_INSTRUCTION},
                {"role": "user", "content": f"{FAMILY_INSTRUCTIONS[family]}\n\nEvidence: {evidence}\n"
                                            f"Claim: {claim}\nRewritten claim:"}]

    def rewrite(self, claim: str, evidence: str, family: str) -> str | None:
        """A rewrite of one claim (None when the model gave none)."""
        return self.rewrite_many([(claim, evidence)], family)[0]

    def _cache_prompt(self, conversation: list[dict[str, str]]) -> str:
        """The cache key's prompt part: the text the model reads (or the messages) and the answer bound."""
        text = self.client.prompt(conversation) if hasattr(self.client, "prompt") else json.dumps(conversation)
        stops = ",".join(map(repr, getattr(self.client, "stop_strings", ())))
        return f"{text}\0max_new_tokens={self.max_answer_tokens};stop={stops}"

    def rewrite_many(self, pairs: list[tuple[str, str]], family: str) -> list[str | None]:
        """Rewrites of (claim, evidence) pairs, asked together so that a local model decodes in batches."""
        conversations = [self.messages(claim, evidence, family) for claim, evidence in pairs]
        model = getattr(self.client, "identity", None) if self.cache is not None else None
        answers: list[str | None] = [None] * len(pairs)
        prompts = [self._cache_prompt(c) for c in conversations] if model else [""] * len(pairs)
        hits, todo = (self.cache.lookup(model, prompts, [claim for claim, _ in pairs]) if model
                      else ({}, list(range(len(pairs)))))
        for i, hit in hits.items():
            answers[i] = hit
        self.cached += len(hits)
        todo.sort(key=lambda i: len(prompts[i]) or len(json.dumps(conversations[i])))
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start:start + self.batch_size]
            batch = complete_many(self.client, [conversations[i] for i in chunk], self.max_answer_tokens)
            for i, answer in zip(chunk, batch):
                answers[i] = answer
            self.generated += len(chunk)
            if model:
                self.cache.add_many([{"model": model, "prompt": prompts[i], "claim": pairs[i][0], "family": family,
                                      "client": self.client.name, "answer": answers[i]} for i in chunk])
            log.info("%s %s: %d/%d rewrites generated", self.client.name, family, start + len(chunk), len(todo))
        return [first_line(answer) for answer in answers]


def first_line(answer: str) -> str | None:
    """The rewrite in a model's answer: its first non-empty line, without quotes or a leading label."""
    lines = [line.strip().strip('"').strip() for line in answer.strip().splitlines() if line.strip()]
    if not lines:
        return None
    text = re.sub(r"^(rewritten claim|claim)\s*:\s*", "", lines[0], flags=re.IGNORECASE)
    return text or None


class SavedRewriter:
    """Rewrites read back from a ``tables`` run's records, to judge them again (another verifier, the
    gate after a change) without generating them again: an LLM rewriter is slow on a CPU."""

    def __init__(self, tables_dir: str | Path) -> None:
        from bodega.atomeval import run_files

        self.source = Path(tables_dir)
        self.rewrites: dict[tuple[str, str], str | None] = {}
        finished = [f for f in run_files.families(self.source) if run_files.is_complete(self.source, f)]
        for family in finished:
            for record in run_files.read_rewrites(self.source, family):
                self.rewrites[(record["family"], record["claim"])] = record["rewrite"]
        if not self.rewrites:
            raise MissingFileError(f"saved:{tables_dir}: no finished family there; run `bodega atomeval tables` "
                                   "first")
        names = {run_files.read_summary(self.source, family)["rewriter"] for family in finished}
        self.name = names.pop() if len(names) == 1 else f"saved ({tables_dir})"

    def covers(self, claim: str, families: list[str] | tuple[str, ...]) -> bool:
        """Whether a rewrite of ``claim`` was saved for every family."""
        return all((family, claim) in self.rewrites for family in families)

    def rewrite(self, claim: str, evidence: str, family: str) -> str | None:
        """The saved rewrite of ``claim`` for ``family``; KeyError when none was saved."""
        if (family, claim) not in self.rewrites:
            raise KeyError(f"no saved {family} rewrite of {claim!r} under {self.source}")
        return self.rewrites[(family, claim)]
