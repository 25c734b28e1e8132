"""TextFooler's search: words by deletion importance, each replaced by its most similar successful substitute."""
from __future__ import annotations

import numpy as np

from bodega.attacks.constraints import SentenceSimilarity
from bodega.attacks.searches.common import UNK, SearchState
from bodega.attacks.transformations import WordTransformation


def textfooler_search(state: SearchState, transformation: WordTransformation, similarity: SentenceSimilarity,
                      importance_threshold: float = -1.0, unk: str = UNK) -> str | None:
    """Importance by deletion (``unk``), then per word the most similar successful substitute.

    As OpenAttack's TextFooler (its default WordNet candidates, its importance score,
    window and thresholds), except: the sentence encoder is the profile's (MiniLM in
    place of the Universal Sentence Encoder); the short-text threshold applies to that
    text only (OpenAttack overwrites the attacker's threshold for every later text);
    part-of-speech agreement uses spaCy tags of a window around the word; the text
    keeps its case and spacing. The state's rules (the recipe's: filter words, ``similarity``, part-of-speech
    agreement) decide which words are ranked and which substitutes pass; of the successful ones the most
    similar by ``similarity`` wins, and a failing one is penalised by 1 as OpenAttack's failing thresholds are.
    """
    allowed = state.constraints.modifiable(state)
    if not allowed:
        return None
    texts = [state.text.replace({i: unk}) for i in allowed] + [state.text.text]
    probs = state.evaluator.probs(texts)
    original, leave = probs[-1], probs[:-1]
    label = int(np.argmax(original))
    top = original[label]
    moved = np.argmax(leave, axis=1)
    importance = top - leave[:, label] + (moved != label) * (leave.max(axis=1) - original[moved])
    order = sorted(range(len(allowed)), key=lambda k: -importance[k])
    changes: dict[int, str] = {}
    for k in order:
        if importance[k] <= importance_threshold:
            continue
        i = allowed[k]
        synonyms = [c for c in transformation(state.text, i, state.pos[i])
                    if c.lower() != state.text.words[i].text.lower()]
        if not synonyms:
            continue
        trials = [{**changes, i: s} for s in synonyms]
        new_probs = state.evaluator.probs([state.text.replace(t) for t in trials])
        passed = state.constraints.admitted(state, i, changes, trials)
        success = state.evaluator.goal.reached(new_probs) & passed
        if success.any():
            sims = similarity.window_scores(state, i, changes, trials)
            changes = trials[int(np.argmax(success * sims))]
            return state.text.replace(changes)
        penalised = new_probs[:, label] + (~passed)
        j = int(np.argmin(penalised))
        if penalised[j] < top:
            changes = trials[j]
    return None
