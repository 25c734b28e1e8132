"""The one-way preservation gate and its diagnostics.

A rewrite is *valid* when every atom of the original claim is preserved by the rewrite; content the
rewrite adds never fails the gate (it is reported instead). A restructured rewrite that keeps an atom's
words is accepted only when it keeps the atom's roles (who did what to whom; voice may change). Diagnostics,
each with the atoms that triggered it:

- **ScopeLoss**: an original atom dropped, generalised (words dropped or replaced by a WordNet
  hypernym), or hedged;
- **EvDrift**: a changed slot whose new words the evidence supports and whose old words it does not:
  the rewrite moved toward the true fact;
- **EvEnt**: added content that the evidence supports (lexically, or by NLI when a model is given);
- **UnverAdd**: added content that the evidence does not support.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from bodega.atomeval.atoms import Atom
from bodega.atomeval.matching import NON_SPECIALISING, AtomComparison, Matcher, SlotStatus, content
from bodega.atomeval.normalise import NEGATORS, normalise, numbers_in, rejoin_split_words, tokens

# Relations (lemmas) for which "A r B" and "B r A" say the same: identity/class statements with the copula
# and a few reciprocal verbs. Every other relation keeps who did what to whom.
SYMMETRIC_RELATIONS = frozenset({"be", "marry", "meet", "date", "divorce", "resemble", "equal", "neighbor",
                                 "neighbour", "border"})


class Extractor(Protocol):
    """What the gate needs from an extractor: a ``name`` and ``extract(claim)`` to atoms."""

    name: str

    def extract(self, claim: str) -> list[Atom]:
        """The atoms of ``claim``."""
        ...


class EntailmentModel(Protocol):
    """What the gate needs from an NLI model."""

    def entailment(self, premises: list[str], hypotheses: list[str]) -> Any:
        """Entailment probabilities, one per (premise, hypothesis) pair."""
        ...


@dataclass(frozen=True)
class GateConfig:
    """Parameters of the gate (documented in the book's AtomEval chapter)."""

    allow_reordering: bool = True  # accept an atom whose words all appear in the rewrite (same negation,
    #                                numbers kept, no hedge or NON_SPECIALISING word added)
    rejoin_split_words: bool = True  # read "leona rd" as "leonard" when the original has "leonard"
    check_roles: bool = True  # the reordering rule refuses a rewrite atom of the same relation whose roles
    #                           differ (agent swapped with object or modifier; a modifier moved to another atom)
    symmetric_relations: frozenset[str] = SYMMETRIC_RELATIONS  # relations whose two sides may swap
    nli_threshold: float = 0.5     # entailment probability for "asserted" / "evidence entails"


@dataclass(frozen=True)
class Diagnostic:
    """A problem the gate found: its ``kind``, a readable ``detail`` and the atoms it concerns."""

    kind: str
    detail: str
    original: Atom | None = None
    rewrite: Atom | None = None

    def to_dict(self) -> dict:
        """The diagnostic as a JSON-ready dict (atoms as text)."""
        return {"kind": self.kind, "detail": self.detail,
                "original": self.original.text() if self.original else None,
                "rewrite": self.rewrite.text() if self.rewrite else None}


@dataclass(frozen=True)
class AtomJudgement:
    """Whether one original atom is preserved in the rewrite, by which rule, and its best match."""

    original: Atom
    preserved: bool
    via: str | None                 # "slots" | "reordered" | "nli" | None
    best: AtomComparison | None
    score: float


@dataclass
class Verdict:
    """The gate's answer for one rewrite: valid or not, a score, the atoms, judgements and diagnostics."""

    valid: bool
    score: float
    original_atoms: list[Atom]
    rewrite_atoms: list[Atom]
    judgements: list[AtomJudgement]
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def has(self, kind: str) -> bool:
        """True when a diagnostic of this ``kind`` was raised."""
        return any(d.kind == kind for d in self.diagnostics)

    def to_dict(self) -> dict:
        """The verdict as a JSON-ready dict."""
        return {
            "valid": self.valid, "score": self.score,
            "original_atoms": [a.to_dict() for a in self.original_atoms],
            "rewrite_atoms": [a.to_dict() for a in self.rewrite_atoms],
            "judgements": [{"original": j.original.text(), "preserved": j.preserved, "via": j.via,
                            "best": j.best.rewrite.text() if j.best else None,
                            "problems": list(j.best.problems) if j.best else ["no rewrite atom"]}
                           for j in self.judgements],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def render(atom: Atom) -> str:
    """A plain sentence for an atom (the NLI hypothesis when a claim has several atoms)."""
    relation = "is" if atom.relation == "be" else atom.relation
    negation = ("is not " if relation == "is" else "did not ") if atom.negated else ""
    if atom.negated and relation == "is":
        relation = ""
    words = [atom.subject, negation + relation, atom.object] + [m.value for m in atom.modifiers]
    return " ".join(w for w in words if w).strip() + " ."


class Gate:
    """``judge(claim, rewrite, evidence) -> Verdict`` (see the module docstring)."""

    def __init__(self, extractor: Extractor, matcher: Matcher | None = None,
                 nli: EntailmentModel | None = None, config: GateConfig | None = None) -> None:
        self.extractor = extractor
        self.matcher = matcher or Matcher()
        self.nli = nli
        self.config = config or GateConfig()
        self._atoms: dict[str, list[Atom]] = {}
        self._failed: dict[str, Exception] = {}

    def atoms(self, text: str) -> list[Atom]:
        """The extractor's atoms of ``text``, extracted once and then kept (a failed extraction raises again)."""
        if text in self._failed:
            raise self._failed[text]
        if text not in self._atoms:
            self._atoms[text] = self.extractor.extract(text)
        return self._atoms[text]

    def rewrite_text(self, claim: str, rewrite: str) -> str:
        """The rewrite as :meth:`judge` reads it (split words rejoined when the config says so)."""
        return rejoin_split_words(rewrite, claim) if self.config.rejoin_split_words else rewrite

    def prefetch(self, texts: list[str], chunk: int = 16, progress: bool = True) -> int:
        """Extract ``texts`` ahead of :meth:`judge`, ``chunk`` at a time where the extractor has
        ``extract_many`` (a local LLM decodes a batch for little more than one text); returns the failures,
        which :meth:`atoms` raises again instead of asking the model once more."""
        todo = [t for t in dict.fromkeys(texts) if t not in self._atoms and t not in self._failed]
        many = getattr(self.extractor, "extract_many", None)
        if many is None:
            return 0
        from tqdm.auto import tqdm

        with tqdm(total=len(todo), desc="extract atoms", unit="text", disable=not progress, mininterval=10) as bar:
            for start in range(0, len(todo), chunk):
                part = todo[start:start + chunk]
                for text, result in zip(part, many(part)):
                    if isinstance(result, Exception):
                        self._failed[text] = result
                    else:
                        self._atoms[text] = result
                bar.update(len(part))
        return len(self._failed)

    def judge(self, claim: str, rewrite: str, evidence: str = "") -> Verdict:
        """The :class:`Verdict` on whether ``rewrite`` keeps every atom of ``claim``."""
        rewrite = self.rewrite_text(claim, rewrite)
        original_atoms = self.atoms(claim)
        rewrite_atoms = self.atoms(rewrite)
        judgements = [self._judge_atom(atom, rewrite_atoms, claim, rewrite, original_atoms)
                      for atom in original_atoms]
        valid = all(j.preserved for j in judgements)
        score = sum(j.score for j in judgements) / len(judgements) if judgements else 0.0
        verdict = Verdict(valid, score, original_atoms, rewrite_atoms, judgements)
        verdict.diagnostics = self._diagnose(verdict, claim, rewrite, evidence)
        return verdict

    # --- preservation ---------------------------------------------------------------------------

    def _judge_atom(self, atom: Atom, rewrite_atoms: list[Atom], claim: str, rewrite: str,
                    original_atoms: list[Atom]) -> AtomJudgement:
        n_atoms = len(original_atoms)
        comparisons = [self.matcher.compare(atom, r, rewrite) for r in rewrite_atoms]
        best = max(comparisons, key=lambda c: (c.preserved, c.score()), default=None)
        if best is not None and best.preserved:
            return AtomJudgement(atom, True, "slots", best, 1.0)
        score = best.score() if best is not None else 0.0
        if (self.config.allow_reordering and self._reordered(atom, claim, rewrite, n_atoms)
                and (not self.config.check_roles or self._roles_kept(atom, rewrite_atoms, original_atoms))):
            return AtomJudgement(atom, True, "reordered", best, 1.0)
        if self.nli is not None:
            hypothesis = claim if n_atoms == 1 else render(atom)
            p = float(self.nli.entailment([rewrite], [hypothesis])[0])
            numbers_kept = numbers_in(hypothesis) <= numbers_in(rewrite)
            if p >= self.config.nli_threshold and numbers_kept:
                return AtomJudgement(atom, True, "nli", best, 1.0)
            score = (score + p) / 2
        return AtomJudgement(atom, False, None, best, score)

    def _reordered(self, atom: Atom, claim: str, rewrite: str, n_atoms: int) -> bool:
        """Every content word of the atom is in the rewrite, with the same negation and no hedge."""
        words = content(normalise(" ".join([atom.subject, atom.object] + [m.value for m in atom.modifiers])))
        words += content(normalise(atom.relation, relation=True))
        pool = list(content(normalise(rewrite))) + list(content(normalise(rewrite, relation=True)))
        for word in words:
            hit = next((p for p in pool if self.matcher.same_word(word, p)), None)
            if hit is None:
                return False
        if _negations(claim) % 2 != _negations(rewrite) % 2:
            return False
        if not numbers_in(claim) <= numbers_in(rewrite):
            return False
        if (set(normalise(rewrite)) - set(normalise(claim))) & NON_SPECIALISING:
            return False
        span_atom = atom.with_(span=claim)
        return not self.matcher.hedges(span_atom, Atom("_", "_", span=rewrite))

    def _roles_kept(self, atom: Atom, rewrite_atoms: list[Atom], original_atoms: list[Atom]) -> bool:
        """Who did what to whom is unchanged: some rewrite atom of the same relation does not exchange the
        atom's agent with another participant (voice may change: a passive's agent is its ``by`` phrase), and
        holds every modifier of the atom unless an atom of another of the claim's relations took it. With no
        rewrite atom of the same relation, the words alone decide (the reordering rule)."""
        lemmas = set(normalise(atom.relation, relation=True)) | set(atom.relation.lower().split())
        if not content(normalise(atom.relation, relation=True)) or lemmas & self.config.symmetric_relations:
            return True  # a copula (dropped as an auxiliary by normalise) or a reciprocal verb
        candidates = [r for r in rewrite_atoms
                      if self.matcher.compare_text(atom.relation, r.relation, relation=True).status.preserves]
        if not candidates:
            return True
        relations = [o.relation for o in original_atoms if o is not atom]
        others = [r for r in rewrite_atoms if all(r is not c for c in candidates) and any(
            self.matcher.compare_text(o, r.relation, relation=True).status.preserves for o in relations)]
        return any(self._same_roles(atom, r, others) for r in candidates)

    def _same_roles(self, atom: Atom, rewrite: Atom, other_atoms: list[Atom]) -> bool:
        agent, participants = _roles(atom)
        r_agent, r_participants = _roles(rewrite)
        newcomers = tuple(w for w in r_agent if not self._covers((w,), agent))
        if (newcomers and any(self._covers((w,), participants) for w in newcomers)
                and self._covers(agent, r_participants)):
            return False  # the agent and another participant exchanged places (a misparse seldom does both)
        r_words = r_participants + r_agent
        for modifier in atom.modifiers:
            if modifier.type == "agent":
                continue
            words = content(normalise(modifier.value))
            if words and not self._covers(words, r_words) and any(
                    self._covers(words, content(normalise(" ".join(m.value for m in o.modifiers))))
                    for o in other_atoms):
                return False  # the modifier now belongs to another predication
        return True

    def _covers(self, words: tuple[str, ...], pool: tuple[str, ...]) -> bool:
        return bool(words) and all(any(self.matcher.same_word(w, p) for p in pool) for w in words)

    # --- diagnostics ------------------------------------------------------------------------------

    def _diagnose(self, verdict: Verdict, claim: str, rewrite: str, evidence: str) -> list[Diagnostic]:
        found: list[Diagnostic] = []
        evidence_words = set(normalise(evidence)) | set(normalise(evidence, relation=True))
        claim_words = set(normalise(claim)) | set(normalise(claim, relation=True))
        used = set()
        for judgement in verdict.judgements:
            best = judgement.best
            if best is not None:
                used.add(id(best.rewrite))
            if judgement.preserved:
                continue
            if best is None:
                found.append(Diagnostic("ScopeLoss", "atom dropped: no rewrite atom", judgement.original))
                continue
            found.extend(self._scope_loss(best))
            found.extend(self._drift(best, evidence_words))
        for judgement in verdict.judgements:  # additions inside preserved atoms
            best = judgement.best
            if best is None or not (judgement.preserved and judgement.via == "slots"):
                continue
            for name, slot in best.slots.items():
                if slot.status in (SlotStatus.SPECIALISED, SlotStatus.ADDED) and slot.rewrite_words:
                    found.append(self._addition(" ".join(slot.rewrite_words), f"{name} adds",
                                                claim_words, evidence_words, evidence, best))
            for modifier in best.added_modifiers:
                found.append(self._addition(modifier.value, "modifier added", claim_words, evidence_words,
                                            evidence, best))
        for atom in verdict.rewrite_atoms:  # atoms no original atom was matched to
            if id(atom) in used:
                continue
            text = " ".join([atom.subject, atom.relation, atom.object] + [m.value for m in atom.modifiers])
            new = [w for w in content(normalise(text)) if w not in claim_words]
            if new:
                found.append(self._addition(render(atom), "atom added", claim_words, evidence_words,
                                            evidence, None, atom))
        return [d for d in found if d is not None]

    def _scope_loss(self, best: AtomComparison) -> list[Diagnostic]:
        out = []
        for name, slot in best.slots.items():
            if slot.status == SlotStatus.GENERALISED:
                what = ", ".join(f"{a} -> {b}" for a, b in slot.generalisations) or \
                    "dropped " + " ".join(slot.original_words)
                out.append(Diagnostic("ScopeLoss", f"{name} generalised ({what})", best.original, best.rewrite))
            elif slot.status == SlotStatus.DROPPED:
                out.append(Diagnostic("ScopeLoss", f"{name} dropped", best.original, best.rewrite))
        for modifier, slot in best.missing_modifiers:
            if slot.status in (SlotStatus.DROPPED, SlotStatus.GENERALISED):
                out.append(Diagnostic("ScopeLoss", f"modifier '{modifier.value}' {slot.status.value}",
                                      best.original, best.rewrite))
        if best.hedges:
            out.append(Diagnostic("ScopeLoss", "hedged by " + ", ".join(best.hedges), best.original,
                                  best.rewrite))
        return out

    def _drift(self, best: AtomComparison, evidence_words: set[str]) -> list[Diagnostic]:
        out = []
        changed = [(name, s) for name, s in best.slots.items() if s.status == SlotStatus.CHANGED]
        changed += [(f"modifier '{m.value}'", s) for m, s in best.missing_modifiers if s.status == SlotStatus.CHANGED]
        for name, slot in changed:
            new_supported = slot.rewrite_words and all(
                any(self.matcher.same_word(w, e) for e in evidence_words) for w in slot.rewrite_words)
            old_supported = slot.original_words and all(
                any(self.matcher.same_word(w, e) for e in evidence_words) for w in slot.original_words)
            if new_supported and not old_supported:
                out.append(Diagnostic("EvDrift", f"{name}: {' '.join(slot.original_words)} -> "
                                      f"{' '.join(slot.rewrite_words)} (as in the evidence)",
                                      best.original, best.rewrite))
        return out

    def _addition(self, text: str, what: str, claim_words: set[str], evidence_words: set[str],
                  evidence: str, best: AtomComparison | None, atom: Atom | None = None) -> Diagnostic | None:
        new = [w for w in content(normalise(text)) if w not in claim_words]
        if not new:
            return None
        supported = all(any(self.matcher.same_word(w, e) for e in evidence_words) for w in new)
        if not supported and self.nli is not None and evidence:
            supported = float(self.nli.entailment([evidence], [text])[0]) >= self.config.nli_threshold
        kind = "EvEnt" if supported else "UnverAdd"
        original = best.original if best is not None else None
        rewrite = best.rewrite if best is not None else atom
        return Diagnostic(kind, f"{what}: {text}", original, rewrite)


CIRCUMSTANCES = frozenset({"time", "quantity", "scope"})


def _roles(atom: Atom) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(agent words, words of the other participants): the subject is the agent in the active voice; a
    passive atom (one with an ``agent`` modifier, its ``by`` phrase) has that phrase as agent and its subject
    as a participant. Time, quantity and scope modifiers are circumstances, not participants."""
    agents = [m.value for m in atom.modifiers if m.type == "agent"]
    rest = [atom.object] + [m.value for m in atom.modifiers if m.type != "agent" and m.type not in CIRCUMSTANCES]
    if agents:
        agent, rest = " ".join(agents), rest + [atom.subject]
    else:
        agent = atom.subject
    return content(normalise(agent)), content(normalise(" ".join(rest)))


def _negations(text: str) -> int:
    return sum(1 for t in tokens(text) if t in NEGATORS)
