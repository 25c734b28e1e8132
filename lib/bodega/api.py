"""The Python API: wrap any classifier in one call, attack texts in memory or a task's attack set, get Python objects.

In the spirit of OpenAttack's ``Classifier``/``AttackEval`` and TextAttack's
``ModelWrapper``/``Attacker``::

    import bodega
    victim = bodega.wrap(my_sklearn_pipeline, "PR2")     # or pass the pipeline to attack() directly
    report = bodega.attack(victim, texts, labels, task="PR2", attacker="DeepWordBug")
    print(report.summary.bodega_score)

:func:`attack` runs the same runner as ``bodega attack`` (:func:`bodega.attacks.runner.attack_examples`):
the same query accounting, 512-token trimming, records and BODEGA scoring, on the texts in memory
and with the attacker object given. Without ``out_dir`` nothing is written; with ``out_dir`` the run
is kept in that folder and resumable, as on the command line.
"""
from __future__ import annotations

import hashlib
import logging
import pickle
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from bodega.layout import VICTIM_INFO
from bodega.errors import BodegaError
from bodega.records import AttackRecord, AttackReport

__all__ = ["AttackRecord", "AttackReport", "attack", "task_texts", "wrap"]

log = logging.getLogger(__name__)

Classifier = Any
"""What :func:`wrap` accepts: see its docstring."""


class FunctionClassifier:
    """A function ``texts -> [n, 2]`` probabilities seen as an object with ``predict_proba``."""

    def __init__(self, function: Callable[[list[str]], Any]):
        self.function = function

    def predict_proba(self, texts: list[str]) -> Any:
        """The function's answer for ``texts``, as it gives it: the victim wrapper turns it into floats and checks
        its shape, naming the victim when it cannot."""
        return self.function(texts)


class PipelineClassifier:
    """A transformers text-classification ``pipeline``, its label meaning non-credible chosen as for ``hf:``."""

    def __init__(self, pipe, positive_label: str | int | None = None, batch_size: int = 16):
        from bodega.victims.external import positive_index

        self.pipe = pipe
        self.labels = {int(k): str(v) for k, v in pipe.model.config.id2label.items()}
        self.positive = positive_index(self.labels, positive_label, f"pipeline {pipe.model.name_or_path}")
        self.batch_size = batch_size
        tokenizer = getattr(pipe, "tokenizer", None)
        self.trim_tokenizer = tokenizer if getattr(tokenizer, "is_fast", False) else None

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        """[P(credible), P(non-credible)] per text: the positive label's score, and the rest summed."""
        out = np.zeros((len(texts), 2), dtype=np.float64)
        answers = self.pipe(list(texts), top_k=None, truncation=True, batch_size=self.batch_size)
        positive = self.labels[self.positive]
        for row, scores in enumerate(answers):
            by_label = {entry["label"]: float(entry["score"]) for entry in scores}
            out[row, 1] = by_label[positive]
            out[row, 0] = sum(value for label, value in by_label.items() if label != positive)
        return out


def _is_sklearn(obj: object) -> bool:
    return callable(getattr(obj, "predict_proba", None)) and callable(getattr(obj, "get_params", None))


def _check_sklearn_classes(model) -> None:
    """A scikit-learn model's predict_proba columns follow ``classes_``: they must be [0, 1]."""
    classes = [int(c) if isinstance(c, (int, np.integer)) else c for c in getattr(model, "classes_", [0, 1])]
    if classes != [0, 1]:
        raise BodegaError(f"the scikit-learn model was fitted on classes {classes}; fit it on labels 0 "
                          "(credible) and 1 (non-credible), so that predict_proba's column 1 is P(non-credible)")


def _sklearn_version(model) -> str:
    """A version naming a fitted scikit-learn model by its pickled bytes, so that a kept run can resume."""
    return "sklearn-" + hashlib.sha256(pickle.dumps(model)).hexdigest()[:16]


