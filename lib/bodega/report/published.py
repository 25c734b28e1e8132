"""The paper's published values (shipped as ``bodega/published/bodega.yaml``), read for showing beside ours.

Why a file and not constants: the paper's Tables 4 and 5 are not available offline, only what its text
states about them, and each statement must be traceable to its quote. This module reads that file into
typed records and says which table cell each statement describes; it never fills a gap: a cell the
text does not describe reads "not stated in the text".
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from bodega.attacks.base import canonical_name
from bodega.errors import BodegaError, MissingFileError, UnknownNameError
from bodega.tasks import TASKS
from bodega.victims.kinds import VICTIM_KINDS

NOT_STATED = "not stated in the text"
RERUN_LABEL = "independent re-run (not the paper's; 500-query cap, 3 victims)"
RERUN_VICTIMS = ("BiLSTM", "BERT", "GEMMA2B")
"""The victims the independent re-run averaged over, as its ``setup`` line names them (the shipped file is the
shared published-values file byte for byte, so the list cannot be a key of its own there)."""


@dataclass(frozen=True)
class Statement:
    """One statement of the paper's text: which cell it describes and the value or bound it gives."""

    id: str
    scope: str
    text: str
    task: str | None = None
    attacker: str | None = None  # an attacker, "all but <attacker>" or "best methods"
    measure: str | None = None  # bodega, confusion, semantic, character, queries, share_preserving
    value: float | None = None
    bound: str | None = None  # ">800", "<150", "~0.6"
    best_in_task: bool = False

    def covers(self, task: str, attacker: str, best: frozenset[str] = frozenset()) -> bool:
        """Whether the statement is about ``attacker`` on ``task`` (``best``: our best attackers there)."""
        if self.task != task or self.attacker is None:
            return False
        if self.attacker.startswith("all but "):
            return attacker != self.attacker.removeprefix("all but ")
        if self.attacker == "best methods":
            return attacker in best
        return attacker == self.attacker

    def stated(self) -> str:
        """What the paper gives: ``0.56``, ``>800``, ``best of the task`` or both."""
        parts = ([f"{self.value:g}"] if self.value is not None else []) + ([self.bound] if self.bound else [])
        if self.best_in_task:
            parts.append("best of the task")
        return ", ".join(parts) or NOT_STATED


@dataclass(frozen=True)
class Published:
    """The paper's published values: Table 3's F1, the prose statements with measures, and the rerun's scores."""

    citation: str
    table3_f1: dict[str, dict[str, float]]
    statements: tuple[Statement, ...]
    rerun_setup: str
    rerun_bodega: dict[str, float]
    rerun_victims: tuple[str, ...] = ()
    """The victims the independent re-run averaged over."""

    def statement(self, statement_id: str) -> Statement:
        """The statement with ``statement_id``; an unknown id raises, listing the known ones."""
        for statement in self.statements:
            if statement.id == statement_id:
                return statement
        raise UnknownNameError(f"no statement {statement_id!r} in the published values; known: "
                               f"{', '.join(s.id for s in self.statements)}")

    def about(self, task: str, attacker: str, best: frozenset[str] = frozenset()) -> list[Statement]:
        """Statements with a measure that describe Table 4's row (task, attacker)."""
        return [s for s in self.statements if s.measure and s.covers(task, attacker, best)]

    def f1(self, task: str, victim: str) -> float | None:
        """Table 3's F1 of ``victim`` on ``task``, or None where the paper has none."""
        return self.table3_f1.get(task, {}).get(victim)


def _statement(entry: dict, where: str) -> Statement:
    if "id" not in entry or "scope" not in entry:
        raise BodegaError(f"{where}: a prose entry needs `id` and `scope`: {entry}")
    value = entry.get("value")
    return Statement(id=entry["id"], scope=entry["scope"], text=entry.get("text", ""), task=entry.get("task"),
                     attacker=entry.get("attacker"), measure=entry.get("measure"),
                     value=None if value is None else float(value), bound=entry.get("bound"),
                     best_in_task=bool(entry.get("best_in_task", False)))


def load_published(path: str | Path | None = None) -> Published:
    """Read the published values: the copy shipped with the package, or the file at ``path``."""
    from bodega.published import BODEGA_YAML

    path = Path(path) if path is not None else BODEGA_YAML
    if not path.is_file():
        raise MissingFileError(
            f"published values not found at {path}; pass no path (the notebook parameter `published` set to None) "
            f"to read the copy shipped with the package, {BODEGA_YAML}")
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    missing = [key for key in ("table3_f1", "prose") if key not in data]
    if missing:
        raise BodegaError(f"{path}: no {', '.join(missing)}; is it BODEGA's published-values file?")
    rerun = data.get("independent_rerun_macabeu", {})
    try:  # the file's names enter here: each made canonical once
        table3 = {TASKS.canonical(t): {VICTIM_KINDS.canonical(v): float(f) for v, f in row.items()}
                  for t, row in data["table3_f1"].items()}
        bodega = {canonical_name(a): float(v) for a, v in rerun.get("bodega_mean", {}).items()}
    except UnknownNameError as error:
        raise BodegaError(f"{path}: {error}") from None
    return Published(citation=data.get("paper", {}).get("citation", ""), table3_f1=table3,
                     statements=tuple(_statement(e, f"{path}: prose") for e in data["prose"]),
                     rerun_setup=rerun.get("setup", ""), rerun_bodega=bodega,
                     rerun_victims=RERUN_VICTIMS if rerun else ())
