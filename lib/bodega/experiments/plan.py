"""A grid's plan: which trainings it trains, which attack cells it runs and which it leaves out and why.

Built once from a :class:`~bodega.experiments.spec.GridSpec` (:func:`build_plan`, reached as ``spec.plan``)
and read by the cells, the runner, ``bodega grid status``, the book and the benchmarks, so that no reader
works the grid's skip and sample-size rules out again. Plain data: it names cells, it hashes and reads nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bodega.attacks.base import attacker_folder_name
from bodega.layout import CellName, run_name

if TYPE_CHECKING:
    from bodega.experiments.spec import GridSpec


@dataclass(frozen=True)
class PlannedVictim:
    """One training of a victim that the grid trains (it has at least one attack cell to run)."""

    task: str
    victim: str
    training: int
    alone: str | None = None
    """Why it trains with no other cell beside it (an ``alone`` rule), or None."""

    @property
    def name(self) -> str:
        """Its cell's and folder's name (``FC-BERT``, ``FC-BERT-t1``)."""
        return str(CellName(self.task, self.victim, training=self.training))


@dataclass(frozen=True)
class PlannedAttack:
    """One attack cell the grid runs."""

    task: str
    victim: str
    attacker: str
    scenario: str
    seed: int
    training: int
    examples: int | None
    """Its sample size (None: every row of the attack set)."""

    @property
    def name(self) -> str:
        """Its cell's and run folder's name (``FC-BERT-PWWS-U``, ``FC-BERT-PWWS-U-t1``)."""
        return run_name(self.task, self.victim, attacker_folder_name(self.attacker), self.scenario, self.seed,
                        self.training)


@dataclass(frozen=True)
class SkippedAttack:
    """An attack cell a ``skip`` rule leaves out, with the rule's reason."""

    task: str
    victim: str
    attacker: str
    scenario: str
    training: int
    reason: str


@dataclass(frozen=True)
class GridPlan:
    """Every training, attack cell and left-out cell of one grid, in the grid's order (task, victim, training;
    then attacker, scenario, seed)."""

    victims: tuple[PlannedVictim, ...]
    attacks: tuple[PlannedAttack, ...]
    skipped: tuple[SkippedAttack, ...]
    """Every cell of every training that a ``skip`` rule leaves out."""
    trainings: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    """(task, victim) -> its training seeds, the first being the one every victim of the grid has."""

    @property
    def n_attack_cells(self) -> int:
        """How many attack cells run, over every seed and training."""
        return len(self.attacks)

    def first_training(self, task: str, victim: str) -> int:
        """The training seed of a victim's first training, the one every victim of the grid has."""
        return self.trainings[(task, victim)][0]

    def attacks_of(self, task: str, victim: str, training: int | None = None) -> tuple[PlannedAttack, ...]:
        """The attack cells of one training of a victim (None: its first training); none where the grid does not
        have the victim on that task."""
        if (task, victim) not in self.trainings:
            return ()
        training = self.first_training(task, victim) if training is None else training
        return tuple(cell for cell in self.attacks
                     if (cell.task, cell.victim, cell.training) == (task, victim, training))

    def left_out(self) -> tuple[SkippedAttack, ...]:
        """The left-out cells as a reader lists them: those of each victim's first training (which stand for its
        other trainings' same cells), then those of other trainings whose first training runs them."""
        firsts = [cell for cell in self.skipped if cell.training == self.first_training(cell.task, cell.victim)]
        covered = {(c.task, c.victim, c.attacker, c.scenario) for c in firsts}
        return tuple(firsts) + tuple(cell for cell in self.skipped if cell.training != self.first_training(
            cell.task, cell.victim) and (cell.task, cell.victim, cell.attacker, cell.scenario) not in covered)

    def names(self, attacks: bool = True) -> set[str]:
        """The name of every cell the grid runs: each training it trains, and with ``attacks`` its attack cells."""
        return {cell.name for cell in self.victims} | ({cell.name for cell in self.attacks} if attacks else set())


def build_plan(spec: GridSpec) -> GridPlan:
    """The plan of ``spec``: its skip, sample-size and ``alone`` rules applied to every cell once."""
    trainings = {(task, victim): spec.training.seeds_for(task, victim)
                 for task in spec.tasks for victim in spec.victims}
    victims, attacks = [], []
    for (task, victim), seeds in trainings.items():
        for training in seeds:
            cells = [PlannedAttack(task, victim, attacker, scenario, seed, training,
                                   spec.examples_of(task, victim, attacker, scenario, training))
                     for attacker in spec.attackers for scenario in spec.scenarios for seed in spec.seeds
                     if spec.skip_reason(task, victim, attacker, scenario, training) is None]
            if cells:  # a training none of whose attack cells runs is not trained
                victims.append(PlannedVictim(task, victim, training, spec.alone_reason(task, victim, training)))
                attacks += cells
    skipped = [SkippedAttack(task, victim, attacker, scenario, training, reason)
               for (task, victim), seeds in trainings.items() for training in seeds
               for attacker in spec.attackers for scenario in spec.scenarios
               if (reason := spec.skip_reason(task, victim, attacker, scenario, training)) is not None]
    return GridPlan(tuple(victims), tuple(attacks), tuple(skipped), trainings)
