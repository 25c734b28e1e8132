"""The attacker interface and the registry that maps the paper's names (and older spellings) to factories."""
from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from bodega.attacks.constraints import Constraint, ConstraintSet
from bodega.attacks.evaluation import Evaluator
from bodega.attacks.goal import Goal
from bodega.attacks.pos import PosTagger
from bodega.attacks.result import AttackResult
from bodega.attacks.searches.common import SearchState
from bodega.errors import BodegaError
from bodega.plugins import is_plugin
from bodega.registry import Registry
from bodega.text import openattack_view, tokenize


class Attacker(Protocol):
    """What the runner attacks with: one text at a time, against a victim it must not look inside.

    Implement ``attack`` and a ``name`` (an optional ``warm_up()`` is called once before the first
    example, so that loading models is not charged to it). Build one with ``py:module:factory`` or
    pass it to the Python API; the runner counts queries, applies the budget and scores the result.
    """

    name: str

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        """Try to make ``victim`` change its decision on ``text`` as ``goal`` asks.

        ``victim`` is the run's query accountant: call only ``victim.predict_proba(texts)`` (an
        ``(n, 2)`` array; send a step's candidates in one call), and let
        :class:`~bodega.victims.accounting.QueryBudgetExceeded` propagate: the runner records the
        example as out of budget. Draw every random number from ``rng`` (seeded per example) so that a
        run repeats. Return ``AttackResult(text, True)`` on success; the runner checks the claim with
        the victim (one more query) and counts a wrong one as a failure. Any other exception is
        recorded as that example's error and the run goes on.
        """
        ...


@dataclass
class WordLevelAttacker:
    """An attack assembled from parts: a search function over a tokenised text.

    ``search(state)`` returns the adversarial text or None; ``tagger`` is set when the
    search needs part-of-speech tags (WordNet candidates do); ``constraints`` are the attack's
    rules, prepared here for each text and handed to the search in its state (the one way a
    search learns what it may change). Two named as-run options
    (see :mod:`bodega.attacks.fidelity`): ``respace`` attacks OpenAttack's view of the text
    (``PunctTokenizer`` tokens, punctuation included, re-joined by single spaces; lower-cased
    too when ``lower``) instead of word spans of the text as it is; ``reask`` sends a text
    to the victim every time the search asks, as OpenAttack does.
    """

    name: str
    search: Callable[[SearchState], str | None]
    tagger: PosTagger | None = None
    options: dict = field(default_factory=dict)
    respace: bool = False
    lower: bool = False
    reask: bool = False
    constraints: ConstraintSet = field(default_factory=ConstraintSet)

    def warm_up(self) -> None:
        """Load lexicons and models now, so the first example's time is the attack's alone."""
        if self.tagger is not None:
            self.tagger.nlp
        self.constraints.warm_up()
        for part in getattr(self.search, "keywords", {}).values():
            if hasattr(part, "warm_up"):
                part.warm_up()

    def attack(self, victim: Any, text: str, goal: Goal, rng: np.random.Generator) -> AttackResult:
        """Tokenise ``text`` (OpenAttack's view when ``respace``), tag it if needed, and run the search."""
        if self.respace:
            tokenized, source = openattack_view(text, self.lower)
        else:
            tokenized = source = tokenize(text)
        pos = self.tagger.tags(source) if self.tagger is not None else ["other"] * len(tokenized)
        state = SearchState(tokenized, pos, Evaluator(victim, goal, reask=self.reask), rng, self.constraints)
        self.constraints.prepare(state)
        adversarial = self.search(state)
        return AttackResult(adversarial, adversarial is not None)


AttackerFactory = Callable[..., Attacker]


def _load_recipes() -> None:
    import bodega.attacks.recipes as recipes

    for module in pkgutil.iter_modules(recipes.__path__):
        importlib.import_module(f"{recipes.__name__}.{module.name}")


ATTACKERS: Registry[AttackerFactory] = Registry("attacker", loader=_load_recipes)
"""Every attacker by its canonical name (the paper's), each module of :mod:`bodega.attacks.recipes`
registering its own when the first name is looked up."""


def register_attacker(name: str, factory: AttackerFactory, aliases: tuple[str, ...] = ()) -> None:
    """Make ``get_attacker(name)`` call ``factory(profile=..., **options)``; names are case-insensitive and
    ``aliases`` (older spellings) resolve to ``name``, the one written to run records and summaries."""
    ATTACKERS.register(name, factory, aliases)


