"""Run OpenAttack 2.1.1's own attackers through the same runner, offline, for comparison.

OpenAttack's defaults try to download resources and its NLTK tokenizer cannot load
with recent NLTK, so this module supplies what they need: a tokenizer of our own
(regex words and punctuation, spaCy part-of-speech tags, OpenAttack's single-space
detokenisation), auto-download off and WordNet from the offline NLTK folder. Each
attacker is built as BODEGA's ``runs/attack.py`` builds it: filter words = OpenAttack's
list + ``~``, ``token_unk='🔥'`` for PWWS and DeepWordBug, ``BERTAttacker(filter_words,
use_bpe=False)``; an option given by the user overrides one of these. The attackers run
unchanged, bugs included: their output is lower-cased and re-spaced as the reference
produces it. ``py:module:factory`` builds a user's OpenAttack attacker instead. OpenAttack draws
from numpy's global random state; it is seeded from the example's generator before each attack so a run is
repeatable. TextFooler and BAE need the Universal Sentence Encoder and SCPN its own
weights and a Stanford parser; none is available offline, so they are refused here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bodega.attacks.goal import Goal
from bodega.attacks.pos import PosTagger, coarse_tag
from bodega.attacks.result import AttackResult
from bodega.errors import BodegaError
from bodega.text import OPENATTACK_TOKEN



@dataclass(frozen=True)
class OpenAttackRecipe:
    """How BODEGA's ``runs/attack.py`` builds OpenAttack's counterpart of one of our attackers."""

    attacker_class: str
    """Its class in ``OpenAttack.attackers``."""
    token_unk: bool = False
    """Given ``token_unk='🔥'``."""
    filter_words: bool = True
    """Given BODEGA's filter words (OpenAttack's list + ``~``)."""
    offline: bool = True
    """Whether it runs here (TextFooler and BAE need the Universal Sentence Encoder, which cannot be fetched)."""
    substitute: bool = True
    """Given WordNet substitutes (DeepWordBug edits characters)."""
    masked_lm: bool = False
    """Given the profile's masked LM (``mlm_path``) and ``use_bpe=False``, and no tokenizer of ours (BERT-ATTACK)."""


RECIPES: dict[str, OpenAttackRecipe] = {
    "DeepWordBug": OpenAttackRecipe("DeepWordBugAttacker", token_unk=True, filter_words=False, substitute=False),
    "PWWS": OpenAttackRecipe("PWWSAttacker", token_unk=True),
    "TextFooler": OpenAttackRecipe("TextFoolerAttacker", token_unk=True, offline=False),
    "Genetic": OpenAttackRecipe("GeneticAttacker"),
    "SememePSO": OpenAttackRecipe("PSOAttacker"),
    "BERT-ATTACK": OpenAttackRecipe("BERTAttacker", substitute=False, masked_lm=True),
    "BAE": OpenAttackRecipe("BAEAttacker", offline=False),
}
"""Our attackers that OpenAttack 2.1.1 has, by their canonical names (the attacker registry's): a name is looked
up through the registry, so any alias reaches its recipe."""
SUPPORTED = tuple(name for name, recipe in RECIPES.items() if recipe.offline)


def _prepare_openattack():
    from bodega.extras import require
    from bodega.resources import use_nltk_data

    require("OpenAttack", "backend='openattack'")
    import OpenAttack

    OpenAttack.DataManager.setAutoDownload(False)
    folder = use_nltk_data()
    OpenAttack.DataManager.set_path(str(folder / "corpora" / "wordnet"), "TProcess.NLTKWordNet")
    return OpenAttack


