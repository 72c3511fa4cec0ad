"""Run a system under test over a pack in worker processes (``--workers N``).

A library shortcut for the local executor's pool
(:class:`effectbench.run.executors.local.LocalExecutor`): each worker process
builds its own provider from the pack's name, so it has its own state, and the
rows come back in serial order, the same rows as
:func:`effectbench.run.runner.evaluate` apart from timings (``latency_s``,
``started_at``, ``finished_at``). A shipped baseline is rebuilt in the worker
by name; any other system under test must be picklable.

A provider may hand start-up work it has already done to its workers: when it
has a ``worker_handoff()`` method, its result (picklable, or ``None``) is sent
to every worker, whose ``install()`` runs before the worker builds its pack.
The clinic pack hands over its live adversarial audit this way, so workers
do not repeat it.
"""

from __future__ import annotations

from collections.abc import Sequence

from effectbench.run.executors import execute
from effectbench.run.executors.local import LocalExecutor
from effectbench.run.runner import RunPlan, RunResult
from effectbench.schema import TaskSpec
from effectbench.seam import BenchmarkProvider, SystemUnderTest, WorkerHandoff

__all__ = ["WorkerHandoff", "evaluate_parallel"]


def evaluate_parallel(
    sut: SystemUnderTest,
    provider: BenchmarkProvider,
    *,
    trials: int = 10,
    seeds: Sequence[int] | None = None,
    tasks: Sequence[TaskSpec] | None = None,
    workers: int = 2,
) -> RunResult:
    """Run ``sut`` over ``provider`` in ``workers`` processes; rows come back in serial order.

    With ``workers=1`` the episodes run in this process.
    """
    plan = RunPlan.build(sut, provider, trials=trials, seeds=seeds, tasks=tasks)
    return execute(plan, LocalExecutor(workers))
