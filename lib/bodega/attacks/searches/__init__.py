"""Search methods, one module each: how an attack walks through the candidates a transformation offers.

Each search follows OpenAttack 2.1.1's algorithm as BODEGA ran it, with its defaults,
except where that code has a bug or wastes queries (every such place is named in the
docstring). All candidates of one step go to the victim in one batched call through an
:class:`~bodega.attacks.evaluation.Evaluator`, and every random draw comes from the
attack's own ``numpy.random.Generator``.

Where batching stops: a step whose texts depend on the answers to the previous one
(a PSO swarm state, a Genetic generation, the next word of TextFooler and of the greedy
searches) is its own call; and a loop that stops at the first text reaching the goal
(PWWS's greedy phase, DeepWordBug's single check) asks one text at a time, since a batch
would ask, and count, texts that the algorithm never asks; PWWS's greedy texts are known
in advance, so a batch-invariant victim computes them ahead (:class:`~bodega.attacks.evaluation.Lookahead`)
without their being asked.

Each search takes its rules as one list of :class:`~bodega.attacks.constraints.Constraint`; a cell's key
hashes only its own attacker's search module (and :mod:`~bodega.attacks.searches.common`), so this package
imports none of them.
"""
