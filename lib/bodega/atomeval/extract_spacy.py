"""Dependency-parse SROM extractor (the offline default), following ``gold/README.md``.

It walks the spaCy parse: every predicate (the root and verbs coordinated with it) gives an atom;
the subject is the nominal subject's phrase, the relation the verb lemma plus its chain of open
complements and particle, the object the direct object or copular complement, and every other
dependent of the predicate a typed modifier. Coordinated objects are split into one atom each.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from bodega.atomeval.atoms import Atom, Modifier

SCOPE_ADVERBS = frozenset({"only", "solely", "exclusively", "ever", "just", "merely", "purely", "entirely",
                           "wholly", "always", "mainly", "mostly", "partly", "primarily"})
NEGATION_WORDS = frozenset({"not", "n't", "never", "no"})
SUBJECT_DEPS = ("nsubj", "nsubjpass", "csubj", "csubjpass")
OBJECT_DEPS = ("dobj", "obj", "dative")
COPULA_COMPLEMENT_DEPS = ("attr", "acomp", "oprd")
SKIP_DEPS = frozenset({"punct", "cc", "conj", "aux", "auxpass", "neg", "mark", "prt", "expl", "dep",
                       "case", "det", "preconj"})
TIME_MARKERS = frozenset({"before", "after", "until", "since", "when", "while", "during", "as"})
TIME_ENTS = frozenset({"DATE", "TIME"})
PLACE_ENTS = frozenset({"GPE", "LOC", "FAC"})
QUANTITY_ENTS = frozenset({"CARDINAL", "MONEY", "QUANTITY", "PERCENT"})


def _phrase(tokens: list[Any]) -> str:
    """The tokens' text with the claim's own spacing (so "co-found" stays one word)."""
    words = [t for t in sorted(tokens, key=lambda t: t.i)]
    while words and words[-1].is_punct and words[-1].text not in ("$", "%"):
        words.pop()
    while words and words[0].is_punct and words[0].text not in ("$",):
        words.pop(0)
    out = []
    for k, t in enumerate(words):
        adjacent = k + 1 < len(words) and words[k + 1].i == t.i + 1
        out.append(t.text + (t.whitespace_ if adjacent else " "))
    return "".join(out).strip()


def _subtree(token: Any, exclude: set[int] = frozenset()) -> list[Any]:
    """The token's subtree without the subtrees rooted at ``exclude`` token indices."""
    out, stack = [], [token]
    while stack:
        node = stack.pop()
        if node.i in exclude:
            continue
        out.append(node)
        stack.extend(node.children)
    return out


def _is_scope(token: Any) -> bool:
    return token.lower_ in SCOPE_ADVERBS and token.dep_ in ("advmod", "npadvmod", "amod", "preconj")


def _modifier_type(token: Any, tokens: list[Any]) -> str:
    if token.dep_ == "agent":
        return "agent"
    if _is_scope(token):
        return "scope"
    ents = {t.ent_type_ for t in tokens}
    first = min(tokens, key=lambda t: t.i).lower_
    if ents & TIME_ENTS or first in TIME_MARKERS and token.dep_ == "advcl":
        return "time"
    if any(t.like_num and len(t.text) == 4 for t in tokens) or first == "as" and len(tokens) > 2:
        return "time"
    if ents & PLACE_ENTS:
        return "place"
    if ents & QUANTITY_ENTS:
        return "quantity"
    if token.pos_ == "ADV":
        return "manner"
    return "other"


@dataclass
class _Frame:
    """What one predicate contributes before objects are split."""

    subject: str
    relation: list[str]
    objects: list[str] = field(default_factory=list)
    modifiers: list[Modifier] = field(default_factory=list)
    negated: bool = False
    span: str = ""


