"""Does a rewrite atom still assert an original atom? Slot-by-slot comparison.

Each slot pair gets a :class:`SlotStatus`:

- ``same``: equal after normalisation, or word for word equal up to WordNet synonyms and
  (optionally) one-letter typos of long words;
- ``specialised``: the rewrite says everything the original says and more ("film" ->
  "German film"); a more specific rewrite still asserts the original. Added negators, quantifiers,
  privative modifiers and exclusion words (``NON_SPECIALISING``: "no", "all", "former", "outside")
  do not specialise: they make the slot ``changed``;
- ``generalised``: the rewrite says less: words dropped ("German film" -> "film") or replaced by a
  WordNet hypernym ("documentary" -> "film");
- ``changed``: some word was replaced by one that is neither synonym nor hypernym;
- ``dropped`` / ``added``: the slot is empty on one side only.

An original atom is *preserved* by a rewrite atom when subject, relation and object are ``same``
or ``specialised``, the polarity agrees, every original modifier is preserved by some rewrite
modifier, no original number is missing, and the rewrite does not hedge what the original asserted.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from bodega.atomeval.atoms import Atom, Modifier
from bodega.atomeval.lexicon import is_hypernym, synonyms
from bodega.atomeval.normalise import normalise, numbers_in, tokens

# Words that carry no content of their own when comparing slots (prepositions that mark the
# same role, auxiliaries). Words that change truth conditions (before/after, than, only, not)
# are deliberately absent.
FUNCTION_WORDS = frozenset({
    "of", "in", "on", "at", "to", "for", "with", "by", "from", "into", "onto", "as", "and", "that",
    "which", "who", "whom", "be", "have", "do", "it", "its", "there", "this", "these", "those", "s",
})
# Words whose addition does not make a claim more specific but changes what it says: negators,
# quantifiers, privative modifiers ("former", "fake") and exclusion ("outside", "without").
NON_SPECIALISING = frozenset({
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "zero", "hardly", "barely",
    "all", "every", "each", "any", "some", "few", "many", "most", "several", "both",
    "former", "ex", "fake", "false", "alleged", "fictional", "imaginary", "pseudo", "non", "so-called",
    "outside", "without", "except", "excluding", "beyond", "instead", "against", "than", "less", "more",
})
HEDGES = frozenset({"may", "might", "could", "possibly", "perhaps", "maybe", "reportedly", "allegedly",
                    "supposedly", "probably", "likely", "apparently", "seemingly", "rumored", "rumoured",
                    "arguably", "sometimes", "somewhat", "partly", "partially", "some", "hardly", "barely",
                    "almost", "nearly", "seem", "appear", "believe", "claim", "suggest", "speculate"})


class SlotStatus(str, Enum):
    """How a slot of the rewrite atom relates to the original's."""

    SAME = "same"
    SPECIALISED = "specialised"
    GENERALISED = "generalised"
    CHANGED = "changed"
    DROPPED = "dropped"
    ADDED = "added"

    @property
    def preserves(self) -> bool:
        """True for the statuses that keep the original's meaning: same, specialised, added."""
        return self in (SlotStatus.SAME, SlotStatus.SPECIALISED, SlotStatus.ADDED)


@dataclass(frozen=True)
class SlotComparison:
    """The status of one slot and the words on either side that found no counterpart."""

    status: SlotStatus
    original_words: tuple[str, ...] = ()  # original words with no counterpart
    rewrite_words: tuple[str, ...] = ()   # rewrite words with no counterpart
    generalisations: tuple[tuple[str, str], ...] = ()  # (original word, its hypernym in the rewrite)


@dataclass(frozen=True)
class MatcherConfig:
    """Parameters of slot matching (all documented in the book's AtomEval chapter)."""

    use_wordnet: bool = True
    typo_max_edits: int = 1      # a rewrite word this many edits (OSA) from an original word is the same word
    typo_min_length: int = 5     # ... when both words are at least this long and neither is a number
    nli_threshold: float = 0.5   # entailment probability above which NLI says "asserted"


def content(words: tuple[str, ...]) -> tuple[str, ...]:
    """The words that are not function words."""
    return tuple(w for w in words if w not in FUNCTION_WORDS)