def wrap(classifier: Classifier, task: str, *, name: str | None = None, version: str | None = None,
         positive_label: str | int | None = None, trim_tokenizer: Any = None, profile: str = "cpu"):
    """Any classifier as a victim the attackers, query accounting and scoring accept.

    ``classifier`` is one of:

    * an object with ``predict_proba(texts) -> [n, 2]`` (column 1 = P(non-credible)), a fitted
      scikit-learn pipeline included (its version is a hash of its pickled bytes);
    * a function ``texts -> [n, 2]``;
    * a transformers text-classification ``pipeline`` (the label meaning non-credible is read
      from ``id2label`` or given as ``positive_label``);
    * a folder: one trained by ``bodega train`` (with ``victim.json``) or a transformers
      sequence-classification folder (with ``config.json``), or an ``hf:``/``py:`` spec string;
    * a victim already wrapped (returned unchanged).

    ``version`` names the model for the prediction cache and for resuming a kept run (default: the
    object's ``version`` attribute); the cache keys by it together with what the classifier runs (a
    function's source and closure, an object's pickled state, a pipeline's weights), so two functions
    given one version never share predictions, and one whose source cannot be read is not cached.
    ``trim_tokenizer`` (a fast tokenizer or its folder) cuts texts after the 512th token as BODEGA
    does; without one, texts are attacked untrimmed. ``task`` is the task the victim will be attacked
    on (FC's claim/evidence pairs are split for transformers folders).
    """
    from bodega.victims.external import HF_PREFIX, CallableVictim, is_spec, open_victim

    if isinstance(classifier, (str, Path)):
        text = str(classifier)
        if not is_spec(text) and (Path(text).expanduser() / "config.json").is_file() \
                and not (Path(text).expanduser() / VICTIM_INFO).is_file():
            text = HF_PREFIX + text
        options = {"positive_label": positive_label, "version": version,
                   "trim_tokenizer": str(trim_tokenizer) if trim_tokenizer is not None else None}
        return open_victim(text, task, profile, **{k: v for k, v in options.items() if v is not None})
    if hasattr(classifier, "weights_hash") and callable(getattr(classifier, "predict_proba", None)):
        return classifier
    if trim_tokenizer is not None and isinstance(trim_tokenizer, (str, Path)):
        from transformers import AutoTokenizer

        from bodega.hf_folders import refuse_custom_code

        refuse_custom_code(trim_tokenizer, "trim_tokenizer")
        trim_tokenizer = AutoTokenizer.from_pretrained(trim_tokenizer, trust_remote_code=False)
    if hasattr(classifier, "model") and hasattr(classifier, "task") and callable(classifier) \
            and not callable(getattr(classifier, "predict_proba", None)):
        obj = PipelineClassifier(classifier, positive_label)
        label = name or f"pipeline:{classifier.model.name_or_path}"
    elif callable(getattr(classifier, "predict_proba", None)):
        obj = classifier
        label = name or type(classifier).__name__
        if _is_sklearn(classifier):
            _check_sklearn_classes(classifier)
            if version is None and getattr(classifier, "version", None) is None:
                version = _sklearn_version(classifier)
    elif callable(classifier):
        obj = FunctionClassifier(classifier)
        label = name or getattr(classifier, "__name__", "function")
    else:
        raise BodegaError(f"cannot wrap a {type(classifier).__name__}: give an object with predict_proba(texts), "
                          "a function texts -> [n, 2], a transformers pipeline or a model folder")
    if positive_label is not None and not isinstance(obj, PipelineClassifier):
        raise BodegaError("positive_label applies to transformers pipelines and folders; predict_proba's "
                          "column 1 must be P(non-credible)")
    from bodega.identity import object_identity, weights_identity

    identity = weights_identity(classifier.model) if isinstance(obj, PipelineClassifier) \
        else object_identity(classifier)
    return CallableVictim(obj, label, task, version, trim_tokenizer, identity)


def _is_binary_label(label: object) -> bool:
    """Whether ``label`` is 0 or 1 (as a number or a numeric bool), not "fake", 0.5 or NaN."""
    return isinstance(label, (int, float, np.integer, np.floating)) and label in (0, 1)


def _examples(texts: Sequence[str], labels: Sequence[int]) -> list:
    """The texts and their gold labels as rows (ids ``text-<i>``), checked."""
    from bodega.data import Example

    texts, labels = list(texts), list(labels)
    if len(texts) != len(labels):
        raise BodegaError(f"{len(texts)} texts but {len(labels)} labels; give one label (0 credible, "
                          "1 non-credible) per text")
    if not texts:
        raise BodegaError("no texts to attack (an empty list); give at least one text and its label")
    if any(not isinstance(t, str) for t in texts):
        raise BodegaError("texts must be a list of strings")
    for i, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise BodegaError(f"text {i} holds a character UTF-8 cannot write ({error.reason} at position "
                              f"{error.start}); remove it or decode the text properly") from None
    bad = [label for label in labels if not _is_binary_label(label)]
    if bad:
        raise BodegaError(f"labels must be 0 (credible) or 1 (non-credible), found {bad[:3]}")
    return [Example(int(label), f"text-{i}", text) for i, (text, label) in enumerate(zip(texts, labels))]


