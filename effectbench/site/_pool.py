"""One process pool per build, shared by bundle verification and chart rendering.

Both are CPU-bound Python (the verifier, pandas) or a JS engine without a
batch API (vl-convert), so threads do not help and the build spreads them over
worker processes. The pool uses the *spawn* start method: a forked child of a
parent that has already rendered a chart hangs inside vl-convert. Workers start
lazily, only when a batch is big enough to repay their start-up (about a
second each for imports and the JS engine), and are shared so that start-up is
paid once per build.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from types import TracebackType
from typing import Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Batch(Generic[R]):
    """Results of chunked pool work, in the order of the items sent."""

    def __init__(self, futures: list[Future[list[R]]]) -> None:
        self._futures = futures

    def __iter__(self) -> Iterator[R]:
        """Yield each result as soon as its chunk (and every earlier one) is done."""
        for future in self._futures:
            yield from future.result()

    def wait(self) -> list[R]:
        """Return every result (waiting for the last chunk)."""
        return list(self)


def default_workers() -> int:
    """Return how many worker processes to use: the CPUs this process may run on (max 4)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    return max(1, min(4, n))


class Workers:
    """A lazily started spawn-context process pool (or none: ``size`` 1 runs inline)."""

    def __init__(self, size: int | None = None) -> None:
        self.size = default_workers() if size is None else max(1, size)
        self._executor: ProcessPoolExecutor | None = None

    @property
    def started(self) -> bool:
        """Whether worker processes are running (their start-up is already paid)."""
        return self._executor is not None

    def worth_it(self, n_jobs: int, threshold: int) -> bool:
        """Return whether ``n_jobs`` should go to the pool.

        A running pool takes any batch of a few jobs; starting one needs at
        least ``threshold`` jobs to pay back the workers' start-up.
        """
        if self.size < 2:
            return False
        return n_jobs >= (4 if self.started else threshold)

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            self._executor = ProcessPoolExecutor(self.size, mp_context=get_context("spawn"))
        return self._executor

    def submit_chunks(
        self, fn: Callable[[list[T]], list[R]], items: Sequence[T], per_worker: int = 8
    ) -> Batch[R]:
        """Send ``items`` in chunks to ``fn`` on the workers; return the running batch.

        About ``per_worker`` chunks per worker keep the workers evenly busy to the
        end and let the caller start on the first results early.
        """
        size = max(1, -(-len(items) // (self.size * per_worker)))
        pool = self._pool() if items else None
        futures: list[Future[list[R]]] = [
            pool.submit(fn, list(items[i : i + size]))
            for i in range(0, len(items), size)
            if pool is not None
        ]
        return Batch(futures)

    def close(self) -> None:
        """Stop the workers (waiting for them)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def __enter__(self) -> Workers:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