def _edit_distance_at_most(a: str, b: str, limit: int) -> bool:
    """Optimal-string-alignment distance: a swap of two adjacent letters is one typo, as in DeepWordBug."""
    from rapidfuzz.distance import OSA

    return OSA.distance(a, b, score_cutoff=limit) <= limit


class Matcher:
    """Slot comparison with normalisation, WordNet and optional NLI (see module docstring)."""

    def __init__(self, config: MatcherConfig | None = None, nli=None) -> None:
        self.config = config or MatcherConfig()
        self.nli = nli

    # --- words and phrases ------------------------------------------------------------------

    def same_word(self, a: str, b: str) -> bool:
        """True for equal words, WordNet synonyms (if enabled) or a typo of a long non-number word."""
        if a == b:
            return True
        if a[:1].isdigit() or b[:1].isdigit():
            return False
        if self.config.use_wordnet and synonyms(a, b):
            return True
        limit = self.config.typo_max_edits
        return (limit > 0 and min(len(a), len(b)) >= self.config.typo_min_length
                and _edit_distance_at_most(a, b, limit))

    def compare_words(self, original: tuple[str, ...], rewrite: tuple[str, ...]) -> SlotComparison:
        """The :class:`SlotComparison` of two slots' content words."""
        original, rewrite = content(original), content(rewrite)
        if not original and not rewrite:
            return SlotComparison(SlotStatus.SAME)
        if not rewrite:
            return SlotComparison(SlotStatus.DROPPED, original_words=original)
        if not original:
            return SlotComparison(SlotStatus.ADDED, rewrite_words=rewrite)
        unmatched_rewrite = list(rewrite)
        unmatched_original = []
        for word in original:
            hit = next((r for r in unmatched_rewrite if self.same_word(word, r)), None)
            if hit is None:
                unmatched_original.append(word)
            else:
                unmatched_rewrite.remove(hit)
        if not unmatched_original:
            if any(w in NON_SPECIALISING for w in unmatched_rewrite):
                return SlotComparison(SlotStatus.CHANGED, (), tuple(unmatched_rewrite))
            status = SlotStatus.SPECIALISED if unmatched_rewrite else SlotStatus.SAME
            return SlotComparison(status, rewrite_words=tuple(unmatched_rewrite))
        generalisations = []
        if self.config.use_wordnet:
            for word in list(unmatched_original):
                general = next((r for r in unmatched_rewrite if is_hypernym(r, word)), None)
                if general is not None:
                    generalisations.append((word, general))
                    unmatched_original.remove(word)
                    unmatched_rewrite.remove(general)
        if any(w in NON_SPECIALISING for w in unmatched_original):  # "no brother" -> "brother"
            return SlotComparison(SlotStatus.CHANGED, tuple(unmatched_original), tuple(unmatched_rewrite),
                                  tuple(generalisations))
        if not unmatched_rewrite:  # only losses and hypernyms: the rewrite says less
            return SlotComparison(SlotStatus.GENERALISED, tuple(unmatched_original), (),
                                  tuple(generalisations))
        return SlotComparison(SlotStatus.CHANGED, tuple(unmatched_original), tuple(unmatched_rewrite),
                              tuple(generalisations))

    def compare_text(self, original: str, rewrite: str, *, relation: bool = False) -> SlotComparison:
        """The :class:`SlotComparison` of two slot texts, normalised first."""
        return self.compare_words(normalise(original, relation=relation), normalise(rewrite, relation=relation))

    # --- atoms ------------------------------------------------------------------------------

    def compare(self, original: Atom, rewrite: Atom, rewrite_text: str = "") -> "AtomComparison":
        """Compare two atoms slot by slot, with modifiers, polarity, numbers and hedges."""
        slots = {
            "subject": self.compare_text(original.subject, rewrite.subject),
            "relation": self.compare_text(original.relation, rewrite.relation, relation=True),
            "object": self.compare_text(original.object, rewrite.object),
        }
        # an object can move into a modifier and back ("born in Paris" / "Paris birthplace")
        missing_mods, added_mods = self._match_modifiers(original.modifiers, rewrite.modifiers)
        problems: list[str] = []
        for name, comparison in slots.items():
            if not comparison.status.preserves:
                problems.append(f"{name} {comparison.status.value}")
        for modifier, comparison in missing_mods:
            problems.append(f"modifier '{modifier.value}' {comparison.status.value}")
        if original.polarity != rewrite.polarity:
            problems.append(f"polarity {original.polarity} -> {rewrite.polarity}")
        original_numbers = numbers_in(_atom_words(original))
        lost_numbers = original_numbers - numbers_in(_atom_words(rewrite))
        if lost_numbers:
            problems.append("number " + ", ".join(sorted(lost_numbers)) + " not asserted")
        hedges = self.hedges(original, rewrite, rewrite_text)
        if hedges:
            problems.append("hedged by " + ", ".join(sorted(hedges)))
        return AtomComparison(original, rewrite, slots, tuple(missing_mods), tuple(added_mods),
                              tuple(problems), tuple(sorted(hedges)))

    def _match_modifiers(self, original: tuple[Modifier, ...], rewrite: tuple[Modifier, ...]):
        remaining = list(rewrite)
        missing = []
        for modifier in original:
            best = None
            for candidate in remaining:
                comparison = self.compare_text(modifier.value, candidate.value)
                if comparison.status.preserves:
                    best = (candidate, comparison)
                    break
                if best is None or _rank(comparison) > _rank(best[1]):
                    best = (candidate, comparison)
            if best is not None and best[1].status.preserves:
                remaining.remove(best[0])
            else:
                comparison = best[1] if best is not None else SlotComparison(
                    SlotStatus.DROPPED, original_words=content(normalise(modifier.value)))
                missing.append((modifier, comparison))
        return missing, remaining

    def hedges(self, original: Atom, rewrite: Atom, rewrite_text: str = "") -> set[str]:
        """Hedging words the rewrite atom carries and the original atom did not."""
        mine = set(tokens(" ".join([rewrite.span or rewrite_text, rewrite.relation,
                                    " ".join(m.value for m in rewrite.modifiers)])))
        theirs = set(tokens(" ".join([original.span, original.relation, original.subject, original.object,
                                      " ".join(m.value for m in original.modifiers)])))
        found = {w for w in mine - theirs if w in HEDGES}
        base_forms = {normalise(w, relation=True)[0] for w in mine - theirs if normalise(w, relation=True)}
        found |= {w for w in base_forms if w in HEDGES and w not in {normalise(t, relation=True)[0]
                                                                      for t in theirs if normalise(t, relation=True)}}
        return found