class SpacyExtractor:
    """Rule-based extractor over ``bodega.resources.load_spacy()``'s dependency parse."""

    name = "spacy-dependency"

    def __init__(self, nlp: Any = None) -> None:
        self.nlp = nlp if nlp is not None else default_nlp()

    def extract(self, claim: str) -> list[Atom]:
        """Atoms of one claim, from its spaCy parse."""
        return self.extract_doc(self.nlp(claim))

    def extract_many(self, claims: list[str], batch_size: int = 64) -> list[list[Atom]]:
        """Atoms per claim, parsing the claims ``batch_size`` at a time."""
        return [self.extract_doc(doc) for doc in self.nlp.pipe(claims, batch_size=batch_size)]

    # --- parse walking -------------------------------------------------------------------------

    def extract_doc(self, doc: Any) -> list[Atom]:
        """Atoms of an already parsed spaCy doc, walking the predicates of each sentence."""
        atoms: list[Atom] = []
        for sent in doc.sents:
            root = sent.root
            predicates = [root] + [c for c in _conjuncts(root) if c.pos_ in ("VERB", "AUX")]
            frames = [self._frame(p, inherited=None) for p in predicates]
            for i in range(1, len(frames)):
                if not frames[i].subject:
                    frames[i].subject = frames[0].subject
            _share_right_node(frames)
            for frame in frames:
                if not frame.subject:
                    frame.subject = _phrase([t for t in sent if not t.is_punct][:1]) or sent.text
                objects = frame.objects or [""]
                for obj in objects:
                    atoms.append(Atom(subject=frame.subject, relation=" ".join(frame.relation) or root.lemma_,
                                      object=obj, modifiers=tuple(frame.modifiers),
                                      polarity="negated" if frame.negated else "affirmed", span=frame.span))
        return atoms

    def _frame(self, predicate: Any, inherited: Any) -> _Frame:
        subject_token = next((c for c in predicate.children if c.dep_ in SUBJECT_DEPS), None)
        expl = any(c.dep_ == "expl" for c in predicate.children)
        frame = _Frame(subject=_phrase(_subtree(subject_token)) if subject_token is not None else "",
                       relation=[], span=_phrase(list(predicate.subtree)))
        chain = [predicate]
        while True:
            nxt = next((c for c in chain[-1].children if c.dep_ == "xcomp" and c.tag_ == "VB"), None)
            if nxt is None:
                break
            chain.append(nxt)
        # "X has yet to V": a negated V
        if (len(chain) > 1 and chain[0].lemma_ == "have"
                and any(c.lower_ == "yet" for c in chain[0].children)):
            frame.negated = True
            chain = chain[1:]
            skip_first = {c.i for c in predicate.children if c.lower_ == "yet"}
        else:
            skip_first = set()
        consumed = {t.i for t in chain} | skip_first
        if subject_token is not None:
            consumed.add(subject_token.i)
        for verb in chain:
            lemma = verb.lemma_.lower()
            is_copula = lemma == "be" and verb.pos_ == "AUX" or lemma == "be" and verb is chain[-1]
            frame.relation.append("be" if is_copula else lemma)
            frame.relation.extend(c.lower_ for c in verb.children if c.dep_ == "prt")
            if any(c.dep_ == "neg" for c in verb.children):
                frame.negated = True
        last = chain[-1]
        if len(frame.relation) > 1:  # drop copula/auxiliary-like members kept by the chain only at the ends
            frame.relation = [r for i, r in enumerate(frame.relation) if r != "be" or i == len(frame.relation) - 1]
        copula = frame.relation[-1] == "be"
        if expl and copula:  # existential: "there are X"
            attr = next((c for c in last.children if c.dep_ in ("attr", "nsubj")), None)
            if attr is not None:
                frame.subject = _phrase(_subtree(attr))
                consumed.add(attr.i)
        object_heads: list[Any] = []
        for child in last.children:
            if child.i in consumed:
                continue
            if child.dep_ in OBJECT_DEPS or copula and child.dep_ in COPULA_COMPLEMENT_DEPS:
                object_heads.append(child)
        if not object_heads:  # "avoids practicing X": a gerund complement is what is avoided
            object_heads.extend(c for c in last.children
                                if c.dep_ == "xcomp" and c.tag_ == "VBG" and c.i not in consumed)
        if copula and not object_heads:
            complement = next((c for c in last.children if c.i not in consumed and (
                c.dep_ == "prep" or c.dep_ == "advmod" and not _is_scope(c))), None)
            if complement is not None:
                object_heads.append(complement)
        for head in object_heads:
            consumed.add(head.i)
            for part in [head] + list(_conjuncts(head)):
                scope = [t for t in part.subtree if _is_scope(t) and t.head.i == part.i or
                         _is_scope(t) and t.head.head.i == part.i and t.head.dep_ == "amod"]
                for s in scope:
                    frame.modifiers.append(Modifier("scope", s.text))
                exclude = {c.i for c in part.children if c.dep_ in ("conj", "cc")} | {s.i for s in scope}
                frame.objects.append(_phrase(_subtree(part, exclude)))
        for verb in chain:
            for child in verb.children:
                if child.i in consumed or child.dep_ in SKIP_DEPS or child.dep_ in SUBJECT_DEPS:
                    continue
                if child.dep_ == "xcomp":
                    continue
                if child.dep_ == "advmod" and child.lower_ in NEGATION_WORDS:
                    frame.negated = True
                    continue
                if _is_scope(child):  # "only ever": one modifier per scope adverb
                    for scope in [child] + [c for c in child.subtree if c is not child and _is_scope(c)]:
                        frame.modifiers.append(Modifier("scope", scope.text))
                    continue
                tokens = [t for t in _subtree(child) if not (t.dep_ == "neg" and t.head.i == child.i)]
                frame.modifiers.append(Modifier(_modifier_type(child, tokens), _phrase(tokens)))
        return frame


@lru_cache(maxsize=1)
def default_nlp() -> Any:
    """The packaged spaCy pipeline with hyphenated words kept whole, loaded once per process."""
    from bodega.resources import load_spacy

    return keep_hyphenated_words(load_spacy())


def keep_hyphenated_words(nlp: Any) -> Any:
    """Stop the tokenizer splitting letter-hyphen-letter words ("co-found", "pay-per-view").

    The packaged pipeline splits them into three tokens, which makes the parser read "co" as a verb
    and "found" as its object; whole words parse as the words they are.
    """
    from spacy.lang.char_classes import ALPHA, HYPHENS
    from spacy.util import compile_infix_regex

    hyphen_rule = r"(?<=[{a}0-9])(?:{h})(?=[{a}])".format(a=ALPHA, h=HYPHENS)
    infixes = [p for p in nlp.Defaults.infixes if p != hyphen_rule]
    nlp.tokenizer.infix_finditer = compile_infix_regex(infixes).finditer
    return nlp


def _conjuncts(token: Any) -> list[Any]:
    return [c for c in token.children if c.dep_ == "conj"]


def _share_right_node(frames: list[_Frame]) -> None:
    """"written and directed by X": earlier bare conjuncts take the last conjunct's dependents."""
    if len(frames) < 2:
        return
    last = frames[-1]
    for frame in frames[:-1]:
        if not frame.objects and not frame.modifiers:
            frame.objects = list(last.objects)
            frame.modifiers = list(last.modifiers)
            frame.negated = frame.negated or last.negated