def make_tokenizer(tagger: PosTagger | None = None):
    """OpenAttack's ``PunctTokenizer`` tokens (NLTK's word-punct pattern), spaCy tags in its five classes."""
    import bisect

    from OpenAttack.tags import TAG_English
    from OpenAttack.text_process.tokenizer import Tokenizer

    tagger = tagger or PosTagger()

    class SpacyTaggedTokenizer(Tokenizer):
        TAGS = {TAG_English}

        def do_tokenize(self, x: str, pos_tagging: bool = True):
            matches = list(OPENATTACK_TOKEN.finditer(x))
            tokens = [m.group() for m in matches]
            if not pos_tagging:
                return tokens
            doc = tagger.nlp(x)
            starts = [t.idx for t in doc]
            tags = [coarse_tag(doc[max(bisect.bisect_right(starts, m.start()) - 1, 0)].tag_) if len(doc) else "other"
                    for m in matches]
            return list(zip(tokens, tags))

        def do_detokenize(self, x):
            return " ".join(x)

    return SpacyTaggedTokenizer()


@dataclass
class OpenAttackAttacker:
    """One of OpenAttack's attackers behind our ``attack(victim, text, goal, rng)`` interface."""

    name: str
    attacker: Any

    def warm_up(self) -> None:
        """Tokenise once so spaCy and WordNet load before the first timed example."""
        if hasattr(self.attacker, "tokenizer"):
            self.attacker.tokenizer.tokenize("Warm up the tagger.")
        if hasattr(self.attacker, "substitute"):
            self.attacker.substitute("house", "noun")

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        """Run OpenAttack's attacker on an OpenAttack view of the victim, numpy's global state seeded from ``rng``."""
        from OpenAttack.attack_assist.goal import ClassifierGoal

        from bodega.victims.openattack_adapter import as_openattack_classifier

        np.random.seed(int(rng.integers(2**32)))
        adversarial = self.attacker.attack(as_openattack_classifier(victim), text,
                                           ClassifierGoal(goal.target, goal.targeted))
        return AttackResult(adversarial, adversarial is not None)


def bodega_settings(name: str) -> dict:
    """The keyword arguments BODEGA's ``runs/attack.py`` gives OpenAttack's attacker ``name``."""
    from bodega.attacks.base import ATTACKERS
    from bodega.attacks.filter_words import UNK_TEXT, bodega_filter_words

    recipe = RECIPES.get(ATTACKERS.find(name) or name)
    if recipe is None:
        return {}
    settings: dict[str, Any] = {"token_unk": UNK_TEXT} if recipe.token_unk else {}
    if recipe.filter_words:
        settings["filter_words"] = list(bodega_filter_words("openattack"))
    if recipe.masked_lm:
        settings["use_bpe"] = False
    return settings


def build_openattack_attacker(name: str, profile: str = "cpu", **options: Any) -> OpenAttackAttacker:
    """OpenAttack's attacker for a paper name with BODEGA's settings, ``options`` overriding them.

    BERT-ATTACK's masked LM is the profile's (``mlm_path=`` overrides it), read from a local folder.
    """
    from bodega.attacks.base import ATTACKERS

    name = ATTACKERS.canonical(name)
    if name not in SUPPORTED:
        raise BodegaError(f"the OpenAttack backend runs {', '.join(SUPPORTED)} offline; {name} needs resources "
                          "(Universal Sentence Encoder, SCPN weights, Stanford parser) that cannot be fetched here: "
                          "use backend='native'")
    OpenAttack = _prepare_openattack()
    recipe, settings = RECIPES[name], {**bodega_settings(name), **options}
    attacker_class = getattr(OpenAttack.attackers, recipe.attacker_class)
    if recipe.masked_lm:
        from bodega.mlm.model import resolve_masked_lm

        settings["mlm_path"] = str(resolve_masked_lm(profile, settings.pop("mlm_path", None)))
        settings.setdefault("device", "cpu")
        return OpenAttackAttacker(name, attacker_class(**settings))
    tokenizer = make_tokenizer()
    if recipe.substitute:
        settings = {"substitute": OpenAttack.attack_assist.substitute.word.WordNetSubstitute(), **settings}
    return OpenAttackAttacker(name, attacker_class(tokenizer=tokenizer, **settings))