def canonical_name(name: str) -> str:
    """The registered name of an attacker; a user's ``py:module:factory`` is its own name."""
    if is_plugin(name):
        return name
    return ATTACKERS.canonical(name)


def recorded_attacker(name: str) -> str:
    """The canonical name of an attacker as a file names it (a summary, ``run.json``, a benchmark's rows), which
    may be an older name (``PSO``); a user's own attacker, or one no longer registered, keeps its name."""
    return name if is_plugin(name) else ATTACKERS.find(name) or name


def attacker_folder_name(name: str) -> str:
    """An attacker as one part of a folder name: a registered one's canonical name, a user's ``py:`` spec as
    :func:`bodega.plugins.folder_name` writes it (``py:path/mine.py:build`` -> ``py_path_mine.py_build_<hash>``),
    anything else with each run of characters a folder name cannot hold read as ``_``."""
    from bodega.plugins import folder_name

    return folder_name(name) if is_plugin(name) else re.sub(r"[^\w.-]+", "_", recorded_attacker(name))


def registered_attackers() -> list[str]:
    """The registered attackers' names, the package's recipes loaded first."""
    return sorted(ATTACKERS, key=str.casefold)


def attacker_module(name: str) -> str:
    """The name of the ``bodega`` module whose factory builds attacker ``name``: its recipe, or for a plug-in
    (``py:module:factory``, the user's code) the module that loads it."""
    if is_plugin(name):
        return "bodega.attacks.user"
    return ATTACKERS[canonical_name(name)].__module__


def with_constraints(attacker: Attacker, extra: Sequence[Constraint]) -> Attacker:
    """A copy of a native attacker whose searches also obey ``extra``, after the recipe's own rules."""
    rules = getattr(attacker, "constraints", None)
    if not isinstance(rules, ConstraintSet):
        raise BodegaError(f"constraints: {attacker.name} does not change words one at a time, so word constraints "
                          "do not apply to it; give them to a word-level attacker")
    return replace(attacker, constraints=rules.plus(extra))


def get_attacker(name: str, profile: str = "cpu", backend: str = "native", constraints: Sequence[Constraint] = (),
                 **options: Any) -> Attacker:
    """Build an attacker by its paper name (or BODEGA's spelling) for a profile and backend.

    ``py:module:factory`` (or ``py:path/to/file.py:factory``) builds a user's attacker:
    ``factory(**options)`` returns an object with this package's ``attack(victim, text,
    goal, rng)`` (native backend) or an OpenAttack ``Attacker`` (openattack backend).
    ``constraints`` (:class:`~bodega.attacks.constraints.Constraint` objects) are rules every search
    of a native attacker obeys on top of its recipe's (:func:`with_constraints`).
    """
    if constraints and (is_plugin(name) or backend != "native"):
        raise BodegaError("constraints apply to the package's attackers on the native backend; a py: attacker or "
                          "an OpenAttack one applies its own rules")
    if is_plugin(name):
        from bodega.attacks.user import build_user_attacker

        return build_user_attacker(name, backend, **options)
    if backend == "openattack":
        from bodega.attacks.openattack_backend import build_openattack_attacker

        return build_openattack_attacker(canonical_name(name), profile=profile, **options)
    if backend != "native":
        raise BodegaError(f"unknown backend {backend!r}; choose 'native' or 'openattack'")
    factory = ATTACKERS[name]
    _check_options(canonical_name(name), factory, options)
    attacker = factory(profile=profile, **options)
    return with_constraints(attacker, constraints) if constraints else attacker


def _check_options(name: str, factory: AttackerFactory, options: dict[str, Any]) -> None:
    """Refuse, in one line naming the options the attacker takes, an option its factory has no parameter for
    (the factory's own TypeError ended the command in a traceback)."""
    import inspect

    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # no signature to read: the factory itself decides
        return
    try:
        signature.bind(profile="cpu", **options)
    except TypeError as error:
        accepted = [p.name for p in signature.parameters.values()
                    if p.name != "profile" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        raise BodegaError(f"attacker {name}: {error} (--option); it takes {', '.join(accepted) or 'no options'}") \
            from None