def attack(victim: Classifier, texts: Sequence[str] | None = None, labels: Sequence[int] | None = None, *,
           task: str, attacker: Any = "PWWS", targeted: bool = False, n_examples: int | None = None,
           query_budget: int | None = None, seed: int = 0, profile: str = "cpu", backend: str = "native",
           attacker_options: dict | None = None, data: str | Path | None = None, out_dir: str | Path | None = None,
           semantic: Any = None, progress: bool = False, constraints: Sequence[Any] = ()) -> AttackReport:
    """Attack ``texts`` (with gold ``labels``, 1 = non-credible) or the task's attack set, and score the run.

    ``victim`` is anything :func:`wrap` accepts (it is wrapped here when needed). Without
    ``texts``, the examples are ``<data>/attack.tsv`` (``data`` defaults to ``data/<TASK>``).
    ``attacker`` is a name (``PWWS``, ``DeepWordBug``, ``BERT-ATTACK``, ...), a ``py:`` spec, or
    an object with ``attack(victim, text, goal, rng)`` (the ``bodega.attacks.Attacker`` protocol).
    ``targeted`` selects BODEGA's targeted scenario (non-credible texts the victim gets right,
    pushed to credible). ``out_dir`` keeps the run folder (records, summary; resumable);
    without it nothing is left on disk. ``semantic`` replaces the profile's semantic model in
    scoring (an object with ``score(pairs)``). ``constraints`` are rules of your own
    (:class:`bodega.attacks.constraints.Constraint` objects) that every search of a named
    attacker obeys on top of its own; the run's settings record them by ``repr``. Returns an
    :class:`AttackReport`.
    """
    from dataclasses import replace

    from bodega.attacks.run_folder import attack_into
    from bodega.attacks.run_inputs import as_attacker
    from bodega.attacks.runner import AttackOptions, attack_examples
    from bodega.data import read_tsv
    from bodega.io import file_sha256
    from bodega.names import attacker_name, profile_name
    from bodega.names import task_name as canonical_task

    task_name, profile = canonical_task(task), profile_name(profile)  # the caller's spelling, made canonical once
    attacker = attacker_name(attacker) if isinstance(attacker, str) else attacker
    wrapped = wrap(victim, task_name, profile=profile)
    if getattr(wrapped, "task", task_name) != task_name:
        raise BodegaError(f"the victim was wrapped for task {wrapped.task}, not {task_name}; "
                          f"wrap it with bodega.wrap(classifier, {task_name!r})")
    if texts is None and labels is not None:
        raise BodegaError("labels given without texts; pass texts too, or neither to attack the task's attack set")
    if texts is not None and labels is None:
        raise BodegaError("texts need labels (0 credible, 1 non-credible), one per text")
    recorded = {**(attacker_options or {}), **({"constraints": [repr(c) for c in constraints]} if constraints else {})}
    options = AttackOptions(targeted=targeted, n_examples=n_examples, query_budget=query_budget, seed=seed,
                            profile=profile, backend=backend, attacker_options=recorded, semantic=semantic,
                            progress=progress)
    if texts is not None:
        examples, identity = _examples(texts, labels), None
    else:
        data_file = (Path(data) if data is not None else Path("data") / task_name) / "attack.tsv"
        examples = read_tsv(data_file)
        identity = {"attack_sha256": file_sha256(data_file), "rows": len(examples)}
    if constraints and not isinstance(attacker, str):
        raise BodegaError("constraints apply to attackers given by name; give your attacker object its rules itself")
    engine = as_attacker(attacker, replace(options, attacker_options={**recorded, "constraints": list(constraints)})
                         if constraints else options)
    if out_dir is None:
        return attack_examples(task_name, wrapped, engine, examples, options, data=identity)
    return attack_into(out_dir, task_name, wrapped, engine, examples, options, data=identity)


def task_texts(task: str, split: str = "attack", data_root: str | Path = "data") -> tuple[list[str], list[int]]:
    """The texts and labels of a prepared task's split (``<data_root>/<TASK>/<split>.tsv``)."""
    from bodega.data import read_tsv
    from bodega.tasks import get_task

    rows = read_tsv(Path(data_root) / get_task(task).name / f"{split}.tsv")
    return [row.text for row in rows], [int(row.label) for row in rows]
