"""Constituency parses for SCPN: linearisation, a user's parser, and a spaCy approximation.

SCPN's parse generator reads the input sentence's parse as a label sequence
(``( ROOT ( S ( NP ( DT ) ( NN ) ) ... ) ) EOP``, words removed). The published pipeline
gets the parse from the Stanford parser (Java, not installable here); the user can give
any parser that prints Penn-Treebank brackets, as a Python callable or a command that
reads the sentence on stdin. Without one, :class:`SpacyParser` derives a bracketed tree
from spaCy's dependency parse: phrases are the head words' subtrees labelled from the
head's PTB tag (NP, VP, S, SBAR, PP, ADJP, ADVP). That is an approximation — it is not
the Stanford parser's output, and the parse generator was trained on Stanford parses.
"""
from __future__ import annotations

import shlex
import subprocess
from typing import Callable

Parser = Callable[[str], str]

SUBJECTS = {"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"}
VERB_MODIFIERS = {"aux", "auxpass", "neg"}
WORD_INSIDE_PHRASE = {"det", "amod", "compound", "poss", "nummod", "punct", "cc", "case", "prt", "predet"}
PHRASE_BY_TAG = (("NN", "NP"), ("PRP", "NP"), ("CD", "NP"), ("DT", "NP"), ("EX", "NP"), ("JJ", "ADJP"),
                 ("RB", "ADVP"), ("IN", "PP"), ("TO", "PP"), ("WRB", "WHADVP"), ("WP", "WHNP"),
                 ("WDT", "WHNP"), ("UH", "INTJ"))


def linearise(tree: str) -> list[str]:
    """Labels and brackets of a bracketed parse, words dropped, ``EOP`` appended."""
    items = " ".join(tree.split()).replace("(", "( ").replace(")", " )").split()
    kept = [item for i, item in enumerate(items)
            if item in "()" or i == 0 or items[i - 1] in "()"]
    return kept + ["EOP"]


class CommandParser:
    """Runs ``command`` (shell words) with the sentence on stdin; its stdout is the bracketed parse."""

    def __init__(self, command: str, timeout: float = 60.0):
        self.argv = shlex.split(command)
        self.timeout = timeout

    def __call__(self, sentence: str) -> str:
        done = subprocess.run(self.argv, input=sentence, capture_output=True, text=True, timeout=self.timeout)
        if done.returncode != 0 or "(" not in done.stdout:
            raise RuntimeError(f"parser command {self.argv[0]} failed on {sentence[:60]!r} "
                               f"(exit {done.returncode}): {done.stderr.strip()[-300:]}")
        return done.stdout


SPACY_ONLY_TAGS = {"HYPH": ":", "NFP": ":", "ADD": "NN", "AFX": "JJ", "XX": "FW", "": "FW"}
"""spaCy tags outside the Penn Treebank set, mapped to the nearest PTB tag."""


def _leaf(token) -> str:
    word = token.text.replace("(", "-LRB-").replace(")", "-RRB-")
    tag = {"(": "-LRB-", ")": "-RRB-"}.get(token.tag_, token.tag_)
    tag = SPACY_ONLY_TAGS.get(tag, tag)
    return f"({tag} {word})"


def _words(tokens) -> list:
    return [t for t in tokens if not t.is_space]


def _phrase_label(tag: str) -> str:
    for prefix, label in PHRASE_BY_TAG:
        if tag.startswith(prefix):
            return label
    return "FRAG"


def _constituent(token) -> str:
    if token.tag_.startswith(("VB", "MD")) and token.dep_ not in VERB_MODIFIERS:
        return _clause(token, top=False)
    children = _words(token.lefts) + [None] + _words(token.rights)
    if len(children) == 1:
        label = _phrase_label(token.tag_)
        if token.dep_ in WORD_INSIDE_PHRASE or label in ("FRAG", "PP") or token.tag_ in ("DT", "PRP$"):
            return _leaf(token)
        return f"({label} {_leaf(token)})"
    inner = " ".join(_leaf(token) if c is None else _constituent(c) for c in children)
    return f"({_phrase_label(token.tag_)} {inner})"


def _clause(head, top: bool) -> str:
    """A verb's subtree: S (subject, VP, final punctuation), under SBAR when it has a marker."""
    lefts, rights = _words(head.lefts), _words(head.rights)
    marks = [c for c in lefts if c.dep_ == "mark"]
    outer = [c for c in lefts if c.dep_ not in VERB_MODIFIERS and c.dep_ != "mark"]
    in_verb_phrase = [c for c in lefts if c.dep_ in VERB_MODIFIERS]
    final = [c for c in rights if c.dep_ == "punct"]
    inner = [c for c in rights if c.dep_ != "punct"]
    verb_phrase = " ".join([_constituent(c) for c in in_verb_phrase] + [_leaf(head)]
                           + [_constituent(c) for c in inner])
    verb_phrase = f"(VP {verb_phrase})"
    if not top and not marks and not any(c.dep_ in SUBJECTS for c in lefts):
        return verb_phrase
    clause = " ".join([_constituent(c) for c in outer] + [verb_phrase] + [_constituent(c) for c in final])
    clause = f"(S {clause})"
    if marks:
        clause = f"(SBAR {' '.join(_leaf(m) for m in marks)} {clause})"
    return clause


class SpacyParser:
    """Deterministic bracketed parse from spaCy's dependencies (an approximation; see the module note)."""

    def __init__(self, nlp=None):
        self._nlp = nlp

    @property
    def nlp(self):
        """The spaCy pipeline, loaded on first use."""
        if self._nlp is None:
            from bodega.resources import load_spacy

            self._nlp = load_spacy()
        return self._nlp

    def __call__(self, sentence: str) -> str:
        parts = []
        for sent in self.nlp(sentence).sents:
            root = sent.root
            if root.tag_.startswith(("VB", "MD")):
                parts.append(_clause(root, top=True))
            else:
                parts.append(_constituent(root))
        return f"(ROOT {' '.join(parts)})"


def resolve_parser(parser: Parser | str | None) -> Parser:
    """A callable, a command line (``str``), or None for the spaCy approximation."""
    if parser is None:
        return SpacyParser()
    if isinstance(parser, str):
        return CommandParser(parser)
    return parser
