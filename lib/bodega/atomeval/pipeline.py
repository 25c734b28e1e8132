"""The rewriter experiment in one resumable command: generate every rewrite, judge it with every verifier, and
tabulate the paper's Tables 5-9 (``bodega atomeval experiment``).

Nothing is done twice: LLM rewrites are kept in the rewrite cache by (model hash and precision, prompt, claim)
(:mod:`bodega.atomeval.rewrite_cache`), verdicts in the verdict files by (verifier weights hash, precision, text)
(:mod:`bodega.atomeval.verdicts`), and a (verifier, rewriter) tables run whose every family summary exists is
kept unless ``rejudge`` is set. A run cut short therefore goes on where it stopped.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from bodega.atomeval.run_files import is_complete

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExperimentPlan:
    """What to run: rewriter specs (``rules``, ``transformers:<role or path>``, ``openai:<model>[@<url>]``),
    verifier folders, the claims, and where the caches and outputs go."""

    rewriters: Sequence[str]
    verifiers: Sequence[str | Path]
    data: str | Path = "data/FC"
    split: str = "attack"
    n_claims: int = 0
    families: Sequence[str] = ("colloquial", "deseption", "factmix", "omission", "advadd")
    tables: str | Path = "results/atomeval/tables"
    rewrite_cache: str | Path = "results/atomeval/rewrites.jsonl"
    verdicts: str | Path = "results/atomeval/verdicts"
    costs: str | Path = "results/atomeval"
    precision: str = "auto"
    batch_size: int = 16
    threads: int | None = None
    profile: str = "cpu"
    with_surface: bool = True
    rejudge: bool = False
    extra_costs: dict[str, str] = field(default_factory=dict)


def rewriter_label(spec: str) -> str:
    """The folder and table label of a rewriter spec: ``rules``, the resource role or folder name of a local
    model or of saved rewrites, the model name of an endpoint."""
    kind, _, rest = spec.partition(":")
    if kind in ("transformers", "saved"):
        return Path(rest).name
    if kind == "openai":
        return rest.partition("@")[0]
    return spec


def cost_path(plan: ExperimentPlan, spec: str) -> Path:
    """Where an LLM rewriter's decoding cost goes (``cost-<label>-<precision>.json``)."""
    return Path(plan.costs) / f"cost-{rewriter_label(spec)}-{plan.precision}.json"


def _complete(folder: Path, families: Sequence[str]) -> bool:
    return all(is_complete(folder, family) for family in families)


def run_experiment(plan: ExperimentPlan, tabulate: Callable[..., dict], out: str | Path | None = None,
                   verifier_loader: Callable[[Path], Any] | None = None) -> dict:
    """Generate, judge and tabulate (see the module docstring); returns ``tabulate``'s result (the report's
    :func:`~bodega.report.atomeval_comparison.main_table`, passed in because the report sits above AtomEval),
    also written to ``out`` when given. ``verifier_loader`` loads a verifier's weights (tests pass a stand-in)."""
    from bodega.atomeval.factories import make_gate, make_rewriter
    from bodega.atomeval.runs import generate_rewrites, run_tables
    from bodega.atomeval.fever import refuted_claims
    from bodega.atomeval.verdicts import VerdictVerifier

    claims = refuted_claims(plan.data, plan.split, plan.n_claims or None)
    rewriters = {}
    for spec in plan.rewriters:
        rewriter = make_rewriter(spec, plan.threads, plan.rewrite_cache, plan.precision, plan.batch_size)
        if getattr(rewriter, "cache", None) is not None:  # an LLM: decode what the cache lacks, with its cost
            generate_rewrites(claims, rewriter, plan.families, cost_path(plan, spec))
        rewriters[rewriter_label(spec)] = rewriter
    gate = make_gate(plan.profile)
    for folder in map(Path, plan.verifiers):
        verifier = VerdictVerifier(folder, plan.verdicts, plan.profile, loader=verifier_loader)
        for label, rewriter in rewriters.items():
            target = Path(plan.tables) / folder.name / label
            if _complete(target, plan.families) and not plan.rejudge:
                log.info("%s: judged before; kept (rejudge to judge again)", target)
                continue
            run_tables(claims, verifier, folder.name, gate, rewriter, plan.families, target, plan.profile,
                       with_surface=plan.with_surface)
        log.info("%s: %d verdicts saved before, %d computed now", folder.name, verifier.saved, verifier.computed)
    costs = {rewriter_label(spec): str(cost_path(plan, spec)) for spec in plan.rewriters
             if cost_path(plan, spec).exists()}
    return tabulate(plan.tables, list(plan.verifiers), list(rewriters), {**costs, **plan.extra_costs}, out, gate)
