"""The local executor: this process, or a pool of worker processes (``--workers N``).

With one worker the cells run here, one after another, on the plan's own
provider and system (exactly :func:`effectbench.run.runner.evaluate`). With more,
each worker process rebuilds the pack and the system from the run's
:class:`~effectbench.run.executors.worker.Job`, so it has its own state (on the
clinic pack its own record service and database files); cells are handed out
one at a time and come back as they finish.

Workers are started with ``forkserver`` (``spawn`` where that is unavailable),
never plain ``fork``: a worker must not inherit the parent's service threads
or open sockets.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Generator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from effectbench.errors import RunStopped
from effectbench.run.executors.worker import Outcome, from_wire, make_job, run_cell
from effectbench.run.runner import Cell, RunPlan, run_episode


def _context() -> Any:
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    ctx = multiprocessing.get_context("forkserver")
    # Workers fork from a server that has already imported the packs (no per-worker import).
    ctx.set_forkserver_preload(["effectbench.packs", "effectbench.run.executors.worker"])
    return ctx


class LocalExecutor:
    """Run cells in this process (one worker) or in ``workers`` processes of this machine."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers

    def run(self, plan: RunPlan, cells: Sequence[Cell]) -> Generator[tuple[Cell, Outcome]]:
        """Yield each cell's outcome as it finishes."""
        if self.workers == 1:
            specs = {task.task_id: task for task in plan.tasks}
            for cell in cells:
                yield (
                    cell,
                    run_episode(
                        plan.sut, plan.provider, specs[cell.task_id], cell.trial, cell.seed
                    ),
                )
            return
        if not cells:
            return
        job = make_job(plan.sut, plan.provider, where="--workers")
        pool = ProcessPoolExecutor(
            max_workers=min(self.workers, len(cells)),
            mp_context=_context(),
        )
        try:
            pending: dict[Future[str], Cell] = {
                pool.submit(run_cell, job, c.task_id, c.trial, c.seed): c for c in cells
            }
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    cell = pending.pop(future)
                    try:
                        answer = future.result()
                    except BrokenProcessPool:
                        raise RunStopped(
                            "a worker process of --workers died (killed, or out of memory)"
                        ) from None
                    yield cell, from_wire(answer, cell, "a worker process of --workers")
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
