"""Which trained FC victim judges AtomEval's rewrites, and what is recorded about it.

The verifier is found among the trained victims (strongest kind first), trained when there is none, or named;
it answers from its saved verdicts first (:mod:`bodega.atomeval.verdicts`). Its ``victim.json`` and
``metrics.json`` are read here for the summaries.
"""
from __future__ import annotations

import logging
from pathlib import Path

from bodega.errors import BodegaError
from bodega.layout import METRICS, VICTIM_INFO

log = logging.getLogger(__name__)


VERIFIER_PREFERENCE = ("BERT", "GEMMA7B", "GEMMA2B", "BiLSTM")


def _refuse_another_task(folder: Path) -> None:
    """Refuse a victim trained for another task than FC: it would judge FEVER claims with their evidence as if it
    read them, and its verdicts would fill the tables without a word."""
    from bodega.records import read_victim_info

    task = read_victim_info(folder).task
    if task is not None and task != "FC":
        raise BodegaError(f"--verifier {folder}: a victim trained for {task}; AtomEval's verifier judges FC claims "
                          "with their evidence: give an FC victim, or auto")


def find_verifier(results_dir: str | Path, task: str = "FC") -> Path | None:
    """A trained ``<results>/models/<task>-<kind>`` folder with its weights, preferring the strongest kind."""
    from bodega.victims.modeldir import weights_problem

    models = Path(results_dir) / "models"
    for kind in VERIFIER_PREFERENCE:
        folder = models / f"{task}-{kind}"
        if (folder / VICTIM_INFO).exists() and (folder / METRICS).exists():
            problem = weights_problem(folder)
            if problem is None:
                return folder
            log.info("not using %s as the verifier: %s", folder, problem)  # committed metadata without weights
    return None


def get_verifier(verifier: str, results_dir: str | Path, data_dir: str | Path, profile: str = "cpu",
                 train_kind: str = "BERT", verdicts_dir: str | Path | None = None):
    """``auto``: a trained FC victim from the results, else one trained now; or a model folder path.

    Returns (verifier, folder). A victim trained here goes to ``<results>/atomeval/verifier/FC-<kind>-<profile>``
    so it never overwrites the grid's models. With ``verdicts_dir`` the verifier answers from the verdicts saved
    there first and loads its weights only for texts without one (:mod:`bodega.atomeval.verdicts`), so a folder
    holding only the victim's metadata can judge rewrites judged before.
    """
    from bodega.victims import load_victim, train_victim

    if verifier == "auto":
        folder = find_verifier(results_dir)
        if folder is None:
            folder = Path(results_dir) / "atomeval" / "verifier" / f"FC-{train_kind}-{profile}"
            log.info("no trained FC victim under %s/models: training %s into %s", results_dir, train_kind, folder)
            train_victim("FC", train_kind, data_dir, folder, profile=profile)
    else:
        folder = Path(verifier)
        _refuse_another_task(folder)
    if verdicts_dir is not None:
        from bodega.atomeval.verdicts import VerdictVerifier

        return VerdictVerifier(folder, verdicts_dir, profile), folder
    return load_victim(folder, profile=profile), folder


def verifier_description(folder: str | Path) -> dict:
    """The verifier's ``victim.json`` with portable paths, for a summary read on other machines.

    Victims trained before ``victim.json`` stored its base model as ``resource:<role>`` name the
    training machine's folders; a path under the current folder (the project root) becomes relative.
    """
    import json

    from bodega.paths import portable

    return portable(json.loads((Path(folder) / VICTIM_INFO).read_text(encoding="utf-8")), Path.cwd())


def verifier_metrics(folder: str | Path) -> dict:
    """The verifier's ``metrics.json`` (F1 and accuracy on its attack and dev splits)."""
    import json

    return json.loads((Path(folder) / METRICS).read_text(encoding="utf-8"))
