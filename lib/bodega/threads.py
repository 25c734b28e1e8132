"""The CPU thread policy of every entry point, decided in one place.

Torch here runs its intra-op work on GNU OpenMP (libgomp), and MKL follows it. Left to
its defaults, libgomp starts one thread per core and lets idle threads spin before they
sleep; beside another busy process the spinning threads steal the time their partner
needs, and training slowed 15-50 times (``benchmarks/contention.py``; book: Performance, threads). The
policy keeps one thread per CPU but makes idle threads sleep at once (a passive wait).
libgomp reads its variables once, when torch is first imported, so
:func:`apply_thread_policy` must run before that: the ``bodega`` command calls it before
any command imports torch, the grid passes :func:`thread_environment` to its notebook
processes, and the notebooks call it in their first code cell. Importing this module
changes nothing.
"""
from __future__ import annotations

import logging
import os
import sys
from dataclasses import dataclass
from typing import Mapping

from bodega.errors import BodegaError

log = logging.getLogger(__name__)

WAIT_POLICY = "PASSIVE"
THREADS_HELP = ("CPU threads of torch, MKL and OpenBLAS (default: OMP_NUM_THREADS when exported, else one per "
                "CPU); idle threads sleep instead of spinning")
COUNT_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@dataclass(frozen=True)
class ThreadPolicy:
    """How many threads a process computes on, and that idle ones sleep instead of spinning."""

    threads: int
    wait_policy: str = WAIT_POLICY

    def environment(self) -> dict[str, str]:
        """The variables the OpenMP, MKL and OpenBLAS runtimes read when they load."""
        count = str(self.threads)
        return {**{name: count for name in COUNT_VARIABLES}, "OMP_WAIT_POLICY": self.wait_policy}


def default_threads() -> int:
    """One thread per CPU this process may run on: torch's own count, so an idle machine is used
    as fully as before; the passive wait is what changes (book/performance_threads.md)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def resolve_policy(threads: int | None = None, environ: Mapping[str, str] | None = None) -> ThreadPolicy:
    """``threads`` when given; else ``OMP_NUM_THREADS`` as the user exported it; else the default."""
    if threads is not None:
        if threads < 1:
            raise BodegaError(f"--threads {threads}: give a positive number of threads (default: one per CPU)")
        return ThreadPolicy(threads)
    environ = os.environ if environ is None else environ
    exported = environ.get("OMP_NUM_THREADS", "").strip()
    if exported.isdigit() and int(exported) > 0:
        return ThreadPolicy(int(exported), environ.get("OMP_WAIT_POLICY", WAIT_POLICY))
    return ThreadPolicy(default_threads())


def thread_environment(threads: int | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with the policy's variables, for a child process."""
    base = dict(os.environ if base is None else base)
    return {**base, **resolve_policy(threads, base).environment()}


def apply_thread_policy(threads: int | None = None) -> ThreadPolicy:
    """Apply the policy to this process (and the children it starts) and return it.

    Call it before torch is imported: the wait policy cannot change afterwards (a warning
    says so); the thread count still can, through ``torch.set_num_threads``.
    """
    policy = resolve_policy(threads)
    os.environ.update(policy.environment())
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(policy.threads)
        log.warning("torch was imported before the thread policy: %d threads, but OpenMP keeps the wait "
                    "policy it started with; apply the policy first to avoid slowdowns on a busy machine",
                    policy.threads)
    return policy
