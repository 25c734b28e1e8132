"""Run OpenAttack 2.1.1's own attackers through the same runner, offline, for comparison.

OpenAttack's defaults try to download resources and its NLTK tokenizer cannot load
with recent NLTK, so this module supplies what they need: a tokenizer of our own
(regex words and punctuation, spaCy part-of-speech tags, OpenAttack's single-space
detokenisation), auto-download off and WordNet from the offline NLTK folder. The
attackers themselves run unchanged, bugs included: their output is lower-cased and
re-spaced as the reference produces it. OpenAttack draws from numpy's global random
state; it is seeded from the example's generator before each attack so a run is
repeatable. TextFooler and BAE need the Universal Sentence Encoder and SCPN its own
weights and a Stanford parser; none is available offline, so they are refused here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from bodega.attacks.goal import Goal
from bodega.attacks.pos import PosTagger, coarse_tag
from bodega.attacks.result import AttackResult

_TOKEN = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")
SUPPORTED = ("DeepWordBug", "PWWS", "Genetic", "PSO")


def _prepare_openattack():
    import OpenAttack

    from bodega.resources import use_nltk_data

    OpenAttack.DataManager.setAutoDownload(False)
    folder = use_nltk_data()
    OpenAttack.DataManager.set_path(str(folder / "corpora" / "wordnet"), "TProcess.NLTKWordNet")
    return OpenAttack


def make_tokenizer(tagger: PosTagger | None = None):
    """An ``OpenAttack`` tokenizer: regex tokens, spaCy tags mapped to OpenAttack's five classes."""
    import bisect

    from OpenAttack.tags import TAG_English
    from OpenAttack.text_process.tokenizer import Tokenizer

    tagger = tagger or PosTagger()

    class SpacyTaggedTokenizer(Tokenizer):
        TAGS = {TAG_English}

        def do_tokenize(self, x: str, pos_tagging: bool = True):
            matches = list(_TOKEN.finditer(x))
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
        self.attacker.tokenizer.tokenize("Warm up the tagger.")
        if hasattr(self.attacker, "substitute"):
            self.attacker.substitute("house", "noun")

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        from OpenAttack.attack_assist.goal import ClassifierGoal

        from bodega.victims.openattack_adapter import as_openattack_classifier

        np.random.seed(int(rng.integers(2**32)))
        adversarial = self.attacker.attack(as_openattack_classifier(victim), text,
                                           ClassifierGoal(goal.target, goal.targeted))
        return AttackResult(adversarial, adversarial is not None)


def build_openattack_attacker(name: str, profile: str = "cpu", **options: Any) -> OpenAttackAttacker:
    """OpenAttack's attacker for a paper name, with its defaults unless ``options`` override them."""
    if name not in SUPPORTED:
        raise ValueError(f"the OpenAttack backend runs {', '.join(SUPPORTED)} offline; {name} needs resources "
                         "(Universal Sentence Encoder, SCPN weights, Stanford parser) that cannot be fetched here: "
                         "use backend='native'")
    OpenAttack = _prepare_openattack()
    tokenizer = make_tokenizer()
    if name == "DeepWordBug":
        return OpenAttackAttacker(name, OpenAttack.attackers.DeepWordBugAttacker(tokenizer=tokenizer, **options))
    substitute = OpenAttack.attack_assist.substitute.word.WordNetSubstitute()
    classes = {"PWWS": OpenAttack.attackers.PWWSAttacker, "Genetic": OpenAttack.attackers.GeneticAttacker,
               "PSO": OpenAttack.attackers.PSOAttacker}
    return OpenAttackAttacker(name, classes[name](tokenizer=tokenizer, substitute=substitute, **options))
