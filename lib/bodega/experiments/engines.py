"""Where cells run: local worker threads, or a Dask distributed cluster, chosen by a flag.

Each cell already runs its notebook in a child process, so local workers are threads that wait
on children. Dask was chosen over Ray and SLURM/submitit because it is a pure-Python install,
runs the same code on a laptop (``LocalCluster``), on any set of machines (``dask-scheduler`` +
``dask-worker``) and on SLURM/PBS through ``dask-jobqueue``, and its futures support the dynamic
submission the grid needs (attack cells are only known once their victim is trained).
"""
from __future__ import annotations

import concurrent.futures as cf
from typing import Any, Callable, Iterable, Protocol

from bodega.errors import BodegaError


class Engine(Protocol):
    """What the grid runner schedules cells on: submit a call, wait for the first to finish, read its result."""

    workers: int

    def submit(self, fn: Callable, arg: Any, name: str) -> Any:
        """Start ``fn(arg)`` for the cell ``name``; return a future."""
        ...

    def wait_first(self, futures: Iterable[Any]) -> set:
        """The futures of ``futures`` that have finished, once at least one has."""
        ...

    def result(self, future: Any) -> Any:
        """The finished future's return value (its exception raised)."""
        ...

    def cancel(self) -> None:
        """Start no more cells (the runner is being stopped)."""

    def close(self) -> None:
        """Wait for running cells and release the workers."""
        ...


class LocalEngine:
    """``workers`` cells at a time on this machine."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self._pool = cf.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="grid-cell")

    def submit(self, fn: Callable, arg: Any, name: str) -> cf.Future:
        """Run ``fn(arg)`` on a worker thread."""
        return self._pool.submit(fn, arg)

    def wait_first(self, futures: Iterable[cf.Future]) -> set:
        """Block until one of ``futures`` finishes; return the finished ones."""
        done, _ = cf.wait(list(futures), return_when=cf.FIRST_COMPLETED)
        return done

    def result(self, future: cf.Future) -> Any:
        """The future's return value (its exception raised)."""
        return future.result()

    def cancel(self) -> None:
        """Drop the queued cells without waiting for the running ones."""
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Drop the queued cells and wait for the running ones."""
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskEngine:
    """Cells as Dask futures: on the scheduler at ``address``, or on a LocalCluster of ``workers``.

    The results, data and notebook folders must be visible at the same paths to every worker
    (a shared file system), as with any batch cluster.
    """

    def __init__(self, address: str | None = None, workers: int = 1, processes: bool = True) -> None:
        from distributed import Client, LocalCluster

        self._cluster = None
        self._submitted: list = []
        if address:
            self._client = Client(address)
        else:
            self._cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                         dashboard_address=None)
            self._client = Client(self._cluster)
        self.workers = max(1, sum(self._client.nthreads().values())) if address else workers

    def submit(self, fn: Callable, arg: Any, name: str):
        """Submit ``fn(arg)`` as an impure, never-retried task keyed by the cell's name."""
        future = self._client.submit(fn, arg, key=f"cell-{name}", pure=False, retries=0)
        self._submitted.append(future)
        return future

    def wait_first(self, futures: Iterable[Any]) -> set:
        """Block until one of ``futures`` finishes; return the finished ones."""
        from distributed import wait

        return set(wait(list(futures), return_when="FIRST_COMPLETED").done)

    def result(self, future: Any) -> Any:
        """The future's return value (its exception raised)."""
        return future.result()

    def cancel(self) -> None:
        """Cancel every submitted task that has not finished."""
        self._client.cancel([f for f in self._submitted if not f.done()], force=True)

    def close(self) -> None:
        """Close the client and the local cluster, if this engine started one."""
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()


def make_engine(name: str, workers: int, scheduler: str | None = None, processes: bool = True) -> Engine:
    """The engine a ``--engine`` name asks for (``local`` or ``dask``)."""
    if name == "local":
        return LocalEngine(workers)
    if name == "dask":
        return DaskEngine(scheduler, workers, processes)
    raise BodegaError(f"unknown engine {name!r}; choose local or dask")