def _rank(comparison: SlotComparison) -> int:
    order = [SlotStatus.DROPPED, SlotStatus.CHANGED, SlotStatus.GENERALISED, SlotStatus.ADDED,
             SlotStatus.SPECIALISED, SlotStatus.SAME]
    return order.index(comparison.status)


def _atom_words(atom: Atom) -> str:
    return " ".join([atom.subject, atom.relation, atom.object] + [m.value for m in atom.modifiers])


@dataclass(frozen=True)
class AtomComparison:
    """How one rewrite atom stands to one original atom; ``problems`` empty means preserved."""

    original: Atom
    rewrite: Atom
    slots: dict[str, SlotComparison]
    missing_modifiers: tuple[tuple[Modifier, SlotComparison], ...] = ()
    added_modifiers: tuple[Modifier, ...] = ()
    problems: tuple[str, ...] = ()
    hedges: tuple[str, ...] = ()
    nli_entailment: float | None = None

    @property
    def preserved(self) -> bool:
        """True when the comparison found no problem."""
        return not self.problems

    def score(self) -> float:
        """A graded agreement in [0, 1] (1 when preserved), used to rank rewrites (ROC AUC)."""
        if self.preserved:
            return 1.0
        credit = {SlotStatus.SAME: 1.0, SlotStatus.SPECIALISED: 1.0, SlotStatus.ADDED: 1.0,
                  SlotStatus.GENERALISED: 0.5, SlotStatus.CHANGED: 0.0, SlotStatus.DROPPED: 0.0}
        parts = [credit[s.status] for s in self.slots.values()]
        n_mods = len(self.original.modifiers)
        if n_mods:
            parts.append(1 - len(self.missing_modifiers) / n_mods)
        value = sum(parts) / len(parts)
        if self.original.polarity != self.rewrite.polarity:
            value *= 0.25
        if self.hedges:
            value *= 0.5
        return min(value, 0.99)
