"""BODEGA's word-level settings: the words an attack never replaces and the unknown-word token.

BODEGA's ``runs/attack.py`` passes OpenAttack's English filter-word list plus ``~`` (its
separator of FC's claim and evidence) to PWWS, TextFooler, Genetic, PSO, BERT-ATTACK and
BAE, and ``token_unk='🔥'`` (its ``UNK_TEXT``) to PWWS, TextFooler and DeepWordBug. Both
backends take them from here. OpenAttack's list ships with the package as data
(``openattack_filter_words.txt``, with OpenAttack's MIT licence), so a core install without
the ``openattack`` extra attacks with it.
"""
from __future__ import annotations

import ast
import importlib.util
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

from bodega.errors import BodegaError
from bodega.extras import require

SEPARATOR = "~"
"""BODEGA's ``SEPARATOR_CHAR``: joins FC's claim and evidence, and is a filter word."""

UNK_TEXT = "🔥"
"""BODEGA's ``UNK_TEXT``: the token that stands in for a word when its importance is measured."""

FILTER_WORD_LISTS = ("openattack", "spacy")


def openattack_constant(module: str, name: str):
    """A literal (list, dict) assigned at the top of an installed OpenAttack module, read without importing it."""
    require("OpenAttack", f"OpenAttack 2.1.1's {name}")
    spec = importlib.util.find_spec("OpenAttack")
    source = Path(list(spec.submodule_search_locations)[0], *module.split("/"))
    for node in ast.parse(source.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == name for t in node.targets):
            return ast.literal_eval(node.value)
    raise BodegaError(f"{source}: no {name}; is OpenAttack 2.1.1 installed?")


FILTER_WORDS_FILE = "openattack_filter_words.txt"
"""OpenAttack 2.1.1's ``ENGLISH_FILTER_WORDS``, one a line in its order, beside this module (``#``: attribution)."""


@lru_cache(maxsize=1)
def openattack_filter_words() -> tuple[str, ...]:
    """OpenAttack 2.1.1's ``ENGLISH_FILTER_WORDS``, from the packaged copy."""
    text = files("bodega.attacks").joinpath(FILTER_WORDS_FILE).read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line and not line.startswith("#"))


def bodega_filter_words(kind: str = "openattack") -> tuple[str, ...]:
    """The filter words BODEGA passes (``openattack``: its list + ``~``) or spaCy's stop words + ``~``."""
    if kind == "openattack":
        return (*openattack_filter_words(), SEPARATOR)
    if kind == "spacy":
        from spacy.lang.en.stop_words import STOP_WORDS

        return (*sorted(w.lower() for w in STOP_WORDS), SEPARATOR)
    raise BodegaError(f"filter_words={kind!r}: choose one of {', '.join(FILTER_WORD_LISTS)}")


def filter_stopwords(kind: str = "openattack", substitutes: bool = False):
    """The :class:`~bodega.attacks.constraints.Stopwords` constraint over :func:`bodega_filter_words`
    (``substitutes``: refusing them as substitutes too)."""
    from bodega.attacks.constraints import Stopwords

    return Stopwords(frozenset(bodega_filter_words(kind)), substitutes)
