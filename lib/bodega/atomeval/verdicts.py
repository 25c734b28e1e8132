"""A verifier's verdicts kept on disk, keyed by its weights hash, its precision and the text.

Committed results never hold a verifier's weights (the encoder's are 419 MB), yet a reader must be able to
judge the committed rewrites again. So every verdict the experiment needs is appended to
``<verdicts dir>/<weights sha256>-<precision>.jsonl`` (one line per ``evidence ~ claim`` text: its sha256,
the label and, when the model gave it, P(refuted)), and :class:`VerdictVerifier` answers from that file
first. Only texts the file lacks go to the model, which is loaded when the first such text comes; without
the weights it names the missing texts and the fix. Retrained weights have a new hash, so they can never be
answered with an old model's verdicts, and the model is loaded in the file's precision (the one its victim
recorded) and refused if it computes in another, so a file only ever holds verdicts of its own precision.

The text key is :func:`bodega.victims.cache.text_key`, the prediction cache's. Decisions near P = 0.5 can
differ between CPU thread counts; the file keeps the first answer, so a rerun reproduces the committed tables.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bodega.errors import BodegaError, MissingFileError
from bodega.victims.cache import text_key


def text_hash(text: str) -> str:
    """The hex key of a verifier input text."""
    return text_key(text).hex()


@dataclass(frozen=True)
class Verdict:
    """A verifier's decision on one text: the label (1 = refuted) and P(refuted) when it was recorded."""

    label: int
    p_refuted: float | None = None


@dataclass
class VerdictFile:
    """An append-only JSON-lines file of one verifier's verdicts (one weights hash and precision)."""

    path: Path
    _verdicts: dict[str, Verdict] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if self.path.exists():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    row = json.loads(line)
                except ValueError:  # a line cut short by a crash: that text is asked again
                    continue
                self._verdicts[row["text"]] = Verdict(int(row["label"]), row.get("p_refuted"))

    def __len__(self) -> int:
        return len(self._verdicts)

    def get(self, text: str) -> Verdict | None:
        """The stored verdict on ``text``, or None."""
        return self._verdicts.get(text_hash(text))

    def add_many(self, texts: Sequence[str], verdicts: Sequence[Verdict]) -> int:
        """Append the verdicts of texts not stored yet (the first verdict stays); how many were new."""
        rows = []
        for text, verdict in zip(texts, verdicts, strict=True):
            key = text_hash(text)
            if key not in self._verdicts:
                self._verdicts[key] = verdict
                rows.append({"text": key, "label": verdict.label, **(
                    {"p_refuted": round(verdict.p_refuted, 6)} if verdict.p_refuted is not None else {})})
        if rows:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row) + "\n" for row in rows)
        return len(rows)


def verdict_path(verdicts_dir: str | Path, weights_hash: str, precision: str) -> Path:
    """Where the verdicts of these weights in this precision live."""
    return Path(verdicts_dir) / f"{weights_hash}-{precision}.jsonl"


class VerdictVerifier:
    """A trained victim folder as a verifier that answers from its saved verdicts, loading the weights only
    for texts without one (``loader(folder)`` gives the victim; default :func:`bodega.victims.load_victim` in
    the victim's recorded precision, the one its verdict file is named after)."""

    def __init__(self, folder: str | Path, verdicts_dir: str | Path, profile: str = "cpu",
                 loader: Callable[[Path], Any] | None = None) -> None:
        from bodega.victims.modeldir import read_victim_info

        self.folder = Path(folder)
        info = read_victim_info(self.folder)
        self.name = info.name or self.folder.name
        self.weights_hash = info.weights_hash
        self.precision = info.precision
        self.file = VerdictFile(verdict_path(verdicts_dir, self.weights_hash, self.precision))
        self.profile = profile
        self._loader = loader
        self._victim: Any = None
        self.saved = self.computed = 0  # verdicts read from the file / asked of the model

    def _model(self) -> Any:
        """The victim, loaded once; refused when its weights are absent or are not the recorded ones."""
        if self._victim is None:
            if self._loader is not None:
                victim = self._loader(self.folder)
            else:
                from bodega.victims import load_victim
                from bodega.victims.modeldir import weights_problem

                problem = weights_problem(self.folder)
                if problem is not None:
                    raise MissingFileError(
                        f"{self.folder}: {problem}, and {self.file.path} lacks verdicts on texts this run needs; "
                        f"put the trained weights in {self.folder} (bodega train) or judge only the saved rewrites")
                victim = load_victim(self.folder, profile=self.profile, precision=self.precision)
            if getattr(victim, "weights_hash", self.weights_hash) != self.weights_hash:
                raise MissingFileError(f"{self.folder}: loaded weights {victim.weights_hash[:12]} are not the "
                                       f"recorded {self.weights_hash[:12]}; train the verifier again")
            computes = getattr(victim, "precision", self.precision)
            if computes != self.precision:
                raise BodegaError(f"{self.folder}: the verifier computes in {computes}, but its verdicts in "
                                  f"{self.file.path} are {self.precision}'s; load it in {self.precision}")
            self._victim = victim
        return self._victim

    def predict(self, texts: list[str]) -> np.ndarray:
        """Labels (1 = refuted) of ``texts``: saved verdicts first, the model for the rest (then saved)."""
        found = {i: self.file.get(t) for i, t in enumerate(texts)}
        missing = [i for i, v in found.items() if v is None]
        self.saved += len(texts) - len(missing)
        if missing:
            asked = list(dict.fromkeys(texts[i] for i in missing))
            probabilities = np.asarray(self._model().predict_proba(asked))
            verdicts = [Verdict(int(p.argmax()), float(p[1])) for p in probabilities]
            self.file.add_many(asked, verdicts)
            self.computed += len(asked)
            found.update({i: self.file.get(texts[i]) for i in missing})
        return np.array([found[i].label for i in range(len(texts))], dtype=int)


def recovered_verdicts(claims: Sequence[Any], predictions: Sequence[dict],
                       records: Sequence[dict]) -> tuple[list[str], list[Verdict]]:
    """A verifier's verdicts recovered from what it judged before: each claim's (objects with id, claim and
    evidence) from its attack-set ``predictions`` (id, predicted, p_positive), each judged rewrite's from its
    table record's ``flip``.

    Raises :class:`BodegaError` when a claim has no prediction, or when two records disagree on a text (the records
    then come from different weights).
    """
    from bodega.tasks import join_pair

    by_id = {str(p["id"]): p for p in predictions}
    out: dict[str, Verdict] = {}

    def put(text: str, verdict: Verdict) -> None:
        earlier = out.setdefault(text, verdict)
        if earlier.label != verdict.label:
            raise BodegaError(f"two verdicts on one text ({text[:60]!r}...): the records are not one verifier's")

    for claim in claims:
        prediction = by_id.get(str(claim.id))
        if prediction is None:
            raise BodegaError(f"claim {claim.id} has no attack-set prediction; predict the whole attack split")
        put(join_pair(claim.evidence, claim.claim), Verdict(int(prediction["predicted"]), prediction.get("p_positive")))
    for record in records:
        if record.get("valid") is not None:  # the verifier judged this rewrite
            put(join_pair(record["evidence"], record["rewrite"]), Verdict(0 if record["flip"] else 1))
    return list(out), list(out.values())
