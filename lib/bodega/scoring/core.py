"""The BODEGA score of adversarial examples, per example and aggregated, as BODEGA computes it.

Per example (``BODEGAScore.compute``): 0 unless an adversarial text exists and the
decision changed; then semantic x character. The semantic part is the mean, over the
original's units, of the semantic model's score for (original unit, aligned adversarial
unit), each clipped to [0, 1], both texts given to the model as ``normalise_for_bert``
forms (``NOT_GENERATED`` when the adversarial text has no unit, as BODEGA sends). All
pairs of all examples go to the model in one call, so it can batch them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from bodega.errors import BodegaError
from bodega.scoring.punct import NOT_GENERATED, normalise_for_bert
from bodega.scoring.semantic import SemanticModel
from bodega.scoring.segmenter import Segmenter
from bodega.records import Summary
from bodega.scoring.text import align, character_score, prepare_pair


@dataclass(frozen=True)
class ExampleScore:
    """One example's scores: semantic and character are None for a failed attack, whose BODEGA score is 0."""

    success: bool
    semantic: float | None
    character: float | None
    bodega: float


def score_from_line(line: Any, where: str) -> ExampleScore:
    """One written score line (``scores.jsonl``, ``bodega score``'s output) read back strictly, or a one-line
    error naming ``where`` (file:line): Python's JSON reads NaN and infinity, and one resumed or tabulated
    would make the summary NaN and ``summary.json`` invalid JSON."""
    if not isinstance(line, dict):
        raise BodegaError(f"{where}: a score line must be a JSON object, found {type(line).__name__}")
    success = line.get("success")
    if not isinstance(success, bool):
        raise BodegaError(f"{where}: 'success' must be true or false, found {success!r}")
    values: dict[str, float | None] = {}
    for name in ("semantic", "character", "bodega"):
        value = line.get(name)
        if value is None and name != "bodega" and not success:
            values[name] = None
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
            raise BodegaError(f"{where}: '{name}' must be a number in [0, 1], found {value!r} (NaN and infinity "
                              "are not numbers); delete the file and score again")
        values[name] = float(value)
    return ExampleScore(success, values["semantic"], values["character"], values["bodega"])


def score_examples(task: str, originals: Sequence[str], adversarials: Sequence[str | None],
                   successes: Sequence[bool], semantic: SemanticModel) -> list[ExampleScore]:
    """Score every example; semantic and character are computed for successful ones only."""
    if not len(originals) == len(adversarials) == len(successes):
        raise ValueError(f"originals ({len(originals)}), adversarials ({len(adversarials)}) and "
                         f"successes ({len(successes)}) must have the same length")
    pairs: list[tuple[str, str]] = []
    spans: dict[int, tuple[int, int]] = {}
    characters: dict[int, float] = {}
    for i, (original, adversarial, success) in enumerate(zip(originals, adversarials, successes)):
        if not success:
            continue
        if adversarial is None:
            raise BodegaError(f"example {i}: marked successful but has no adversarial text; "
                              "set success to false or supply the text")
        start = len(pairs)
        units, characters[i] = _example(task, original, adversarial)
        pairs.extend(units)
        spans[i] = (start, len(pairs))
    values = _semantic_values(semantic, pairs)
    scores = []
    for i, success in enumerate(successes):
        if i not in spans:
            scores.append(ExampleScore(bool(success), None, None, 0.0))
            continue
        start, end = spans[i]
        sem = float(values[start:end].mean())
        scores.append(ExampleScore(True, sem, characters[i], sem * characters[i]))
    return scores


def _semantic_values(semantic: SemanticModel, pairs: list[tuple[str, str]]) -> np.ndarray:
    """The semantic model's scores of ``pairs``, clipped to [0, 1]: one finite number per pair, or an error
    naming the model (too few scores or a NaN would make the BODEGA score NaN or misaligned)."""
    if not pairs:
        return np.zeros(0)
    name = getattr(semantic, "name", type(semantic).__name__)
    try:
        values = np.asarray(semantic.score(pairs), dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as error:
        raise BodegaError(f"semantic model {name}: score(pairs) did not return numbers ({error}); it must return "
                          "one similarity in [0, 1] per pair") from None
    if values.shape != (len(pairs),) or not np.isfinite(values).all():
        problem = (f"{values.size} scores for {len(pairs)} pairs" if values.shape != (len(pairs),)
                   else f"{int((~np.isfinite(values)).sum())} scores that are not finite numbers")
        raise BodegaError(f"semantic model {name}: score(pairs) returned {problem}; it must return one finite "
                          "similarity in [0, 1] per pair")
    return np.clip(values, 0.0, 1.0)



def _example(task: str, original: str, adversarial: str) -> tuple[list[tuple[str, str]], float]:
    """The semantic model's pairs and the character score of one example (one segmenter memo)."""
    segmenter = Segmenter()
    source, target = prepare_pair(task, original, adversarial, segmenter)
    units = source.segments or [original]
    bert: dict[str, str] = {}

    def form(text: str) -> str:
        found = bert.get(text)
        if found is None:
            found = bert[text] = normalise_for_bert(text, segmenter)
        return found

    character = character_score(source, target)
    if not target.segments:
        return [(form(unit), NOT_GENERATED) for unit in units], character
    alignment = align(source.normalised or [source.whole], target.normalised)
    return [(form(unit), form(target.segments[j])) for unit, j in zip(units, alignment)], character


def summarise(scores: Sequence[ExampleScore], queries: Sequence[int], attack_seconds: float,
              scoring_seconds: float) -> Summary:
    """Aggregate: BODEGA = mean over all examples, confusion = success rate, the rest over successes."""
    if len(queries) != len(scores):
        raise ValueError(f"{len(queries)} query counts for {len(scores)} scored examples")
    n = len(scores)
    successful = [s for s in scores if s.success]

    def mean(values: list[float]) -> float | None:
        return float(np.mean(values)) if values else None

    return Summary(
        subset_size=n,
        success_score=len(successful) / n if n else 0.0,
        semantic_score=mean([s.semantic for s in successful if s.semantic is not None]),
        character_score=mean([s.character for s in successful if s.character is not None]),
        bodega_score=float(np.mean([s.bodega for s in scores])) if n else 0.0,
        queries_per_example=float(np.mean(queries)) if n else 0.0,
        total_attack_time=float(attack_seconds),
        time_per_example=float(attack_seconds) / n if n else 0.0,
        total_evaluation_time=float(scoring_seconds),
    )
